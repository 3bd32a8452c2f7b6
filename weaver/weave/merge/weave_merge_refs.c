/* weave_merge_refs.c - template tokens re-mapped into the target: copied rows, framework references
 * resolved in the target's framework, signature rows re-encoded, strings added. */
#include "weave_merge_int.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "md_find.h"
#include "sig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tm_string(const struct md_image *tm, enum md_table_id t, uint32_t row, unsigned col, const char **out)
{
	return md_string(tm, md_get(tm, t, row, col), out);
}

/* "Namespace.Name" (nested: "Outer+Inner") of template TypeRef `row` into buf[0..size). */
static void typeref_name(const struct md_image *tm, uint32_t row, char *buf, size_t size)
{
	const char *ns = "", *name = "?";
	uint32_t scope;

	tm_string(tm, MD_TYPEREF, row, MD_TYPEREF_NAMESPACE, &ns);
	tm_string(tm, MD_TYPEREF, row, MD_TYPEREF_NAME, &name);
	if (md_coded_decode(MD_CI_RESOLUTIONSCOPE, md_get(tm, MD_TYPEREF, row, MD_TYPEREF_RESOLUTIONSCOPE), &scope) == 0 &&
	    md_token_table(scope) == MD_TYPEREF && md_token_row(scope) >= 1 && md_token_row(scope) < row) {
		size_t n;

		typeref_name(tm, md_token_row(scope), buf, size);
		n = strlen(buf);
		snprintf(buf + n, size - n, "+%s", name);
		return;
	}
	snprintf(buf, size, "%s%s%s", ns, ns[0] ? "." : "", name);
}

/* The name of a MemberRef's parent (TypeRef, or the generic type of a TypeSpec) for messages. */
static void parent_name(const struct md_image *tm, uint32_t parent, char *buf, size_t size)
{
	struct sig_type *t = NULL;
	const uint8_t *p;
	uint32_t len;

	snprintf(buf, size, "token 0x%08x", parent);
	if (md_token_table(parent) == MD_TYPESPEC && md_token_row(parent) >= 1 &&
	    md_token_row(parent) <= md_rows(tm, MD_TYPESPEC) &&
	    md_blob(tm, md_get(tm, MD_TYPESPEC, md_token_row(parent), MD_TYPESPEC_SIGNATURE), &p, &len) == 0 &&
	    sig_typespec_decode(p, len, &t) == 0 && t->elem == SIG_GENERICINST)
		parent = t->token;
	sig_type_free(t);
	if (md_token_table(parent) == MD_TYPEREF && md_token_row(parent) >= 1 &&
	    md_token_row(parent) <= md_rows(tm, MD_TYPEREF))
		typeref_name(tm, md_token_row(parent), buf, size);
}

static int map_sig_token(void *ctx, uint32_t token, uint32_t *out)
{
	return merge_token(ctx, token, out);
}

/* Template #Blob signature `blob` re-encoded with target tokens into b (emptied first). */
static int remap_blob(struct merge *m, uint32_t blob, int typespec, struct lt_buf *b)
{
	const uint8_t *p;
	uint32_t len;

	b->len = 0;
	return md_blob(m->tm, blob, &p, &len) < 0 ? -1 : sig_remap(p, len, typespec, map_sig_token, m, b);
}

int merge_sig(struct merge *m, uint32_t blob, int typespec, uint32_t *out)
{
	struct lt_buf b = LT_BUF_INIT;
	int rc = remap_blob(m, blob, typespec, &b) < 0 ? -1 : md_add_blob(m->md, b.data, (uint32_t)b.len, out);

	lt_buf_free(&b);
	return rc;
}

/* II.22.38: a TypeRef scoped to an AssemblyRef (netstandard: weave_merge_check) or nested in a TypeRef. */
static int map_typeref(struct merge *m, uint32_t row, uint32_t *out)
{
	const char *ns, *name;
	uint32_t scope, outer;
	char full[300];

	if (tm_string(m->tm, MD_TYPEREF, row, MD_TYPEREF_NAMESPACE, &ns) < 0 ||
	    tm_string(m->tm, MD_TYPEREF, row, MD_TYPEREF_NAME, &name) < 0 ||
	    md_coded_decode(MD_CI_RESOLUTIONSCOPE, md_get(m->tm, MD_TYPEREF, row, MD_TYPEREF_RESOLUTIONSCOPE), &scope) < 0)
		return -1;
	typeref_name(m->tm, row, full, sizeof full);
	if (md_token_table(scope) == MD_TYPEREF) {
		/* An enclosing TypeRef comes first (as compilers write them): no cycle to follow. */
		if (md_token_row(scope) >= row)
			return lt_error_set(LT_E_WEAVE, "template TypeRef %s: nested in a later TypeRef", full);
		if (merge_token(m, scope, &outer) < 0 || wref_nested(m->refs, outer, name, out) < 0)
			return lt_error_prefix("the target's framework has no %s needed by LockTime's run-time: ", full);
		return 0;
	}
	if (md_token_table(scope) != MD_ASSEMBLYREF)
		return lt_error_set(LT_E_WEAVE, "template TypeRef %s: scope 0x%08x is not an assembly (II.22.38)", full,
				    scope);
	if (wref_type(m->refs, ns, name, out) < 0)
		return lt_error_prefix("the target's framework has no %s needed by LockTime's run-time: ", full);
	return 0;
}

/* II.22.25: a field or method of a framework type (TypeRef) or of a generic instance (TypeSpec). */
static int map_memberref(struct merge *m, uint32_t row, uint32_t *out)
{
	uint32_t parent, target_parent, sig;
	const uint8_t *p;
	uint32_t len;
	const char *name;
	char owner[300];

	if (md_coded_decode(MD_CI_MEMBERREFPARENT, md_get(m->tm, MD_MEMBERREF, row, MD_MEMBERREF_CLASS), &parent) < 0 ||
	    tm_string(m->tm, MD_MEMBERREF, row, MD_MEMBERREF_NAME, &name) < 0 ||
	    md_blob(m->tm, md_get(m->tm, MD_MEMBERREF, row, MD_MEMBERREF_SIGNATURE), &p, &len) < 0)
		return -1;
	parent_name(m->tm, parent, owner, sizeof owner);
	if (md_token_table(parent) != MD_TYPEREF && md_token_table(parent) != MD_TYPESPEC)
		return lt_error_set(LT_E_WEAVE, "template MemberRef %s::%s: its parent is not a TypeRef or TypeSpec",
				    owner, name);
	if (merge_token(m, parent, &target_parent) < 0)
		return -1;
	if (merge_sig(m, md_get(m->tm, MD_MEMBERREF, row, MD_MEMBERREF_SIGNATURE), 0, &sig) < 0 ||
	    md_blob(m->md, sig, &p, &len) < 0 ||
	    wref_member(m->refs, target_parent, len && (p[0] & SIG_CONV_MASK) == SIG_CONV_FIELD, name, p, len, out) < 0)
		return lt_error_prefix("the target's framework has no %s::%s needed by LockTime's run-time: ", owner,
				       name);
	return 0;
}

/* II.22.39 TypeSpec, II.22.36 StandAloneSig, II.22.29 MethodSpec (its method and
 * instantiation): re-encoded, found or added (md_find.h). */
static int map_spec(struct merge *m, enum md_table_id t, uint32_t row, uint32_t *out)
{
	struct lt_buf b = LT_BUF_INIT;
	uint32_t method;
	int rc;

	if (t == MD_METHODSPEC) {
		rc = md_coded_decode(MD_CI_METHODDEFORREF, md_get(m->tm, t, row, MD_METHODSPEC_METHOD), &method) < 0 ||
		     merge_token(m, method, &method) < 0 ||
		     remap_blob(m, md_get(m->tm, t, row, MD_METHODSPEC_INSTANTIATION), 0, &b) < 0
			     ? -1 : md_methodspec(m->md, method, b.data, (uint32_t)b.len, out);
	} else if (remap_blob(m, md_get(m->tm, t, row, 0), t == MD_TYPESPEC, &b) < 0) {
		rc = -1;
	} else {
		rc = t == MD_TYPESPEC ? md_typespec(m->md, b.data, (uint32_t)b.len, out)
				      : md_standalonesig(m->md, b.data, (uint32_t)b.len, out);
	}
	lt_buf_free(&b);
	return rc;
}

/* A #US string (II.24.2.4): its UTF-16 code units added to the target's #US. */
static int map_string(struct merge *m, uint32_t index, uint32_t *out)
{
	const uint8_t *p;
	uint32_t len, n;
	uint16_t *units;
	int rc;

	if (md_us(m->tm, index, &p, &len) < 0)
		return -1;
	n = len / 2; /* the final flag byte is recomputed */
	if (!(units = lt_malloc((n ? n : 1) * sizeof *units)))
		return lt_nomem(NULL);
	for (uint32_t i = 0; i < n; i++)
		units[i] = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
	rc = img_us_token(m->img, units, n, out);
	free(units);
	return rc;
}

static int map_row(struct merge *m, enum md_table_id t, uint32_t row, uint32_t *out)
{
	switch (t) {
	case MD_TYPEREF:
		return map_typeref(m, row, out);
	case MD_MEMBERREF:
		return map_memberref(m, row, out);
	case MD_METHODSPEC:
	case MD_TYPESPEC:
	case MD_STANDALONESIG:
		return map_spec(m, t, row, out);
	default:
		return lt_error_set(LT_E_WEAVE, "template token 0x%08x: a table the merger does not copy",
				    md_token(t, row));
	}
}

int merge_token(struct merge *m, uint32_t tok, uint32_t *out)
{
	enum md_table_id t = md_token_table(tok);
	uint32_t row = md_token_row(tok);

	if (t == 0x70)
		return map_string(m, row, out);
	if (row == 0 || (t < MD_TABLE_MAX && row > md_rows(m->tm, t)))
		return lt_error_set(LT_E_METADATA, "template token 0x%08x: no such row", tok);
	switch (t) {
	case MD_TYPEDEF:
		if (row == 1)
			return lt_error_set(LT_E_WEAVE, "template token 0x%08x names <Module>", tok);
		*out = md_token(t, m->type_base + row - 1);
		return 0;
	case MD_FIELD:
		*out = md_token(t, m->field_base + row);
		return 0;
	case MD_METHODDEF:
		*out = md_token(t, m->method_base + row);
		return 0;
	case MD_TYPEREF:
	case MD_MEMBERREF:
	case MD_TYPESPEC:
	case MD_METHODSPEC:
	case MD_STANDALONESIG:
		if (!m->map[t] && !(m->map[t] = lt_calloc(md_rows(m->tm, t), sizeof *m->map[t])))
			return lt_nomem(NULL);
		if (!m->map[t][row - 1] && map_row(m, t, row, &m->map[t][row - 1]) < 0)
			return -1;
		*out = m->map[t][row - 1];
		return 0;
	default:
		return lt_error_set(LT_E_WEAVE, "template token 0x%08x: a table the merger does not copy", tok);
	}
}
