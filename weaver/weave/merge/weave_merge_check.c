/* weave_merge_check.c - the subset of .NET metadata a run-time template may use (weave_merge.h), and template names. */
#include "weave_merge_int.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "sig.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NESTING 64

/* For each row 1..nrows of the table TypeDef column `col` lists (II.22.37 FieldList, MethodList), the last
 * TypeDef row whose list starts at or before it (0: none), as a scan of every TypeDef for each row finds;
 * owned, [0..nrows]; NULL when out of memory. */
static uint32_t *owner_table(const struct md_image *tm, unsigned col, uint32_t nrows)
{
	uint32_t ntypes = md_rows(tm, MD_TYPEDEF), *owner = lt_calloc((size_t)nrows + 1, sizeof *owner);

	if (!owner)
		return NULL;
	/* owner[v]: the last TypeDef whose list starts at v; then the last starting at or before each row. */
	for (uint32_t r = 1; r <= ntypes; r++) {
		uint32_t v = md_get(tm, MD_TYPEDEF, r, col);

		if (v <= nrows)
			owner[v] = r;
	}
	for (uint32_t v = 1; v <= nrows; v++)
		if (owner[v] < owner[v - 1])
			owner[v] = owner[v - 1];
	return owner;
}

int merge_index_open(const struct md_image *tm, struct merge_index *out)
{
	uint32_t ntypes = md_rows(tm, MD_TYPEDEF);

	memset(out, 0, sizeof *out);
	out->tm = tm;
	if (!(out->enclosing = lt_calloc((size_t)ntypes + 1, sizeof *out->enclosing)) ||
	    !(out->owner[0] = owner_table(tm, MD_TYPEDEF_FIELDLIST, md_rows(tm, MD_FIELD))) ||
	    !(out->owner[1] = owner_table(tm, MD_TYPEDEF_METHODLIST, md_rows(tm, MD_METHODDEF)))) {
		merge_index_close(out);
		return lt_nomem("the template's index");
	}
	/* The first NestedClass row naming a type is the one that counts (II.22.32 allows one). */
	for (uint32_t r = md_rows(tm, MD_NESTEDCLASS); r >= 1; r--) {
		uint32_t nested = md_get(tm, MD_NESTEDCLASS, r, MD_NESTEDCLASS_NESTEDCLASS);

		if (nested <= ntypes)
			out->enclosing[nested] = md_get(tm, MD_NESTEDCLASS, r, MD_NESTEDCLASS_ENCLOSINGCLASS);
	}
	return 0;
}

void merge_index_close(struct merge_index *x)
{
	if (!x)
		return;
	free(x->enclosing);
	free(x->owner[0]);
	free(x->owner[1]);
	memset(x, 0, sizeof *x);
}

/* The enclosing TypeDef row of template TypeDef `row` (II.22.32), 0 for a top-level one. */
static uint32_t enclosing_of(const struct merge_index *x, uint32_t row)
{
	return row <= md_rows(x->tm, MD_TYPEDEF) ? x->enclosing[row] : 0;
}

int merge_type_name(const struct merge_index *x, uint32_t row, char *buf, size_t size)
{
	const struct md_image *tm = x->tm;
	uint32_t chain[MAX_NESTING];
	unsigned n = 0;
	size_t at = 0;

	for (uint32_t r = row; r; r = enclosing_of(x, r)) {
		if (n == MAX_NESTING || r > md_rows(tm, MD_TYPEDEF))
			return lt_error_set(LT_E_METADATA, "TypeDef row %u: nesting deeper than %d or broken (II.22.32)",
					    row, MAX_NESTING);
		chain[n++] = r;
	}
	buf[0] = 0;
	while (n--) {
		const char *ns, *name;

		if (md_string(tm, md_get(tm, MD_TYPEDEF, chain[n], MD_TYPEDEF_NAME), &name) < 0 ||
		    md_string(tm, md_get(tm, MD_TYPEDEF, chain[n], MD_TYPEDEF_NAMESPACE), &ns) < 0)
			return -1;
		if (at < size)
			at += (size_t)snprintf(buf + at, size - at, "%s%s%s%s", at ? "+" : "", !at && ns[0] ? ns : "",
					       !at && ns[0] ? "." : "", name);
	}
	return 0;
}

/* The custom attributes a merged member may carry (II.21; their blobs have no type arguments). */
static const char *const allowed_attributes[] = {
	"System.ThreadStaticAttribute",
	"System.Runtime.CompilerServices.CompilerGeneratedAttribute",
	"System.Diagnostics.DebuggerHiddenAttribute",
	"System.Diagnostics.DebuggerNonUserCodeAttribute",
	"System.AttributeUsageAttribute",
};

/* Attributes that the trimmer and NativeAOT's compiler know by full name, wherever the class is
 * defined (their trim and AOT analysis), and netstandard2.0 lacks: the template declares each itself,
 * a class of that name whose constructor takes strings only; merge_plan_trim says what a use becomes. */
static const char *const framework_attributes[] = {
	"System.Diagnostics.CodeAnalysis.DynamicDependencyAttribute",
	"System.Diagnostics.CodeAnalysis.UnconditionalSuppressMessageAttribute",
};

/* Whether sig[0..len) is an instance method's returning void with strings only (II.23.2.1). */
static int strings_only(const uint8_t *sig, uint32_t len)
{
	if (len < 3 || sig[0] != SIG_HASTHIS || sig[2] != SIG_VOID || len != 3u + sig[1])
		return 0;
	for (uint32_t i = 3; i < len; i++)
		if (sig[i] != SIG_STRING)
			return 0;
	return 1;
}

const char *weave_merge_trim_attribute(unsigned i)
{
	return i < sizeof framework_attributes / sizeof framework_attributes[0] ? framework_attributes[i] : NULL;
}

int merge_framework_attribute(const struct merge_index *x, uint32_t ctor_row, const char **ns, const char **name,
			      uint32_t *type, const uint8_t **sig, uint32_t *siglen)
{
	const struct md_image *tm = x->tm;
	char full[300];
	const char *n;

	*type = ctor_row && ctor_row <= md_rows(tm, MD_METHODDEF) ? x->owner[1][ctor_row] : 0;
	*ns = *name = "";
	if (*type < 2)
		return 0;
	if (md_string(tm, md_get(tm, MD_TYPEDEF, *type, MD_TYPEDEF_NAMESPACE), ns) < 0 ||
	    md_string(tm, md_get(tm, MD_TYPEDEF, *type, MD_TYPEDEF_NAME), name) < 0 ||
	    merge_type_name(x, *type, full, sizeof full) < 0 ||
	    md_string(tm, md_get(tm, MD_METHODDEF, ctor_row, MD_METHODDEF_NAME), &n) < 0 ||
	    md_blob(tm, md_get(tm, MD_METHODDEF, ctor_row, MD_METHODDEF_SIGNATURE), sig, siglen) < 0)
		return -1;
	if (strcmp(n, ".ctor") != 0 || !strings_only(*sig, *siglen))
		return 0;
	for (size_t i = 0; i < sizeof framework_attributes / sizeof framework_attributes[0]; i++)
		if (strcmp(full, framework_attributes[i]) == 0)
			return 1 + (int)i;
	return 0;
}

int merge_attribute_name(const struct merge_index *x, uint32_t ca_row, char *buf, size_t size)
{
	const struct md_image *tm = x->tm;
	uint32_t ctor, parent;
	const char *ns, *name;

	snprintf(buf, size, "?");
	if (md_coded_decode(MD_CI_CUSTOMATTRIBUTETYPE, md_get(tm, MD_CUSTOMATTRIBUTE, ca_row, MD_CUSTOMATTRIBUTE_TYPE),
			    &ctor) < 0)
		return -1;
	if (md_token_table(ctor) == MD_METHODDEF) { /* a class of the template's own */
		const uint8_t *sig;
		uint32_t len, type;
		int own = merge_framework_attribute(x, md_token_row(ctor), &ns, &name, &type, &sig, &len);

		if (own >= 0 && name[0])
			snprintf(buf, size, "%s%s%s", ns, ns[0] ? "." : "", name);
		return own > 0 ? MERGE_ATTRIBUTE_FRAMEWORK : own;
	}
	if (md_token_table(ctor) != MD_MEMBERREF || md_token_row(ctor) == 0 ||
	    md_token_row(ctor) > md_rows(tm, MD_MEMBERREF))
		return 0;
	if (md_coded_decode(MD_CI_MEMBERREFPARENT, md_get(tm, MD_MEMBERREF, md_token_row(ctor), MD_MEMBERREF_CLASS),
			    &parent) < 0)
		return -1;
	if (md_token_table(parent) != MD_TYPEREF || md_token_row(parent) == 0 ||
	    md_token_row(parent) > md_rows(tm, MD_TYPEREF))
		return 0;
	if (md_string(tm, md_get(tm, MD_TYPEREF, md_token_row(parent), MD_TYPEREF_NAMESPACE), &ns) < 0 ||
	    md_string(tm, md_get(tm, MD_TYPEREF, md_token_row(parent), MD_TYPEREF_NAME), &name) < 0)
		return -1;
	snprintf(buf, size, "%s.%s", ns, name);
	for (size_t i = 0; i < sizeof allowed_attributes / sizeof allowed_attributes[0]; i++)
		if (strcmp(buf, allowed_attributes[i]) == 0)
			return MERGE_ATTRIBUTE_COPIED;
	return 0;
}

struct chk {
	const struct merge_index *x;
	const struct md_image *tm;
	void (*report)(void *ctx, const char *what);
	void *ctx;
	long n;
};

static void found(struct chk *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void found(struct chk *k, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	k->n++;
	if (!k->report)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	k->report(k->ctx, buf);
}

/* What a custom attribute the merger does not copy says of the code that
 * carries it (the C# compiler's attributes). */
static const struct {
	const char *attribute, *why;
} attribute_hints[] = {
	{ "System.Runtime.CompilerServices.AsyncStateMachineAttribute", " (an async method)" },
	{ "System.Runtime.CompilerServices.IteratorStateMachineAttribute", " (an iterator)" },
	{ "System.ParamArrayAttribute", " (a params parameter)" },
	{ "System.Runtime.CompilerServices.NullableAttribute", " (nullable reference types)" },
	{ "System.Runtime.CompilerServices.NullableContextAttribute", " (nullable reference types)" },
	{ "System.Runtime.CompilerServices.IsReadOnlyAttribute", " (a readonly struct or an in parameter)" },
};

static const char *attribute_hint(const char *attribute)
{
	for (size_t i = 0; i < sizeof attribute_hints / sizeof attribute_hints[0]; i++)
		if (strcmp(attribute, attribute_hints[i].attribute) == 0)
			return attribute_hints[i].why;
	return "";
}

/* Tables a template may not have rows in, and what they hold. */
static const struct {
	enum md_table_id t;
	const char *what;
} refused_tables[] = {
	{ MD_FIELDPTR, "uncompressed metadata" }, { MD_METHODPTR, "uncompressed metadata" },
	{ MD_PARAMPTR, "uncompressed metadata" }, { MD_EVENTPTR, "uncompressed metadata" },
	{ MD_PROPERTYPTR, "uncompressed metadata" }, { MD_FIELDMARSHAL, "marshalled fields or parameters" },
	{ MD_DECLSECURITY, "security attributes" }, { MD_CLASSLAYOUT, "explicit type layouts or sizes" },
	{ MD_FIELDLAYOUT, "explicit field offsets" }, { MD_EVENTMAP, "events" }, { MD_EVENT, "events" },
	{ MD_MODULEREF, "module references (P/Invoke)" }, { MD_IMPLMAP, "P/Invoke methods" },
	{ MD_FIELDRVA, "FieldRVA data (constant arrays, <PrivateImplementationDetails>)" },
	{ MD_ENCLOG, "edit-and-continue tables" }, { MD_ENCMAP, "edit-and-continue tables" },
	{ MD_FILE, "more than one module" }, { MD_EXPORTEDTYPE, "type forwarders" },
	{ MD_MANIFESTRESOURCE, "resources" }, { MD_GENERICPARAMCONSTRAINT, "generic constraints" },
	{ MD_ASSEMBLYREFPROCESSOR, "AssemblyRefProcessor rows" }, { MD_ASSEMBLYREFOS, "AssemblyRefOS rows" },
};

/* Types: compiler-generated ones (closures, lambdas, state machines, fixed
 * buffers, <PrivateImplementationDetails>) are named with '<'; <Module> owns nothing. */
static int check_types(struct chk *k)
{
	const struct md_image *tm = k->tm;
	char name[300];

	if (md_rows(tm, MD_TYPEDEF) >= 1) {
		uint32_t fields_end = md_rows(tm, MD_TYPEDEF) >= 2 ? md_get(tm, MD_TYPEDEF, 2, MD_TYPEDEF_FIELDLIST)
								   : md_rows(tm, MD_FIELD) + 1;
		uint32_t methods_end = md_rows(tm, MD_TYPEDEF) >= 2 ? md_get(tm, MD_TYPEDEF, 2, MD_TYPEDEF_METHODLIST)
								    : md_rows(tm, MD_METHODDEF) + 1;
		if (md_get(tm, MD_TYPEDEF, 1, MD_TYPEDEF_FIELDLIST) != fields_end ||
		    md_get(tm, MD_TYPEDEF, 1, MD_TYPEDEF_METHODLIST) != methods_end)
			found(k, "<Module>: global fields or methods (a module initializer)");
	}
	for (uint32_t r = 2; r <= md_rows(tm, MD_TYPEDEF); r++) {
		const char *n;

		if (merge_type_name(k->x, r, name, sizeof name) < 0 ||
		    md_string(tm, md_get(tm, MD_TYPEDEF, r, MD_TYPEDEF_NAME), &n) < 0)
			return -1;
		if (n[0] == '<')
			found(k, "TypeDef %s: a closure, lambda, iterator, async state machine or other "
				 "compiler-generated type", name);
		if (enclosing_of(k->x, r))
			continue;
		for (uint32_t o = 2; o < r; o++) {
			const char *other;

			if (md_string(tm, md_get(tm, MD_TYPEDEF, o, MD_TYPEDEF_NAME), &other) < 0)
				return -1;
			if (!enclosing_of(k->x, o) && strcmp(other, n) == 0)
				found(k, "TypeDef %s: a second top-level type named %s (merged, the namespace goes)", name, n);
		}
	}
	return 0;
}

/* Whether template MethodDef `row` is a type initializer (II.10.5.3: named .cctor). */
static int is_cctor(const struct md_image *tm, uint32_t row)
{
	const char *n;

	return md_string(tm, md_get(tm, MD_METHODDEF, row, MD_METHODDEF_NAME), &n) == 0 && strcmp(n, ".cctor") == 0;
}

int merge_member_name(const struct merge_index *x, enum md_table_id table, uint32_t row, char *buf, size_t size)
{
	const struct md_image *tm = x->tm;
	const char *n;
	size_t at;

	if (merge_type_name(x, x->owner[table == MD_METHODDEF][row], buf, size) < 0 ||
	    md_string(tm, md_get(tm, table, row, table == MD_FIELD ? MD_FIELD_NAME : MD_METHODDEF_NAME), &n) < 0)
		return -1;
	at = strlen(buf);
	snprintf(buf + at, size - at, "::%s", n);
	return 0;
}

/* "TypeDef Ns.T", "MethodDef Ns.T::M", "Field Ns.T::F" for a template row
 * token, else its table and row. */
static int row_name(const struct merge_index *x, uint32_t tok, char *buf, size_t size)
{
	const struct md_image *tm = x->tm;
	enum md_table_id t = md_token_table(tok);
	uint32_t row = md_token_row(tok);
	const char *table = t < MD_TABLE_MAX && md_schema[t].name ? md_schema[t].name : "?";
	size_t at = (size_t)snprintf(buf, size, "%s ", table);

	if (row >= 1 && t < MD_TABLE_MAX && row <= md_rows(tm, t) && at < size) {
		if (t == MD_TYPEDEF)
			return merge_type_name(x, row, buf + at, size - at);
		if (t == MD_FIELD || t == MD_METHODDEF)
			return merge_member_name(x, t, row, buf + at, size - at);
	}
	snprintf(buf, size, "%s row %u", table, row);
	return 0;
}

/* Fields (II.23.1.5 HasFieldRVA 0x0100, HasFieldMarshal 0x1000) and methods
 * (II.23.1.10 PInvokeImpl 0x2000, Abstract 0x0400; II.23.1.11 code type other
 * than IL, InternalCall 0x1000; vararg or generic signatures; a .cctor of a
 * type without BeforeFieldInit 0x00100000, II.23.1.15: an explicit static
 * constructor, which would run at a time of its own (II.10.5.3.2) and which
 * test suites that check types by reflection refuse). */
static int check_members(struct chk *k)
{
	const struct md_image *tm = k->tm;
	char name[400];

	for (uint32_t r = 1; r <= md_rows(tm, MD_GENERICPARAM); r++) {
		uint32_t owner;

		if (md_coded_decode(MD_CI_TYPEORMETHODDEF, md_get(tm, MD_GENERICPARAM, r, MD_GENERICPARAM_OWNER), &owner) < 0 ||
		    (md_get(tm, MD_GENERICPARAM, r, MD_GENERICPARAM_NUMBER) == 0 &&
		     row_name(k->x, owner, name, sizeof name) < 0))
			return -1;
		if (md_get(tm, MD_GENERICPARAM, r, MD_GENERICPARAM_NUMBER) == 0)
			found(k, "%s: generic, with parameters of its own", name);
	}
	for (uint32_t r = 1; r <= md_rows(tm, MD_FIELD); r++) {
		uint32_t flags = md_get(tm, MD_FIELD, r, MD_FIELD_FLAGS);

		if (!(flags & 0x1100))
			continue;
		if (merge_member_name(k->x, MD_FIELD, r, name, sizeof name) < 0)
			return -1;
		found(k, "Field %s: %s", name, flags & 0x0100 ? "FieldRVA data" : "marshalling");
	}
	for (uint32_t r = 1; r <= md_rows(tm, MD_METHODDEF); r++) {
		uint32_t flags = md_get(tm, MD_METHODDEF, r, MD_METHODDEF_FLAGS);
		uint32_t impl = md_get(tm, MD_METHODDEF, r, MD_METHODDEF_IMPLFLAGS), owner;
		const uint8_t *p;
		uint32_t len;

		if (merge_member_name(k->x, MD_METHODDEF, r, name, sizeof name) < 0 ||
		    md_blob(tm, md_get(tm, MD_METHODDEF, r, MD_METHODDEF_SIGNATURE), &p, &len) < 0)
			return -1;
		if (md_get(tm, MD_METHODDEF, r, MD_METHODDEF_RVA) == 0 || (flags & 0x2400) || (impl & 0x1003))
			found(k, "MethodDef %s: no IL body (abstract, extern, P/Invoke, internal call or runtime)", name);
		if (len && (p[0] & SIG_CONV_MASK) == SIG_CONV_VARARG)
			found(k, "MethodDef %s: a vararg method", name);
		if (len && (p[0] & SIG_GENERIC))
			found(k, "MethodDef %s: a generic method of its own", name);
		if (is_cctor(tm, r) && (owner = k->x->owner[1][r]) != 0 &&
		    !(md_get(tm, MD_TYPEDEF, owner, MD_TYPEDEF_FLAGS) & 0x00100000))
			found(k, "MethodDef %s: an explicit static constructor (the type is not beforefieldinit: use field "
				 "initializers)", name);
	}
	return 0;
}

/* References: only netstandard (the template's one framework); TypeRefs in
 * an assembly or a TypeRef; MemberRefs on a TypeRef or TypeSpec; custom
 * attributes on copied rows from the allowed list. */
static int check_refs(struct chk *k)
{
	const struct md_image *tm = k->tm;
	const char *n;
	uint32_t tok;
	char name[300], owner[400];

	for (uint32_t r = 1; r <= md_rows(tm, MD_ASSEMBLYREF); r++) {
		if (md_string(tm, md_get(tm, MD_ASSEMBLYREF, r, MD_ASSEMBLYREF_NAME), &n) < 0)
			return -1;
		if (strcmp(n, "netstandard") != 0)
			found(k, "AssemblyRef %s: the run-time may reference netstandard only", n);
	}
	for (uint32_t r = 1; r <= md_rows(tm, MD_TYPEREF); r++) {
		if (md_coded_decode(MD_CI_RESOLUTIONSCOPE, md_get(tm, MD_TYPEREF, r, MD_TYPEREF_RESOLUTIONSCOPE), &tok) < 0 ||
		    md_string(tm, md_get(tm, MD_TYPEREF, r, MD_TYPEREF_NAME), &n) < 0)
			return -1;
		if ((md_token_table(tok) != MD_ASSEMBLYREF && md_token_table(tok) != MD_TYPEREF) || md_token_row(tok) == 0 ||
		    (md_token_table(tok) == MD_TYPEREF && md_token_row(tok) >= r))
			found(k, "TypeRef %s: scoped to 0x%08x, not an AssemblyRef or an earlier TypeRef", n, tok);
	}
	for (uint32_t r = 1; r <= md_rows(tm, MD_MEMBERREF); r++) {
		if (md_coded_decode(MD_CI_MEMBERREFPARENT, md_get(tm, MD_MEMBERREF, r, MD_MEMBERREF_CLASS), &tok) < 0 ||
		    md_string(tm, md_get(tm, MD_MEMBERREF, r, MD_MEMBERREF_NAME), &n) < 0)
			return -1;
		if (md_token_table(tok) != MD_TYPEREF && md_token_table(tok) != MD_TYPESPEC)
			found(k, "MemberRef %s: on 0x%08x, not on a TypeRef or TypeSpec", n, tok);
	}
	for (uint32_t r = 1; r <= md_rows(tm, MD_CUSTOMATTRIBUTE); r++) {
		int ok;

		if (md_coded_decode(MD_CI_HASCUSTOMATTRIBUTE, md_get(tm, MD_CUSTOMATTRIBUTE, r, MD_CUSTOMATTRIBUTE_PARENT),
				    &tok) < 0 || (ok = merge_attribute_name(k->x, r, name, sizeof name)) < 0)
			return -1;
		if (md_token_table(tok) == MD_ASSEMBLY || md_token_table(tok) == MD_MODULE || ok)
			continue;
		if (row_name(k->x, tok, owner, sizeof owner) < 0)
			return -1;
		found(k, "%s: custom attribute %s%s, not one the merger copies", owner, name, attribute_hint(name));
	}
	return 0;
}

long merge_check(const struct merge_index *x, void (*report)(void *ctx, const char *what), void *ctx)
{
	struct chk k = { x, x->tm, report, ctx, 0 };

	for (size_t i = 0; i < sizeof refused_tables / sizeof refused_tables[0]; i++)
		if (md_rows(k.tm, refused_tables[i].t))
			found(&k, "%s: %u rows (%s)", md_schema[refused_tables[i].t].name, md_rows(k.tm, refused_tables[i].t),
			      refused_tables[i].what);
	if (check_types(&k) < 0 || check_members(&k) < 0 || check_refs(&k) < 0)
		return -1;
	return k.n;
}

long weave_merge_check(const struct img *tmpl, void (*report)(void *ctx, const char *what), void *ctx)
{
	struct merge_index x;
	long n;

	if (merge_index_open(&tmpl->md, &x) < 0)
		return -1;
	n = merge_check(&x, report, ctx);
	merge_index_close(&x);
	return n;
}
