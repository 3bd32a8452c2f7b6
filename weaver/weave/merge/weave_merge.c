/* weave_merge.c - the run-time template's rows and bodies copied into the target (weave_merge.h). */
#include "weave_merge_int.h"
#include "image_body.h"
#include "lt_cursor.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "sig.h"
#include "weave_emit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* II.23.1.15 visibility: Public -> NotPublic, NestedPublic -> NestedAssembly. */
#define VISIBILITY_MASK 0x7u
enum { VIS_NOT_PUBLIC = 0, VIS_PUBLIC = 1, VIS_NESTED_PUBLIC = 2, VIS_NESTED_ASSEMBLY = 5 };

/* A custom attribute blob without arguments: prolog 0x0001, NumNamed 0 (II.23.3). */
static const uint8_t empty_attribute[4] = { 0x01, 0x00, 0x00, 0x00 };

/* 1 when the target has a merged type (a name WEAVE_MERGE_PREFIX and more: merged before), 0, or -1. */
static int merged_before(const struct md_image *md)
{
	size_t n = strlen(WEAVE_MERGE_PREFIX);
	const char *name;

	for (uint32_t r = 1; r <= md_rows(md, MD_TYPEDEF); r++) {
		if (md_string(md, md_get(md, MD_TYPEDEF, r, MD_TYPEDEF_NAME), &name) < 0)
			return -1;
		if (strncmp(name, WEAVE_MERGE_PREFIX, n) == 0 && name[n])
			return 1;
	}
	return 0;
}

static int add_string_of(struct merge *m, enum md_table_id t, uint32_t row, unsigned col, uint32_t *out)
{
	const char *s;

	return md_string(m->tm, md_get(m->tm, t, row, col), &s) < 0 ? -1 : md_add_string(m->md, s, out);
}

static int add_blob_of(struct merge *m, enum md_table_id t, uint32_t row, unsigned col, uint32_t *out)
{
	const uint8_t *p;
	uint32_t len;

	return md_blob(m->tm, md_get(m->tm, t, row, col), &p, &len) < 0 ? -1 : md_add_blob(m->md, p, len, out);
}

/* A TypeDefOrRef (or MethodDefOrRef...) coded cell of the template re-mapped; 0 stays 0. */
static int map_coded(struct merge *m, enum md_coded_index k, uint32_t cell, uint32_t *out)
{
	uint32_t tok;

	if (cell == 0) {
		*out = 0;
		return 0;
	}
	return md_coded_decode(k, cell, &tok) < 0 || merge_token(m, tok, &tok) < 0 ? -1 : md_coded_encode(k, tok, out);
}

/* II.22.37: TypeDefs after the target's last, their lists at the ends of Field and MethodDef; an attribute
 * class for the trimmer that merge_plan_trim merges under its full name keeps its namespace and name. */
static int copy_types(struct merge *m)
{
	const struct md_image *tm = m->tm;

	for (uint32_t r = 2; r <= md_rows(tm, MD_TYPEDEF); r++) {
		uint32_t cells[MD_TYPEDEF_COLS], row, flags = md_get(tm, MD_TYPEDEF, r, MD_TYPEDEF_FLAGS);
		uint32_t vis = flags & VISIBILITY_MASK;
		const char *ns, *name;
		char merged[300];
		int prefixed;

		vis = vis == VIS_PUBLIC ? VIS_NOT_PUBLIC : vis == VIS_NESTED_PUBLIC ? VIS_NESTED_ASSEMBLY : vis;
		cells[MD_TYPEDEF_FLAGS] = (flags & ~VISIBILITY_MASK) | vis;
		if (md_string(tm, md_get(tm, MD_TYPEDEF, r, MD_TYPEDEF_NAMESPACE), &ns) < 0 ||
		    md_string(tm, md_get(tm, MD_TYPEDEF, r, MD_TYPEDEF_NAME), &name) < 0)
			return -1;
		/* A nested type keeps its name (and its empty namespace, II.22.37). */
		prefixed = vis == VIS_NOT_PUBLIC && !m->trim_named[r];
		snprintf(merged, sizeof merged, "%s%s", prefixed ? WEAVE_MERGE_PREFIX : "", name);
		cells[MD_TYPEDEF_FIELDLIST] = m->field_base + md_get(tm, MD_TYPEDEF, r, MD_TYPEDEF_FIELDLIST);
		cells[MD_TYPEDEF_METHODLIST] = m->method_base + md_get(tm, MD_TYPEDEF, r, MD_TYPEDEF_METHODLIST);
		if (md_add_string(m->md, merged, &cells[MD_TYPEDEF_NAME]) < 0 ||
		    md_add_string(m->md, prefixed ? "" : ns, &cells[MD_TYPEDEF_NAMESPACE]) < 0 ||
		    map_coded(m, MD_CI_TYPEDEFORREF, md_get(tm, MD_TYPEDEF, r, MD_TYPEDEF_EXTENDS),
			      &cells[MD_TYPEDEF_EXTENDS]) < 0 ||
		    md_append_row(m->md, MD_TYPEDEF, cells, &row) < 0)
			return -1;
	}
	return 0;
}

/* II.22.15 Field, II.22.26 MethodDef (RVA set with its body), II.22.33 Param. */
static int copy_members(struct merge *m)
{
	const struct md_image *tm = m->tm;
	uint32_t row;

	for (uint32_t r = 1; r <= md_rows(tm, MD_FIELD); r++) {
		uint32_t cells[MD_FIELD_COLS] = { md_get(tm, MD_FIELD, r, MD_FIELD_FLAGS) };

		if (add_string_of(m, MD_FIELD, r, MD_FIELD_NAME, &cells[MD_FIELD_NAME]) < 0 ||
		    merge_sig(m, md_get(tm, MD_FIELD, r, MD_FIELD_SIGNATURE), 0, &cells[MD_FIELD_SIGNATURE]) < 0 ||
		    md_append_row(m->md, MD_FIELD, cells, &row) < 0)
			return -1;
	}
	for (uint32_t r = 1; r <= md_rows(tm, MD_METHODDEF); r++) {
		uint32_t cells[MD_METHODDEF_COLS] = { 0 };

		cells[MD_METHODDEF_IMPLFLAGS] = md_get(tm, MD_METHODDEF, r, MD_METHODDEF_IMPLFLAGS);
		cells[MD_METHODDEF_FLAGS] = md_get(tm, MD_METHODDEF, r, MD_METHODDEF_FLAGS);
		cells[MD_METHODDEF_PARAMLIST] = m->param_base + (md_get(tm, MD_METHODDEF, r, MD_METHODDEF_PARAMLIST));
		if (add_string_of(m, MD_METHODDEF, r, MD_METHODDEF_NAME, &cells[MD_METHODDEF_NAME]) < 0 ||
		    merge_sig(m, md_get(tm, MD_METHODDEF, r, MD_METHODDEF_SIGNATURE), 0,
			      &cells[MD_METHODDEF_SIGNATURE]) < 0 ||
		    md_append_row(m->md, MD_METHODDEF, cells, &row) < 0)
			return -1;
	}
	for (uint32_t r = 1; r <= md_rows(tm, MD_PARAM); r++) {
		uint32_t cells[MD_PARAM_COLS] = { md_get(tm, MD_PARAM, r, MD_PARAM_FLAGS),
						  md_get(tm, MD_PARAM, r, MD_PARAM_SEQUENCE) };

		if (add_string_of(m, MD_PARAM, r, MD_PARAM_NAME, &cells[MD_PARAM_NAME]) < 0 ||
		    md_append_row(m->md, MD_PARAM, cells, &row) < 0)
			return -1;
	}
	return 0;
}

/* The target token of a copied Field, Param, MethodDef or Property, or a TypeDef but <Module>
 * (a HasConstant or HasCustomAttribute parent); 0 for rows not copied. */
static uint32_t copied_parent(const struct merge *m, uint32_t tok)
{
	uint32_t row = md_token_row(tok);

	switch (md_token_table(tok)) {
	case MD_TYPEDEF:
		return row >= 2 ? md_token(MD_TYPEDEF, m->type_base + row - 1) : 0;
	case MD_FIELD:
		return md_token(MD_FIELD, m->field_base + row);
	case MD_METHODDEF:
		return md_token(MD_METHODDEF, m->method_base + row);
	case MD_PARAM:
		return md_token(MD_PARAM, m->param_base + row);
	case MD_PROPERTY:
		return md_token(MD_PROPERTY, m->property_base + row);
	default:
		return 0;
	}
}

/* II.22.35 PropertyMap, II.22.34 Property, II.22.28 MethodSemantics (sorted by md_write). */
static int copy_properties(struct merge *m)
{
	const struct md_image *tm = m->tm;
	uint32_t row, tok;

	for (uint32_t r = 1; r <= md_rows(tm, MD_PROPERTYMAP); r++) {
		uint32_t cells[MD_PROPERTYMAP_COLS] = {
			m->type_base + md_get(tm, MD_PROPERTYMAP, r, MD_PROPERTYMAP_PARENT) - 1,
			m->property_base + md_get(tm, MD_PROPERTYMAP, r, MD_PROPERTYMAP_PROPERTYLIST) };

		if (md_append_row(m->md, MD_PROPERTYMAP, cells, &row) < 0)
			return -1;
	}
	for (uint32_t r = 1; r <= md_rows(tm, MD_PROPERTY); r++) {
		uint32_t cells[MD_PROPERTY_COLS] = { md_get(tm, MD_PROPERTY, r, MD_PROPERTY_FLAGS) };

		if (add_string_of(m, MD_PROPERTY, r, MD_PROPERTY_NAME, &cells[MD_PROPERTY_NAME]) < 0 ||
		    merge_sig(m, md_get(tm, MD_PROPERTY, r, MD_PROPERTY_TYPE), 0, &cells[MD_PROPERTY_TYPE]) < 0 ||
		    md_append_row(m->md, MD_PROPERTY, cells, &row) < 0)
			return -1;
	}
	for (uint32_t r = 1; r <= md_rows(tm, MD_METHODSEMANTICS); r++) {
		uint32_t cells[MD_METHODSEMANTICS_COLS] = {
			md_get(tm, MD_METHODSEMANTICS, r, MD_METHODSEMANTICS_SEMANTICS),
			m->method_base + md_get(tm, MD_METHODSEMANTICS, r, MD_METHODSEMANTICS_METHOD) };

		if (md_coded_decode(MD_CI_HASSEMANTICS, md_get(tm, MD_METHODSEMANTICS, r, MD_METHODSEMANTICS_ASSOCIATION),
				    &tok) < 0 ||
		    md_coded_encode(MD_CI_HASSEMANTICS, copied_parent(m, tok), &cells[MD_METHODSEMANTICS_ASSOCIATION]) < 0 ||
		    md_append_row(m->md, MD_METHODSEMANTICS, cells, &row) < 0)
			return -1;
	}
	return 0;
}

/* II.22.9 Constant (literal fields, optional parameters), II.22.32 NestedClass,
 * II.22.23 InterfaceImpl, II.22.27 MethodImpl: md_write sorts them. */
static int copy_links(struct merge *m)
{
	const struct md_image *tm = m->tm;
	uint32_t row, tok;

	for (uint32_t r = 1; r <= md_rows(tm, MD_CONSTANT); r++) {
		uint32_t cells[MD_CONSTANT_COLS] = { md_get(tm, MD_CONSTANT, r, MD_CONSTANT_TYPE),
						     md_get(tm, MD_CONSTANT, r, MD_CONSTANT_PADDING) };

		if (md_coded_decode(MD_CI_HASCONSTANT, md_get(tm, MD_CONSTANT, r, MD_CONSTANT_PARENT), &tok) < 0 ||
		    md_coded_encode(MD_CI_HASCONSTANT, copied_parent(m, tok), &cells[MD_CONSTANT_PARENT]) < 0 ||
		    add_blob_of(m, MD_CONSTANT, r, MD_CONSTANT_VALUE, &cells[MD_CONSTANT_VALUE]) < 0 ||
		    md_append_row(m->md, MD_CONSTANT, cells, &row) < 0)
			return -1;
	}
	for (uint32_t r = 1; r <= md_rows(tm, MD_NESTEDCLASS); r++) {
		uint32_t cells[MD_NESTEDCLASS_COLS] = {
			m->type_base + md_get(tm, MD_NESTEDCLASS, r, MD_NESTEDCLASS_NESTEDCLASS) - 1,
			m->type_base + md_get(tm, MD_NESTEDCLASS, r, MD_NESTEDCLASS_ENCLOSINGCLASS) - 1 };

		if (md_append_row(m->md, MD_NESTEDCLASS, cells, &row) < 0)
			return -1;
	}
	for (uint32_t r = 1; r <= md_rows(tm, MD_INTERFACEIMPL); r++) {
		uint32_t cells[MD_INTERFACEIMPL_COLS] = {
			m->type_base + md_get(tm, MD_INTERFACEIMPL, r, MD_INTERFACEIMPL_CLASS) - 1 };

		if (map_coded(m, MD_CI_TYPEDEFORREF, md_get(tm, MD_INTERFACEIMPL, r, MD_INTERFACEIMPL_INTERFACE),
			      &cells[MD_INTERFACEIMPL_INTERFACE]) < 0 ||
		    md_append_row(m->md, MD_INTERFACEIMPL, cells, &row) < 0)
			return -1;
	}
	for (uint32_t r = 1; r <= md_rows(tm, MD_METHODIMPL); r++) {
		uint32_t cells[MD_METHODIMPL_COLS] = { m->type_base + md_get(tm, MD_METHODIMPL, r, MD_METHODIMPL_CLASS) - 1 };

		if (map_coded(m, MD_CI_METHODDEFORREF, md_get(tm, MD_METHODIMPL, r, MD_METHODIMPL_METHODBODY),
			      &cells[MD_METHODIMPL_METHODBODY]) < 0 ||
		    map_coded(m, MD_CI_METHODDEFORREF, md_get(tm, MD_METHODIMPL, r, MD_METHODIMPL_METHODDECLARATION),
			      &cells[MD_METHODIMPL_METHODDECLARATION]) < 0 ||
		    md_append_row(m->md, MD_METHODIMPL, cells, &row) < 0)
			return -1;
	}
	return 0;
}

static int add_attribute(struct merge *m, uint32_t parent, uint32_t ctor, uint32_t value_blob)
{
	uint32_t cells[MD_CUSTOMATTRIBUTE_COLS] = { 0, 0, value_blob }, row;

	if (md_coded_encode(MD_CI_HASCUSTOMATTRIBUTE, parent, &cells[MD_CUSTOMATTRIBUTE_PARENT]) < 0 ||
	    md_coded_encode(MD_CI_CUSTOMATTRIBUTETYPE, ctor, &cells[MD_CUSTOMATTRIBUTE_TYPE]) < 0)
		return -1;
	return md_append_row(m->md, MD_CUSTOMATTRIBUTE, cells, &row);
}

/* The target's CompilerGeneratedAttribute::.ctor() (II.21). */
static int compiler_generated_ctor(struct merge *m, uint32_t *out)
{
	static const uint8_t ctor_sig[3] = { SIG_HASTHIS, 0, SIG_VOID };
	uint32_t type;

	if (wref_type(m->refs, "System.Runtime.CompilerServices", "CompilerGeneratedAttribute", &type) < 0 ||
	    wref_member(m->refs, type, 0, ".ctor", ctor_sig, sizeof ctor_sig, out) < 0)
		return lt_error_prefix("the target's framework has no CompilerGeneratedAttribute::.ctor needed by "
				       "LockTime's run-time: ");
	return 0;
}

/* II.22.10: the template's allowed attributes on copied rows (an attribute
 * for the trimmer on the constructor merge_plan_trim chose, or left out),
 * then [CompilerGenerated] on every merged type that lacks it. */
static int copy_attributes(struct merge *m)
{
	const struct md_image *tm = m->tm;
	uint32_t ntypes = md_rows(tm, MD_TYPEDEF), ctor, empty;
	uint8_t *marked = lt_calloc(ntypes + 1, 1);
	char name[300];
	int rc = -1;

	if (!marked)
		return lt_nomem(NULL);
	for (uint32_t r = 1; r <= md_rows(tm, MD_CUSTOMATTRIBUTE); r++) {
		uint32_t parent, value;
		int kind;

		if (md_coded_decode(MD_CI_HASCUSTOMATTRIBUTE, md_get(tm, MD_CUSTOMATTRIBUTE, r, MD_CUSTOMATTRIBUTE_PARENT),
				    &parent) < 0 || (kind = merge_attribute_name(&m->t->x, r, name, sizeof name)) < 0)
			goto done;
		if (!copied_parent(m, parent))
			continue; /* the assembly's and the module's attributes stay with the template */
		if (md_coded_decode(MD_CI_CUSTOMATTRIBUTETYPE, md_get(tm, MD_CUSTOMATTRIBUTE, r, MD_CUSTOMATTRIBUTE_TYPE),
				    &ctor) < 0 ||
		    (kind != MERGE_ATTRIBUTE_FRAMEWORK && merge_token(m, ctor, &ctor) < 0))
			goto done;
		if (kind == MERGE_ATTRIBUTE_FRAMEWORK && !(ctor = m->trim_ctor[md_token_row(ctor)]))
			continue;
		if (add_blob_of(m, MD_CUSTOMATTRIBUTE, r, MD_CUSTOMATTRIBUTE_VALUE, &value) < 0 ||
		    add_attribute(m, copied_parent(m, parent), ctor, value) < 0)
			goto done;
		if (md_token_table(parent) == MD_TYPEDEF &&
		    strcmp(name, "System.Runtime.CompilerServices.CompilerGeneratedAttribute") == 0)
			marked[md_token_row(parent)] = 1;
	}
	if (compiler_generated_ctor(m, &ctor) < 0 ||
	    md_add_blob(m->md, empty_attribute, sizeof empty_attribute, &empty) < 0)
		goto done;
	for (uint32_t r = 2; r <= ntypes; r++)
		if (!marked[r] && add_attribute(m, md_token(MD_TYPEDEF, m->type_base + r - 1), ctor, empty) < 0)
			goto done;
	rc = 0;
done:
	free(marked);
	return rc;
}

/* Whether a core-library substitution applies: the target defines System.Object but not Stopwatch. */
static int corlib_without_stopwatch(struct merge *m)
{
	uint32_t tok;

	if (!wref_is_corlib(m->refs))
		return 0;
	if (wref_type(m->refs, "System.Diagnostics", "Stopwatch", &tok) == 0)
		return 0;
	lt_error_clear();
	return 1;
}

/* The body of a substituted method (struct weave_subst) into *b; 0, 1 when
 * the substitution does not apply to this target, or -1. */
static int subst_body(struct merge *m, const struct weave_subst *s, const struct weave_merge_map *map, uint32_t row,
		      struct il_body *b)
{
	const uint8_t *p;
	uint32_t len, nparams, clock, str;
	int has_this, returns, direct;
	int64_t hz;
	struct em e;

	if (md_blob(m->tm, md_get(m->tm, MD_METHODDEF, row, MD_METHODDEF_SIGNATURE), &p, &len) < 0 ||
	    sig_method_stack_effect(p, len, &nparams, &has_this, &returns) < 0)
		return -1;
	if ((s->kind == WEAVE_SUBST_CORLIB_TIMESTAMP || s->kind == WEAVE_SUBST_CORLIB_FREQUENCY) &&
	    !corlib_without_stopwatch(m))
		return 1;
	em_init(&e);
	switch (s->kind) {
	case WEAVE_SUBST_STRING:
		if (img_string_token(m->img, s->string, &str) < 0) {
			em_free(&e);
			return -1;
		}
		em_tok(&e, IL_LDSTR, str);
		break;
	case WEAVE_SUBST_I8:
		em_i8(&e, s->i8);
		break;
	case WEAVE_SUBST_CALL:
		for (uint32_t i = 0; i < nparams + (has_this ? 1 : 0); i++)
			em_ldarg(&e, i);
		em_tok(&e, IL_CALL, s->token);
		break;
	case WEAVE_SUBST_CORLIB_TIMESTAMP:
	case WEAVE_SUBST_CORLIB_FREQUENCY:
		if (wref_clock(m->refs, &clock, &hz) < 0) {
			em_free(&e);
			return -1;
		}
		if (s->kind == WEAVE_SUBST_CORLIB_TIMESTAMP)
			em_tok(&e, IL_CALL, clock);
		else
			em_i8(&e, hz);
		break;
	case WEAVE_SUBST_EMIT:
		if (s->emit(s->ctx, m->img, map, &e) < 0) {
			em_free(&e);
			return -1;
		}
		break;
	case WEAVE_SUBST_SIGTERM:
	case WEAVE_SUBST_SIGINT:
	case WEAVE_SUBST_UNLOADING:
		if ((direct = s->kind == WEAVE_SUBST_SIGTERM
				      ? merge_direct_signal(m, map, -4, "LockTime.Runtime.Signals::OnTerminate", &e)
			      : s->kind == WEAVE_SUBST_SIGINT
				      ? merge_direct_signal(m, map, -2, "LockTime.Runtime.Signals::OnInterrupt", &e)
				      : merge_direct_unloading(m, map, &e)) != 0) {
			em_free(&e);
			return direct;
		}
		break;
	}
	if (s->kind != WEAVE_SUBST_EMIT && s->kind != WEAVE_SUBST_SIGTERM && s->kind != WEAVE_SUBST_SIGINT &&
	    s->kind != WEAVE_SUBST_UNLOADING)
		em_op(&e, IL_RET);
	if (em_finish(&e, b) < 0) {
		em_free(&e);
		return -1;
	}
	em_free(&e);
	b->returns_value = returns;
	return 0;
}

/* Template MethodDef row's body into out: its bytes with every token (operands, the locals signature, catch
 * clauses' classes: weave_template_open found where) re-mapped in place. */
static int copied_body(struct merge *m, uint32_t row, struct lt_buf *out)
{
	const struct weave_template *t = m->t;

	out->len = 0;
	if (lt_buf_put(out, t->body[row - 1], t->body_len[row - 1]) < 0)
		return -1;
	for (uint32_t k = t->patch_first[row - 1]; k < t->patch_first[row]; k++) {
		uint32_t tok = lt_le32(out->data + t->patch[k]);

		if (merge_token(m, tok, &tok) < 0)
			return -1;
		lt_put32(out->data + t->patch[k], tok);
	}
	return 0;
}

/* II.25.4: every template body, copied or substituted (subst[r]: the substitution naming MethodDef r, or
 * NULL), into the target. */
static int copy_bodies(struct merge *m, const struct weave_subst *const *subst, const struct weave_merge_map *map)
{
	struct lt_buf out = LT_BUF_INIT;
	int rc = 0;

	for (uint32_t r = 1; r <= m->t->nmethods && rc == 0; r++) {
		struct il_body b;
		int done;

		memset(&b, 0, sizeof b);
		done = subst[r] ? subst_body(m, subst[r], map, r, &b) : 1;
		out.len = 0;
		if (done < 0 || (done == 0 && il_encode(&b, img_stack_effect, m->img, &out) < 0) ||
		    (done == 1 && copied_body(m, r, &out) < 0) ||
		    img_set_method_body(m->img, m->method_base + r, out.data, out.len) < 0) {
			lt_error_prefix("run-time method %s: ", m->t->names[m->t->nfields + r - 1]);
			rc = -1;
		}
		il_body_free(&b);
	}
	lt_buf_free(&out);
	return rc;
}

/* subst[r] for each template MethodDef r: the first of substs[0..n) that names it (NULL: none); every
 * substitution must name one. */
static int find_substs(const struct merge *m, const struct weave_subst *substs, size_t n,
		       const struct weave_subst **subst)
{
	const struct weave_template *t = m->t;

	for (size_t i = 0; i < n; i++) {
		int any = 0;

		for (size_t k = merge_first_named(t, substs[i].method);
		     k < (size_t)t->nfields + t->nmethods && strcmp(t->sorted[k].name, substs[i].method) == 0; k++)
			if (t->sorted[k].i >= t->nfields) {
				uint32_t r = t->sorted[k].i - t->nfields + 1;

				if (!subst[r])
					subst[r] = &substs[i];
				any = 1;
			}
		if (!any)
			return lt_error_set(LT_E_WEAVE, "substitution %s: the run-time template has no such method",
					    substs[i].method);
	}
	return 0;
}

static int merge_all(struct merge *m, const struct weave_opts *opts, const struct weave_subst *substs, size_t nsubsts,
		     struct weave_merge_map *out)
{
	const struct weave_subst **subst;
	int rc;

	if ((rc = merged_before(m->md)) != 0)
		return rc;
	/* II.24.2.6: with FieldPtr / MethodPtr / ParamPtr (uncompressed #- metadata) lists go through the
	 * pointer tables; not supported. */
	if (md_rows(m->md, MD_FIELDPTR) || md_rows(m->md, MD_METHODPTR) || md_rows(m->md, MD_PARAMPTR))
		return lt_error_set(LT_E_WEAVE, "metadata with FieldPtr/MethodPtr/ParamPtr tables (II.24.2.6): not supported");
	if (!(subst = lt_calloc(m->t->nmethods + 1u, sizeof *subst)))
		return lt_nomem(NULL);
	if (find_substs(m, substs, nsubsts, subst) < 0 || wref_open(m->img, opts, &m->refs) < 0) {
		free(subst);
		return -1;
	}
	m->type_base = md_rows(m->md, MD_TYPEDEF);
	m->field_base = md_rows(m->md, MD_FIELD);
	m->method_base = md_rows(m->md, MD_METHODDEF);
	m->param_base = md_rows(m->md, MD_PARAM);
	m->property_base = md_rows(m->md, MD_PROPERTY);
	*out = (struct weave_merge_map){ .tmpl = m->t, .field_base = m->field_base, .method_base = m->method_base };
	/* The map first: substituted bodies may call merged methods. */
	if (merge_plan_trim(m, &out->trim_unfit) < 0 || copy_types(m) < 0 || copy_members(m) < 0 ||
	    copy_properties(m) < 0 || copy_links(m) < 0 || copy_attributes(m) < 0 || copy_bodies(m, subst, out) < 0)
		rc = -1;
	free(subst);
	return rc;
}

int weave_merge(struct img *target, const struct weave_template *tmpl, const struct weave_opts *opts,
		const struct weave_subst *substs, size_t nsubsts, struct weave_merge_map *out)
{
	struct merge m = { .img = target, .md = &target->md, .t = tmpl, .tm = &tmpl->img->md };
	struct weave_merge_map own;
	int rc;

	if (!out)
		out = &own;
	memset(out, 0, sizeof *out);
	rc = merge_all(&m, opts, substs, nsubsts, out);
	wref_close(m.refs);
	for (unsigned t = 0; t < MD_TABLE_MAX; t++)
		free(m.map[t]);
	free(m.trim_ctor);
	free(m.trim_named);
	return rc;
}
