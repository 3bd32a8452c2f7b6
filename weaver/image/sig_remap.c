/* sig_remap.c - a signature blob re-encoded with its type tokens mapped (II.23.2.8, II.23.2.12). */
#include "sig.h"
#include "lt_error.h"

static int map_method(struct sig_method *m, sig_token_map_fn fn, void *ctx);

/* Every TypeDefOrRefOrSpecEncoded token of t and the types inside it. */
static int map_type(struct sig_type *t, sig_token_map_fn fn, void *ctx)
{
	if (!t)
		return 0;
	switch (t->elem) {
	case SIG_CLASS:
	case SIG_VALUETYPE:
	case SIG_CMOD_REQD:
	case SIG_CMOD_OPT:
	case SIG_GENERICINST:
		if (fn(ctx, t->token, &t->token) < 0)
			return -1;
		break;
	case SIG_FNPTR:
		return map_method(t->method, fn, ctx);
	default:
		break;
	}
	for (uint32_t i = 0; i < t->nargs; i++)
		if (map_type(t->args[i], fn, ctx) < 0)
			return -1;
	return map_type(t->inner, fn, ctx);
}

static int map_method(struct sig_method *m, sig_token_map_fn fn, void *ctx)
{
	if (!m)
		return 0;
	if (map_type(m->ret, fn, ctx) < 0)
		return -1;
	for (uint32_t i = 0; i < m->nparams; i++)
		if (map_type(m->params[i], fn, ctx) < 0)
			return -1;
	return 0;
}

static int map_list(struct sig_list *l, sig_token_map_fn fn, void *ctx)
{
	for (uint32_t i = 0; i < l->count; i++)
		if (map_type(l->types[i], fn, ctx) < 0)
			return -1;
	return 0;
}

int sig_remap(const uint8_t *p, size_t len, int typespec, sig_token_map_fn fn, void *ctx, struct lt_buf *out)
{
	struct sig_method *m = NULL;
	struct sig_type *t = NULL;
	struct sig_list *l = NULL;
	uint8_t kind = len ? p[0] & SIG_CONV_MASK : 0;
	int rc;

	if (!len)
		return lt_error_set(LT_E_SIGNATURE, "empty signature (II.23.2)");
	if (typespec) {
		rc = sig_typespec_decode(p, len, &t);
		rc = rc < 0 ? rc : map_type(t, fn, ctx) < 0 ? -1 : sig_type_encode(t, out);
	} else if (kind == SIG_CONV_FIELD) {
		rc = sig_field_decode(p, len, &t);
		rc = rc < 0 ? rc : map_type(t, fn, ctx) < 0 ? -1 : sig_field_encode(t, out);
	} else if (kind == SIG_CONV_LOCAL_SIG || kind == SIG_CONV_GENERICINST) {
		rc = kind == SIG_CONV_LOCAL_SIG ? sig_locals_decode(p, len, &l) : sig_methodspec_decode(p, len, &l);
		rc = rc < 0 ? rc : map_list(l, fn, ctx) < 0 ? -1 : sig_list_encode(l, out);
	} else {
		rc = kind == SIG_CONV_PROPERTY ? sig_property_decode(p, len, &m) : sig_method_decode(p, len, &m);
		rc = rc < 0 ? rc : map_method(m, fn, ctx) < 0 ? -1 : sig_method_encode(m, out);
	}
	sig_type_free(t);
	sig_list_free(l);
	sig_method_free(m);
	return rc;
}
