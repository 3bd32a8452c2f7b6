/* weave_names.c - which type owns each method, and the user-facing names of methods ("Ns.Type::Method"). */
#include "weave_pass.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "weave_merge.h"

#include <stdlib.h>
#include <string.h>

int weave_names_init(struct weave_names *n, const struct img *img)
{
	const struct md_image *md = &img->md;
	uint32_t t, m, r;

	memset(n, 0, sizeof *n);
	n->img = img;
	n->nmethods = md_rows(md, MD_METHODDEF);
	n->ntypes = md_rows(md, MD_TYPEDEF);
	n->owner = lt_calloc(n->nmethods + 1, sizeof *n->owner);
	n->enclosing = lt_calloc(n->ntypes + 1, sizeof *n->enclosing);
	if (!n->owner || !n->enclosing) {
		weave_names_free(n);
		return lt_nomem(NULL);
	}
	/* II.22.37: TypeDef t owns the MethodDef rows from its MethodList up to
	 * (not including) the next TypeDef's MethodList, the last one up to the
	 * end of the table.  md_read checked every MethodList <= rows + 1. */
	for (t = 1; t <= n->ntypes; t++) {
		uint32_t lo = md_get(md, MD_TYPEDEF, t, MD_TYPEDEF_METHODLIST);
		uint32_t hi = t < n->ntypes ? md_get(md, MD_TYPEDEF, t + 1, MD_TYPEDEF_METHODLIST) : n->nmethods + 1;
		for (m = lo ? lo : 1; m < hi && m <= n->nmethods; m++)
			n->owner[m - 1] = t;
	}
	/* II.22.32: NestedClass rows name the nested and the enclosing TypeDef. */
	for (r = 1; r <= md_rows(md, MD_NESTEDCLASS); r++) {
		uint32_t nested = md_get(md, MD_NESTEDCLASS, r, MD_NESTEDCLASS_NESTEDCLASS);
		uint32_t outer = md_get(md, MD_NESTEDCLASS, r, MD_NESTEDCLASS_ENCLOSINGCLASS);
		if (nested >= 1 && nested <= n->ntypes && outer <= n->ntypes)
			n->enclosing[nested - 1] = outer;
	}
	return 0;
}

void weave_names_free(struct weave_names *n)
{
	if (!n)
		return;
	free(n->owner);
	free(n->enclosing);
	n->owner = n->enclosing = NULL;
}

uint32_t weave_names_owner(const struct weave_names *n, uint32_t row)
{
	return row >= 1 && row <= n->nmethods ? n->owner[row - 1] : 0;
}

/* The namespace and name of TypeDef or TypeRef `token` of md into *ns and
 * *name: 1, or 0 when it is neither (a TypeSpec, a null cell, a row out of
 * range); -1 with LT_E_METADATA for a bad #Strings index. */
static int type_name(const struct md_image *md, uint32_t token, const char **ns, const char **name)
{
	enum md_table_id t = md_token_table(token);
	uint32_t row = md_token_row(token);
	int ref = t == MD_TYPEREF;

	if ((t != MD_TYPEREF && t != MD_TYPEDEF) || row == 0 || row > md_rows(md, t))
		return 0;
	if (md_string(md, md_get(md, t, row, ref ? MD_TYPEREF_NAME : MD_TYPEDEF_NAME), name) < 0 ||
	    md_string(md, md_get(md, t, row, ref ? MD_TYPEREF_NAMESPACE : MD_TYPEDEF_NAMESPACE), ns) < 0)
		return -1;
	return 1;
}

int weave_names_is_valuetype(const struct weave_names *n, uint32_t row)
{
	const struct md_image *md = &n->img->md;
	uint32_t base;
	const char *name, *ns, *own, *own_ns;
	int known;

	if (md_coded_decode(MD_CI_TYPEDEFORREF, md_get(md, MD_TYPEDEF, row, MD_TYPEDEF_EXTENDS), &base) < 0)
		return lt_error_prefix("TypeDef row %u: Extends: ", row);
	/* No base (an interface, System.Object) or a TypeSpec (a generic base): a class. */
	if ((known = type_name(md, base, &ns, &name)) == 0)
		return 0;
	if (known < 0 || type_name(md, md_token(MD_TYPEDEF, row), &own_ns, &own) < 0)
		return lt_error_prefix("TypeDef row %u: ", row);
	if (strcmp(ns, "System") != 0 || (strcmp(name, "ValueType") != 0 && strcmp(name, "Enum") != 0))
		return 0;
	/* II.13: System.Enum extends System.ValueType but is a class. */
	return !(strcmp(own_ns, "System") == 0 && strcmp(own, "Enum") == 0);
}

int weave_names_in_async(const struct weave_names *n, uint32_t row)
{
	const struct md_image *md = &n->img->md;
	uint32_t t = weave_names_owner(n, row), iface;
	const char *method, *name, *ns;
	size_t len;
	int known;

	if (t == 0)
		return 0;
	if (md_string(md, md_get(md, MD_METHODDEF, row, MD_METHODDEF_NAME), &method) < 0)
		return lt_error_prefix("MethodDef row %u: ", row);
	/* "MoveNext", or an explicit implementation "...IAsyncStateMachine.MoveNext" */
	len = strlen(method);
	if (len < 8 || strcmp(method + len - 8, "MoveNext") != 0 || (len > 8 && method[len - 9] != '.'))
		return 0;
	/* II.22.23: the InterfaceImpl rows of TypeDef t */
	for (uint32_t r = 1; r <= md_rows(md, MD_INTERFACEIMPL); r++) {
		if (md_get(md, MD_INTERFACEIMPL, r, MD_INTERFACEIMPL_CLASS) != t)
			continue;
		if (md_coded_decode(MD_CI_TYPEDEFORREF, md_get(md, MD_INTERFACEIMPL, r, MD_INTERFACEIMPL_INTERFACE),
				    &iface) < 0 ||
		    (known = type_name(md, iface, &ns, &name)) < 0)
			return lt_error_prefix("InterfaceImpl row %u: ", r);
		if (known && strcmp(ns, "System.Runtime.CompilerServices") == 0 && strcmp(name, "IAsyncStateMachine") == 0)
			return 1;
	}
	return 0;
}

int weave_names_attribute(const struct weave_names *n, uint32_t ctor, const char **name)
{
	const struct md_image *md = &n->img->md;
	uint32_t type = 0, parent, row = ctor & 0xFFFFFF;

	*name = NULL;
	if (ctor >> 24 == MD_METHODDEF) {
		type = weave_names_owner(n, row);
		return type ? md_string(md, md_get(md, MD_TYPEDEF, type, MD_TYPEDEF_NAME), name) : 0;
	}
	/* A null Type or Class cell (row 0) names nothing. */
	if (ctor >> 24 != MD_MEMBERREF || row == 0 || row > md_rows(md, MD_MEMBERREF))
		return 0;
	if (md_coded_decode(MD_CI_MEMBERREFPARENT, md_get(md, MD_MEMBERREF, row, MD_MEMBERREF_CLASS), &parent) < 0)
		return -1;
	row = parent & 0xFFFFFF;
	if (parent >> 24 == MD_TYPEREF && row >= 1 && row <= md_rows(md, MD_TYPEREF))
		return md_string(md, md_get(md, MD_TYPEREF, row, MD_TYPEREF_NAME), name);
	if (parent >> 24 == MD_TYPEDEF && row >= 1 && row <= md_rows(md, MD_TYPEDEF))
		return md_string(md, md_get(md, MD_TYPEDEF, row, MD_TYPEDEF_NAME), name);
	return 0;
}

int weave_names_is_ours(const struct md_image *md, uint32_t row)
{
	const char *name, *ns;

	if (md_string(md, md_get(md, MD_TYPEDEF, row, MD_TYPEDEF_NAME), &name) < 0 ||
	    md_string(md, md_get(md, MD_TYPEDEF, row, MD_TYPEDEF_NAMESPACE), &ns) < 0)
		return lt_error_prefix("TypeDef row %u: ", row);
	return ns[0] == '\0' && strncmp(name, WEAVE_MERGE_PREFIX, strlen(WEAVE_MERGE_PREFIX)) == 0;
}

/* A piece of a name: s[0..len). */
struct span {
	const char *s;
	size_t len;
};

/* For a name "<X>rest" (s[0] == '<'), the length of "<X>": the '>' that
 * closes the first '<', counting nested pairs ("<<Main>b__0>d"); 0 when none
 * closes it. */
static size_t bracket_len(struct span n)
{
	size_t i, depth = 0;

	for (i = 0; i < n.len; i++) {
		if (n.s[i] == '<')
			depth++;
		else if (n.s[i] == '>' && --depth == 0)
			return i + 1;
	}
	return 0;
}

static int starts(struct span n, const char *prefix)
{
	size_t len = strlen(prefix);

	return n.len >= len && memcmp(n.s, prefix, len) == 0;
}

/* What the part after "<X>" of a generated name says the code is, into *w:
 * Roslyn's lambda "b__" and local function "g__Name|", mcs's anonymous
 * method "m__" and its closure class "c__AnonStorey". */
static void classify(struct span rest, struct weave_within *w)
{
	if (starts(rest, "b__") || starts(rest, "m__") || starts(rest, "c__AnonStorey")) {
		w->kind = WEAVE_WITHIN_LAMBDA;
	} else if (starts(rest, "g__")) {
		w->kind = WEAVE_WITHIN_LOCAL;
		w->local = rest.s + 3;
		w->local_len = strcspn(w->local, "|");
		if (w->local_len > rest.len - 3)
			w->local_len = rest.len - 3;
	}
}

/* Demangle a method name "<X>..." to X while X is not empty; *w gets what
 * the compiler made (classify). */
static struct span user_method(struct span m, struct weave_within *w)
{
	size_t b;

	while (m.len > 0 && m.s[0] == '<' && (b = bracket_len(m)) > 2) {
		classify((struct span){ m.s + b, m.len - b }, w);
		m.s += 1;
		m.len = b - 2;
	}
	return m;
}

#define VB_STATE_MACHINE "VB$StateMachine_"
#define VB_CLOSURE "_Closure$__"

/* Whether type name t is compiler-generated, a name no user type can have:
 *  C#:  "<X>..." (a type serving member X: Roslyn's state machines
 *       "<X>d__N", mcs's iterators "<X>c__Iterator0" and closures
 *       "<X>c__AnonStorey0"), "<>c", "<>c__DisplayClass0_0" (closures);
 *  VB:  "VB$StateMachine_N_X" (state machine of X), "_Closure$__N-M";
 *  F#:  "X@line" (closure or seq state machine of X; "clo@line" too).
 * For a type serving X *m becomes X, as MoveNext, <>m__Finally1, Invoke,
 * <>m__0... all run code the user wrote in X; *w what the type says the
 * code is (an F# closure: WEAVE_WITHIN_LAMBDA with `fsharp`). */
static int generated_type(const char *t, struct span *m, struct weave_within *w)
{
	struct span n = { t, strlen(t) };
	const char *at = strchr(t, '@');
	size_t b;

	if (t[0] == '<') {
		b = bracket_len(n);
		if (b > 2) {
			*m = user_method((struct span){ t + 1, b - 2 }, w);
			classify((struct span){ t + b, n.len - b }, w);
		}
		return 1;
	}
	if (strncmp(t, VB_STATE_MACHINE, strlen(VB_STATE_MACHINE)) == 0) {
		const char *x = t + strlen(VB_STATE_MACHINE);
		x += strspn(x, "0123456789");
		if (*x == '_' && x[1])
			*m = (struct span){ x + 1, strlen(x + 1) };
		return 1;
	}
	if (at) {
		if (at > t)
			*m = (struct span){ t, (size_t)(at - t) };
		w->kind = WEAVE_WITHIN_LAMBDA;
		w->fsharp = 1;
		return 1;
	}
	return strncmp(t, VB_CLOSURE, strlen(VB_CLOSURE)) == 0;
}

int weave_escape(struct lt_buf *b, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		unsigned cp = c;
		size_t k = 1;
		char e[8];

		/* U+0080-U+009F (C2 80-9F), U+2028 and U+2029 (E2 80 A8-A9) break lines too. */
		if (c == 0xC2 && i + 1 < len && (unsigned char)s[i + 1] >= 0x80 && (unsigned char)s[i + 1] <= 0x9F) {
			cp = (unsigned char)s[i + 1];
			k = 2;
		} else if (c == 0xE2 && i + 2 < len && (unsigned char)s[i + 1] == 0x80 &&
			   ((unsigned char)s[i + 2] == 0xA8 || (unsigned char)s[i + 2] == 0xA9)) {
			cp = 0x2000 | ((unsigned char)s[i + 2] & 0x3F);
			k = 3;
		} else if (c >= 0x20 && c != 0x7F && c != '\\' && c != '"') {
			if (lt_buf_put(b, s + i, 1) < 0)
				return -1;
			continue;
		}
		switch (cp) {
		case '\n': memcpy(e, "\\n", 3); break;
		case '\r': memcpy(e, "\\r", 3); break;
		case '\t': memcpy(e, "\\t", 3); break;
		case '\\': memcpy(e, "\\\\", 3); break;
		case '"': memcpy(e, "\\\"", 3); break;
		default:
			e[0] = '\\';
			e[1] = 'u';
			for (int d = 0; d < 4; d++)
				e[2 + d] = hex[cp >> (12 - 4 * d) & 0xF];
		}
		if (lt_buf_put(b, e, e[1] == 'u' ? 6 : 2) < 0)
			return -1;
		i += k - 1;
	}
	return 0;
}

/* Keep b's text NUL-terminated (the NUL not counted in b->len). */
static int terminate(struct lt_buf *b)
{
	if (lt_buf_reserve(b, 1) < 0)
		return -1;
	b->data[b->len] = '\0';
	return 0;
}

int weave_names_user(const char *ns, const char *const *types, size_t ntypes, const char *method,
		     struct lt_buf *out, struct weave_within *within)
{
	struct weave_within w = { WEAVE_WITHIN_NONE };
	struct span m = user_method((struct span){ method, strlen(method) }, &w);
	size_t k = ntypes, i;

	/* Peel compiler-generated types off the inside of the chain. */
	while (k > 1 && generated_type(types[k - 1], &m, &w))
		k--;
	out->len = 0;
	if (weave_escape(out, ns, strlen(ns)) < 0)
		return -1;
	for (i = 0; i < k; i++)
		if (((i > 0 || ns[0]) && lt_buf_put(out, i == 0 ? "." : "+", 1) < 0) ||
		    weave_escape(out, types[i], strlen(types[i])) < 0)
			return -1;
	if (lt_buf_put(out, "::", 2) < 0 || weave_escape(out, m.s, m.len) < 0 || terminate(out) < 0)
		return -1;
	if (within)
		*within = w;
	return 0;
}

int weave_names_method(const struct weave_names *n, uint32_t row, struct lt_buf *out, struct weave_within *within)
{
	const struct md_image *md = &n->img->md;
	const char *types[WEAVE_MAX_NESTING], *inner[WEAVE_MAX_NESTING], *ns, *method;
	uint32_t t = weave_names_owner(n, row);
	size_t depth = 0, i;

	if (t == 0)
		return lt_error_set(LT_E_METADATA, "MethodDef row %u: no TypeDef's MethodList holds it (II.22.37)", row);
	if (md_string(md, md_get(md, MD_METHODDEF, row, MD_METHODDEF_NAME), &method) < 0)
		return lt_error_prefix("MethodDef row %u: ", row);
	/* Walk outwards, innermost type first. */
	for (; t != 0; t = n->enclosing[t - 1]) {
		if (depth == WEAVE_MAX_NESTING)
			return lt_error_set(LT_E_METADATA,
					    "MethodDef row %u: types nested deeper than %d: a NestedClass cycle (II.22.32)",
					    row, WEAVE_MAX_NESTING);
		if (md_string(md, md_get(md, MD_TYPEDEF, t, MD_TYPEDEF_NAME), &inner[depth]) < 0 ||
		    md_string(md, md_get(md, MD_TYPEDEF, t, MD_TYPEDEF_NAMESPACE), &ns) < 0)
			return lt_error_prefix("TypeDef row %u: ", t);
		depth++;
	}
	for (i = 0; i < depth; i++)
		types[i] = inner[depth - 1 - i];
	/* ns now holds the outermost type's namespace (II.22.37: nested types'
	 * own TypeNamespace is usually empty). */
	return weave_names_user(ns, types, depth, method, out, within);
}
