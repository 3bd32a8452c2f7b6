/* weave_woven.c - the lock sites of an assembly LockTime has woven, read back from its site table. */
#include "weave_pass.h"
#include "il_body.h"
#include "image_body.h"
#include "lt_error.h"
#include "weave_merge.h"

#include <stdio.h>
#include <string.h>

/* The merged type holding the site table, and its method (weave_stubs_site_list). */
#define SITE_LIST_TYPE WEAVE_MERGE_PREFIX "SiteList"
#define SITE_LIST_METHOD "Load"

/* The value of an ldc.i4 form (III.3.40) into *v: 1, or 0 for another op. */
static int int_constant(const struct il_instr *in, int64_t *v)
{
	if (in->op >= IL_LDC_I4_M1 && in->op <= IL_LDC_I4_8) {
		*v = (int64_t)(in->op - IL_LDC_I4_0);
		return 1;
	}
	if (in->op == IL_LDC_I4_S || in->op == IL_LDC_I4) {
		*v = in->arg.i;
		return 1;
	}
	return 0;
}

/* The MethodDef row of SiteList.Load, 0 when the assembly has none. */
static int site_list_row(const struct md_image *md, uint32_t *out)
{
	uint32_t ntypes = md_rows(md, MD_TYPEDEF), nmethods = md_rows(md, MD_METHODDEF);
	const char *name, *ns;

	*out = 0;
	for (uint32_t t = 1; t <= ntypes; t++) {
		uint32_t first, end;
		if (md_string(md, md_get(md, MD_TYPEDEF, t, MD_TYPEDEF_NAME), &name) < 0 ||
		    md_string(md, md_get(md, MD_TYPEDEF, t, MD_TYPEDEF_NAMESPACE), &ns) < 0)
			return lt_error_prefix("TypeDef row %u: ", t);
		if (ns[0] || strcmp(name, SITE_LIST_TYPE) != 0)
			continue;
		/* II.22.37: a type's methods run from its MethodList to the next type's. */
		first = md_get(md, MD_TYPEDEF, t, MD_TYPEDEF_METHODLIST);
		end = t < ntypes ? md_get(md, MD_TYPEDEF, t + 1, MD_TYPEDEF_METHODLIST) : nmethods + 1;
		for (uint32_t m = first; m < end && m <= nmethods; m++) {
			if (md_string(md, md_get(md, MD_METHODDEF, m, MD_METHODDEF_NAME), &name) < 0)
				return lt_error_prefix("MethodDef row %u: ", m);
			if (strcmp(name, SITE_LIST_METHOD) == 0) {
				*out = m;
				return 0;
			}
		}
	}
	return 0;
}

/* The string of ldstr token `token` into method (any length: a name is
 * never cut).  Returns 0, or -1 with LT_E_METADATA or LT_E_NOMEM. */
static int method_string(const struct img *img, uint32_t token, struct lt_buf *method)
{
	const uint8_t *units;
	uint32_t len;

	if (md_us(&img->md, token & 0xFFFFFF, &units, &len) < 0)
		return lt_error_set(LT_E_METADATA, "string token 0x%08x: not a #US entry (III.1.9, II.24.2.4)", token);
	/* Each UTF-16 code unit (2 bytes) takes at most 3 bytes of UTF-8. */
	method->len = 0;
	if (lt_buf_reserve(method, (size_t)len / 2 * 3 + 1) < 0)
		return -1;
	return img_string_of_token(img, token, (char *)method->data, method->cap);
}

/* One Define call's arguments, the six instructions before the call at
 * ins[i]: ldc.i4 id, ldstr method, ldstr location, ldstr file, ldc.i4 line,
 * ldstr kind; s->method points into `method`.  Returns 1 and *s, 0 for
 * another call (Begin), -1 on error. */
static int define_call(const struct img *img, const struct il_instr *ins, uint32_t i, struct weave_site *s,
		       struct lt_buf *method)
{
	const struct il_instr *a = &ins[i - 6];
	char kind[64];
	int64_t id, line;

	if (!int_constant(&a[0], &id) || a[1].op != IL_LDSTR || a[2].op != IL_LDSTR || a[3].op != IL_LDSTR ||
	    !int_constant(&a[4], &line) || a[5].op != IL_LDSTR)
		return 0;
	memset(s, 0, sizeof *s);
	s->woven = 1;
	if (method_string(img, a[1].arg.token, method) < 0 ||
	    img_string_of_token(img, a[2].arg.token, s->location, sizeof s->location) < 0 ||
	    img_string_of_token(img, a[5].arg.token, kind, sizeof kind) < 0)
		return -1;
	if (!weave_kind_of_name(kind, &s->kind))
		return lt_error_set(LT_E_METADATA, "site %lld: unknown lock kind \"%s\"", (long long)id, kind);
	s->method = (const char *)method->data;
	return 1;
}

long weave_list_woven(const struct img *img, void (*fn)(void *ctx, const struct weave_site *s), void *ctx)
{
	struct weave_site s;
	struct lt_buf method = LT_BUF_INIT;
	struct il_body b;
	uint32_t row;
	long count = 0;
	int rc;

	if (site_list_row(&img->md, &row) < 0)
		return -1;
	if (!row)
		return lt_error_set(LT_E_METADATA, "woven by LockTime, but no %s::%s site table", SITE_LIST_TYPE,
				    SITE_LIST_METHOD);
	if (img_decode_body(img, row, &b) < 0)
		return lt_error_prefix("%s::%s: ", SITE_LIST_TYPE, SITE_LIST_METHOD);
	for (uint32_t i = 6; i < b.n; i++) {
		if (b.ins[i].op != IL_CALL)
			continue;
		if ((rc = define_call(img, b.ins, i, &s, &method)) < 0) {
			count = -1;
			break;
		}
		if (rc) {
			fn(ctx, &s);
			count++;
		}
	}
	il_body_free(&b);
	lt_buf_free(&method);
	return count < 0 ? lt_error_prefix("%s::%s: ", SITE_LIST_TYPE, SITE_LIST_METHOD) : count;
}
