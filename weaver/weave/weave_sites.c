/* weave_sites.c - finding the calls to lock APIs (Monitor, Lock, Lock.Scope) in every method body. */
#include "weave_pass.h"
#include "il_body.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "sig.h"

#include <stdlib.h>
#include <string.h>

/* II.23.1.11 MethodImplAttributes. */
#define IMPL_CODE_TYPE_MASK 0x0003 /* 0 = IL */
#define IMPL_SYNCHRONIZED 0x0020
/* II.23.1.10 MethodAttributes. */
#define METHOD_STATIC 0x0010

/* A lock API by the shape of its signature: the return type, ':', then one
 * letter per parameter (see shape_type): "z:oi" is bool (object, int32). */
struct lock_api {
	const char *type;   /* namespace.name; a nested type as Outer/Inner */
	const char *method;
	uint8_t has_this;
	const char *shape;
	enum weave_kind kind;
};

#define MONITOR "System.Threading.Monitor"
#define LOCK "System.Threading.Lock"
#define SCOPE "System.Threading.Lock/Scope"

static const struct lock_api lock_apis[] = {
	{ MONITOR, "Enter", 0, "v:o", WEAVE_MONITOR_ENTER },
	{ MONITOR, "Enter", 0, "v:o&z", WEAVE_MONITOR_ENTER_TAKEN },
	{ MONITOR, "TryEnter", 0, "z:o", WEAVE_MONITOR_TRYENTER },
	{ MONITOR, "TryEnter", 0, "v:o&z", WEAVE_MONITOR_TRYENTER },
	{ MONITOR, "TryEnter", 0, "z:oi", WEAVE_MONITOR_TRYENTER },
	{ MONITOR, "TryEnter", 0, "v:oi&z", WEAVE_MONITOR_TRYENTER },
	{ MONITOR, "TryEnter", 0, "z:oT", WEAVE_MONITOR_TRYENTER },
	{ MONITOR, "TryEnter", 0, "v:oT&z", WEAVE_MONITOR_TRYENTER },
	{ MONITOR, "Exit", 0, "v:o", WEAVE_MONITOR_EXIT },
	{ MONITOR, "Wait", 0, "z:o", WEAVE_MONITOR_WAIT },
	{ MONITOR, "Wait", 0, "z:oi", WEAVE_MONITOR_WAIT },
	{ MONITOR, "Wait", 0, "z:oT", WEAVE_MONITOR_WAIT },
	{ MONITOR, "Wait", 0, "z:oiz", WEAVE_MONITOR_WAIT },
	{ MONITOR, "Wait", 0, "z:oTz", WEAVE_MONITOR_WAIT },
	{ LOCK, "Enter", 1, "v:", WEAVE_LOCK_ENTER },
	{ LOCK, "TryEnter", 1, "z:", WEAVE_LOCK_TRYENTER },
	{ LOCK, "TryEnter", 1, "z:i", WEAVE_LOCK_TRYENTER },
	{ LOCK, "TryEnter", 1, "z:T", WEAVE_LOCK_TRYENTER },
	{ LOCK, "Exit", 1, "v:", WEAVE_LOCK_EXIT },
	{ LOCK, "EnterScope", 1, "S:", WEAVE_LOCK_ENTERSCOPE },
	{ SCOPE, "Dispose", 1, "v:", WEAVE_SCOPE_DISPOSE },
};
#define NAPIS (sizeof lock_apis / sizeof lock_apis[0])

/* Longest type name and shape compared; anything longer matches nothing. */
#define NAME_MAX_LEN 128
#define SHAPE_MAX_LEN 16

/* The full name of TypeDef, TypeRef or TypeSpec `token` into buf[0..
 * NAME_MAX_LEN) ("System.Threading.Lock/Scope"); "" for a type no lock API
 * has (generic instantiations, names too long).  Returns 0, or -1 with
 * LT_E_METADATA or LT_E_SIGNATURE. */
static int type_name(const struct weave_names *n, uint32_t token, char *buf)
{
	const struct md_image *md = &n->img->md;
	const char *parts[WEAVE_MAX_NESTING], *ns = "";
	size_t depth = 0, used = 0;

	buf[0] = '\0';
	if (md_token_table(token) == MD_TYPESPEC) {
		/* II.23.2.14: a TypeSpec of a plain CLASS or VALUETYPE names it. */
		uint32_t row = md_token_row(token), len;
		const uint8_t *p;
		struct sig_type *t;
		int rc = 0;
		if (row == 0 || row > md_rows(md, MD_TYPESPEC))
			return lt_error_set(LT_E_METADATA, "TypeSpec token 0x%08x out of range", token);
		if (md_blob(md, md_get(md, MD_TYPESPEC, row, MD_TYPESPEC_SIGNATURE), &p, &len) < 0 ||
		    sig_typespec_decode(p, len, &t) < 0)
			return lt_error_prefix("TypeSpec row %u: ", row);
		if ((t->elem == SIG_CLASS || t->elem == SIG_VALUETYPE) && md_token_table(t->token) != MD_TYPESPEC)
			rc = type_name(n, t->token, buf);
		sig_type_free(t);
		return rc;
	}
	/* Walk outwards: TypeRef through ResolutionScope (II.22.38), TypeDef
	 * through NestedClass (II.22.32). */
	while (token != 0) {
		enum md_table_id tab = md_token_table(token);
		uint32_t row = md_token_row(token), next = 0;
		if (depth == WEAVE_MAX_NESTING)
			return lt_error_set(LT_E_METADATA, "token 0x%08x: types nested deeper than %d (a cycle?)",
					    token, WEAVE_MAX_NESTING);
		if (tab == MD_TYPEREF && row >= 1 && row <= md_rows(md, MD_TYPEREF)) {
			uint32_t scope = md_get(md, MD_TYPEREF, row, MD_TYPEREF_RESOLUTIONSCOPE);
			if (md_string(md, md_get(md, MD_TYPEREF, row, MD_TYPEREF_NAME), &parts[depth]) < 0 ||
			    md_string(md, md_get(md, MD_TYPEREF, row, MD_TYPEREF_NAMESPACE), &ns) < 0)
				return lt_error_prefix("TypeRef row %u: ", row);
			/* A null ResolutionScope (0) is allowed (ExportedType lookup). */
			if (scope != 0 && md_coded_decode(MD_CI_RESOLUTIONSCOPE, scope, &next) < 0)
				return lt_error_prefix("TypeRef row %u: ", row);
			if (md_token_table(next) != MD_TYPEREF)
				next = 0;
		} else if (tab == MD_TYPEDEF && row >= 1 && row <= n->ntypes) {
			if (md_string(md, md_get(md, MD_TYPEDEF, row, MD_TYPEDEF_NAME), &parts[depth]) < 0 ||
			    md_string(md, md_get(md, MD_TYPEDEF, row, MD_TYPEDEF_NAMESPACE), &ns) < 0)
				return lt_error_prefix("TypeDef row %u: ", row);
			next = n->enclosing[row - 1] ? md_token(MD_TYPEDEF, n->enclosing[row - 1]) : 0;
		} else {
			return lt_error_set(LT_E_METADATA, "token 0x%08x is not a TypeDef or TypeRef row", token);
		}
		depth++;
		token = next;
	}
	/* ns is the outermost type's namespace; parts[depth - 1] the outermost type. */
	if (strlen(ns) + 1 >= NAME_MAX_LEN)
		return 0;
	used = strlen(ns);
	memcpy(buf, ns, used + 1);
	for (size_t i = depth; i-- > 0;) {
		size_t len = strlen(parts[i]);
		if (used + len + 2 > NAME_MAX_LEN) {
			buf[0] = '\0';
			return 0;
		}
		if (i + 1 < depth)
			buf[used++] = '/';
		else if (ns[0])
			buf[used++] = '.';
		memcpy(buf + used, parts[i], len + 1);
		used += len;
	}
	return 0;
}

/* One letter for a parameter or return type of a lock API (custom
 * modifiers skipped): v void, z bool, o object, i int32, T valuetype
 * System.TimeSpan, S valuetype System.Threading.Lock/Scope, '?' otherwise;
 * a BYREF is '&' before its type.  Appends to shape[*len]. */
static int shape_type(const struct weave_names *n, const struct sig_type *t, char *shape, size_t *len)
{
	char name[NAME_MAX_LEN], c = '?';

	while (t->elem == SIG_CMOD_REQD || t->elem == SIG_CMOD_OPT)
		t = t->inner;
	if (*len + 3 > SHAPE_MAX_LEN) {
		shape[0] = '#'; /* longer than any lock API's: '#' starts none of theirs */
		return 0;
	}
	if (t->elem == SIG_BYREF) {
		shape[(*len)++] = '&';
		return shape_type(n, t->inner, shape, len);
	}
	switch (t->elem) {
	case SIG_VOID: c = 'v'; break;
	case SIG_BOOLEAN: c = 'z'; break;
	case SIG_OBJECT: c = 'o'; break;
	case SIG_I4: c = 'i'; break;
	case SIG_VALUETYPE:
		if (type_name(n, t->token, name) < 0)
			return -1;
		c = strcmp(name, "System.TimeSpan") == 0 ? 'T' : strcmp(name, SCOPE) == 0 ? 'S' : '?';
		break;
	default: break;
	}
	shape[(*len)++] = c;
	shape[*len] = '\0';
	return 0;
}

/* The shape of a method signature blob; "" for a generic or vararg method
 * (no lock API is one).  *has_this gets the HASTHIS bit. */
static int sig_shape(const struct weave_names *n, const uint8_t *p, uint32_t plen, char *shape, int *has_this)
{
	struct sig_method *m;
	size_t len = 0;
	uint32_t i;
	int rc = 0;

	shape[0] = '\0';
	if (sig_method_decode(p, plen, &m) < 0)
		return -1;
	*has_this = !!(m->conv & SIG_HASTHIS);
	if ((m->conv & (SIG_GENERIC | SIG_EXPLICITTHIS)) || (m->conv & SIG_CONV_MASK) != SIG_CONV_DEFAULT)
		goto done;
	if ((rc = shape_type(n, m->ret, shape, &len)) < 0)
		goto done;
	shape[len++] = ':';
	shape[len] = '\0';
	for (i = 0; i < m->nparams && rc == 0; i++)
		rc = shape_type(n, m->params[i], shape, &len);
done:
	sig_method_free(m);
	return rc;
}

/* The lock API that method token `token` names: 1 with *out set, 0 when
 * it names none (MethodSpec: no lock API is generic), or -1 with
 * LT_E_METADATA or LT_E_SIGNATURE. */
static int classify(const struct weave_names *n, uint32_t token, enum weave_kind *out)
{
	const struct md_image *md = &n->img->md;
	uint32_t row = md_token_row(token), type = 0, name_ix, sig_ix, plen;
	char tname[NAME_MAX_LEN], shape[SHAPE_MAX_LEN] = "";
	const char *name;
	const uint8_t *p;
	int has_this = 0, have_shape = 0, named = 0;
	size_t i;

	if (md_token_table(token) == MD_MEMBERREF && row >= 1 && row <= md_rows(md, MD_MEMBERREF)) {
		name_ix = md_get(md, MD_MEMBERREF, row, MD_MEMBERREF_NAME);
		sig_ix = md_get(md, MD_MEMBERREF, row, MD_MEMBERREF_SIGNATURE);
		if (md_coded_decode(MD_CI_MEMBERREFPARENT, md_get(md, MD_MEMBERREF, row, MD_MEMBERREF_CLASS), &type) < 0)
			return lt_error_prefix("MemberRef row %u: ", row);
		/* II.22.25: a MethodDef parent is a vararg call site of that
		 * method; a ModuleRef parent a global function. */
		if (md_token_table(type) == MD_METHODDEF)
			type = md_token(MD_TYPEDEF, weave_names_owner(n, md_token_row(type)));
		else if (md_token_table(type) == MD_MODULEREF)
			return 0;
	} else if (md_token_table(token) == MD_METHODDEF && row >= 1 && row <= n->nmethods) {
		name_ix = md_get(md, MD_METHODDEF, row, MD_METHODDEF_NAME);
		sig_ix = md_get(md, MD_METHODDEF, row, MD_METHODDEF_SIGNATURE);
		type = md_token(MD_TYPEDEF, weave_names_owner(n, row));
	} else {
		return 0;
	}
	if (md_string(md, name_ix, &name) < 0)
		return lt_error_prefix("method token 0x%08x: ", token);
	for (i = 0; i < NAPIS && !named; i++)
		named = strcmp(lock_apis[i].method, name) == 0;
	if (!named || md_token_row(type) == 0)
		return 0;
	if (type_name(n, type, tname) < 0)
		return -1;
	for (i = 0; i < NAPIS; i++) {
		const struct lock_api *a = &lock_apis[i];
		if (strcmp(a->type, tname) != 0 || strcmp(a->method, name) != 0)
			continue;
		if (!have_shape &&
		    (md_blob(md, sig_ix, &p, &plen) < 0 || sig_shape(n, p, plen, shape, &has_this) < 0))
			return lt_error_prefix("method token 0x%08x: ", token);
		have_shape = 1;
		if (a->has_this == has_this && strcmp(a->shape, shape) == 0) {
			*out = a->kind;
			return 1;
		}
	}
	return 0;
}

/* Classification cache: one byte per MemberRef and MethodDef row. */
enum { CACHE_UNKNOWN = 0, CACHE_NONE = 1, CACHE_KIND = 2 /* + kind */ };

struct finder {
	const struct weave_names *n;
	uint8_t *memberref, *methoddef; /* owned, index row - 1 */
	struct weave_sites *out;
	uint32_t row;                   /* the MethodDef being scanned */
};

static int classify_cached(struct finder *f, uint32_t token, enum weave_kind *out)
{
	uint32_t row = md_token_row(token);
	uint8_t *slot = NULL;
	int rc;

	if (md_token_table(token) == MD_MEMBERREF && row >= 1 && row <= md_rows(&f->n->img->md, MD_MEMBERREF))
		slot = &f->memberref[row - 1];
	else if (md_token_table(token) == MD_METHODDEF && row >= 1 && row <= f->n->nmethods)
		slot = &f->methoddef[row - 1];
	if (slot && *slot != CACHE_UNKNOWN) {
		*out = (enum weave_kind)(*slot - CACHE_KIND);
		return *slot != CACHE_NONE;
	}
	rc = classify(f->n, token, out);
	if (slot && rc >= 0)
		*slot = (uint8_t)(rc ? CACHE_KIND + *out : CACHE_NONE);
	return rc;
}

static int push(struct weave_sites *s, uint32_t row, uint32_t offset, enum weave_kind kind, uint32_t callee,
		int callvirt)
{
	if (lt_grow(&s->calls, &s->cap, s->n + 1, sizeof *s->calls) < 0)
		return -1;
	s->calls[s->n++] = (struct weave_call){ .methoddef = row, .il_offset = offset, .kind = kind, .callee = callee,
						.callvirt = (uint8_t)callvirt };
	return 0;
}

/* One call or callvirt of MethodDef f->row (il_scan_calls): a site when it calls a lock API. */
static int found_call(void *ctx, uint32_t offset, enum il_op op, uint32_t token)
{
	struct finder *f = ctx;
	enum weave_kind kind = WEAVE_KIND_COUNT;
	int hit = classify_cached(f, token, &kind);

	if (hit < 0)
		return lt_error_prefix("IL_%04x: ", offset);
	return hit ? push(f->out, f->row, offset, kind, token, op == IL_CALLVIRT) : 0;
}

/* The lock calls of MethodDef `row`, appended to f->out. */
static int find_in_method(struct finder *f, uint32_t row)
{
	const struct md_image *md = &f->n->img->md;
	uint32_t impl = md_get(md, MD_METHODDEF, row, MD_METHODDEF_IMPLFLAGS);
	const uint8_t *body;
	size_t len;

	/* II.23.1.11: only IL bodies (CodeType 0) are read. */
	if ((impl & IMPL_CODE_TYPE_MASK) != 0)
		return 0;
	if (img_method_body(f->n->img, row, &body, &len) < 0)
		return -1;
	if (!body)
		return 0;
	if (impl & IMPL_SYNCHRONIZED) {
		/* An instance method of a value type has no object to lock. */
		uint32_t owner = weave_names_owner(f->n, row);
		int skip = owner && !(md_get(md, MD_METHODDEF, row, MD_METHODDEF_FLAGS) & METHOD_STATIC)
				   ? weave_names_is_valuetype(f->n, owner) : 0;
		if (skip < 0 || (!skip && push(f->out, row, 0, WEAVE_SYNCHRONIZED, 0, 0) < 0))
			return lt_error_prefix("MethodDef row %u: ", row);
	}
	f->row = row;
	/* Reading only calls: the full decode is for the bodies that have sites. */
	if (il_scan_calls(body, len, found_call, f) < 0)
		return lt_error_prefix("MethodDef row %u: ", row);
	return 0;
}

int weave_sites_find(const struct weave_names *names, struct weave_sites *out)
{
	const struct md_image *md = &names->img->md;
	struct finder f = { names, NULL, NULL, out, 0 };
	uint32_t row, helper = 0, t;
	int rc = -1;

	memset(out, 0, sizeof *out);
	f.memberref = lt_calloc(md_rows(md, MD_MEMBERREF) + 1, 1);
	f.methoddef = lt_calloc(names->nmethods + 1, 1);
	if (!f.memberref || !f.methoddef) {
		lt_nomem(NULL);
		goto done;
	}
	for (t = 1; t <= names->ntypes && !helper; t++) {
		int is = weave_names_is_helper(md, t);
		if (is < 0)
			goto done;
		helper = is ? t : 0;
	}
	for (row = 1; row <= names->nmethods; row++) {
		uint32_t owner = weave_names_owner(names, row);
		if ((helper == 0 || owner != helper) && find_in_method(&f, row) < 0)
			goto done;
	}
	rc = 0;
done:
	free(f.memberref);
	free(f.methoddef);
	if (rc < 0)
		weave_sites_free(out);
	return rc;
}

void weave_sites_free(struct weave_sites *s)
{
	if (!s)
		return;
	free(s->calls);
	memset(s, 0, sizeof *s);
}
