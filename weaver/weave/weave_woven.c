/* weave_woven.c - the lock sites of an assembly LockTime has woven, read back from the calls to its wrappers. */
#include "weave_pass.h"
#include "il_body.h"
#include "image_body.h"
#include "lt_error.h"

#include <string.h>

/* II.22.26 MethodImplAttributes CodeType: 0 is IL. */
#define IMPL_CODE_TYPE_MASK 0x0003u

struct woven_scan {
	const struct md_image *md;
	uint32_t helper_first, helper_end; /* the helper's MethodDef rows [first, end) */
	int any;                           /* a call to one of them was met */
};

/* A MethodDef token of the helper type. */
static int is_helper_call(const struct woven_scan *w, uint32_t token)
{
	uint32_t row = token & 0xFFFFFF;

	return token >> 24 == 0x06 && row >= 1 && row <= md_rows(w->md, MD_METHODDEF) && row >= w->helper_first &&
	       row < w->helper_end;
}

static int note_call(void *ctx, uint32_t offset, enum il_op op, uint32_t token)
{
	struct woven_scan *w = ctx;

	(void)offset;
	(void)op;
	w->any |= is_helper_call(w, token);
	return 0;
}

/* The sites of MethodDef `row`: calls to an acquiring wrapper after the
 * `ldstr method; ldstr location` pair the weaver put before them
 * (weave_rewrite_method, weave_sync_wrap). */
static long method_sites(const struct img *img, const struct woven_scan *w, uint32_t row,
			 void (*fn)(void *ctx, const struct weave_site *s), void *ctx)
{
	struct weave_site s;
	struct il_body b;
	long count = 0;
	const char *name;

	if (img_decode_body(img, row, &b) < 0)
		return lt_error_prefix("MethodDef row %u: ", row);
	for (uint32_t i = 2; i < b.n; i++) {
		const struct il_instr *in = &b.ins[i];
		enum weave_kind kind;
		if (in->op != IL_CALL || !is_helper_call(w, in->arg.token) || b.ins[i - 1].op != IL_LDSTR ||
		    b.ins[i - 2].op != IL_LDSTR)
			continue;
		if (md_string(w->md, md_get(w->md, MD_METHODDEF, in->arg.token & 0xFFFFFF, MD_METHODDEF_NAME), &name) < 0) {
			count = -1;
			break;
		}
		if (!weave_helper_kind_of(name, &kind) || !weave_kind_acquires(kind))
			continue;
		memset(&s, 0, sizeof s);
		s.methoddef = row;
		s.il_offset = in->orig_offset;
		s.kind = kind;
		s.woven = 1;
		if (img_string_of_token(img, b.ins[i - 2].arg.token, s.method, sizeof s.method) < 0 ||
		    img_string_of_token(img, b.ins[i - 1].arg.token, s.location, sizeof s.location) < 0) {
			count = -1;
			break;
		}
		fn(ctx, &s);
		count++;
	}
	il_body_free(&b);
	return count < 0 ? lt_error_prefix("MethodDef row %u: ", row) : count;
}

long weave_list_woven(const struct img *img, void (*fn)(void *ctx, const struct weave_site *s), void *ctx)
{
	const struct md_image *md = &img->md;
	struct woven_scan w = { md, 0, 0, 0 };
	uint32_t ntypes = md_rows(md, MD_TYPEDEF), nmethods = md_rows(md, MD_METHODDEF), t;
	long count = 0, n;

	for (t = 1; t <= ntypes && !w.helper_end; t++) {
		int is = weave_names_is_helper(md, t);
		if (is < 0)
			return -1;
		if (!is)
			continue;
		/* II.22.37: a type's methods run from its MethodList to the next type's. */
		w.helper_first = md_get(md, MD_TYPEDEF, t, MD_TYPEDEF_METHODLIST);
		w.helper_end = t < ntypes ? md_get(md, MD_TYPEDEF, t + 1, MD_TYPEDEF_METHODLIST) : nmethods + 1;
	}
	for (uint32_t row = 1; row <= nmethods; row++) {
		const uint8_t *body;
		size_t len;
		if ((row >= w.helper_first && row < w.helper_end) ||
		    (md_get(md, MD_METHODDEF, row, MD_METHODDEF_IMPLFLAGS) & IMPL_CODE_TYPE_MASK) != 0)
			continue;
		if (img_method_body(img, row, &body, &len) < 0)
			return lt_error_prefix("MethodDef row %u: ", row);
		w.any = 0;
		if (body && il_scan_calls(body, len, note_call, &w) < 0)
			return lt_error_prefix("MethodDef row %u: ", row);
		if (!w.any)
			continue;
		if ((n = method_sites(img, &w, row, fn, ctx)) < 0)
			return -1;
		count += n;
	}
	return count;
}
