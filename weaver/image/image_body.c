/* image_body.c - method bodies of an open assembly as instruction lists. */
#include "image_body.h"
#include "lt_error.h"
#include "sig.h"

/* The signature blob of a method token: MethodDef.Signature or
 * MemberRef.Signature; a MethodSpec is followed to its Method. */
static int method_sig(const struct md_image *md, uint32_t token, const uint8_t **p, uint32_t *len)
{
	enum md_table_id t = md_token_table(token);
	uint32_t row = md_token_row(token), blob;

	if (t == MD_METHODSPEC && row >= 1 && row <= md_rows(md, MD_METHODSPEC)) {
		if (md_coded_decode(MD_CI_METHODDEFORREF, md_get(md, MD_METHODSPEC, row, MD_METHODSPEC_METHOD), &token) < 0)
			return -1;
		t = md_token_table(token);
		row = md_token_row(token);
	}
	if (t == MD_METHODDEF && row >= 1 && row <= md_rows(md, MD_METHODDEF))
		blob = md_get(md, MD_METHODDEF, row, MD_METHODDEF_SIGNATURE);
	else if (t == MD_MEMBERREF && row >= 1 && row <= md_rows(md, MD_MEMBERREF))
		blob = md_get(md, MD_MEMBERREF, row, MD_MEMBERREF_SIGNATURE);
	else if (t == MD_STANDALONESIG && row >= 1 && row <= md_rows(md, MD_STANDALONESIG))
		blob = md_get(md, MD_STANDALONESIG, row, MD_STANDALONESIG_SIGNATURE);
	else
		return lt_error_set(LT_E_BODY, "token 0x%08x is not a method in this assembly", token);
	return md_blob(md, blob, p, len);
}

int img_stack_effect(void *ctx, uint32_t token, enum il_op op, int *pops, int *pushes)
{
	const struct img *img = ctx;
	const uint8_t *p;
	uint32_t len, nparams;
	int has_this, ret;

	if (op == IL_CALLI && md_token_table(token) != MD_STANDALONESIG)
		return lt_error_set(LT_E_BODY, "calli token 0x%08x is not a StandAloneSig", token);
	if (method_sig(&img->md, token, &p, &len) < 0 ||
	    sig_method_stack_effect(p, len, &nparams, &has_this, &ret) < 0)
		return -1;
	/* III.4.21: newobj pushes the new object and takes no `this` argument;
	 * III.3.20: calli also pops the function pointer. */
	if (op == IL_NEWOBJ) {
		*pops = (int)nparams;
		*pushes = 1;
	} else {
		*pops = (int)nparams + (has_this ? 1 : 0) + (op == IL_CALLI ? 1 : 0);
		*pushes = ret ? 1 : 0;
	}
	return 0;
}

int img_decode_body(const struct img *img, uint32_t row, struct il_body *out)
{
	const uint8_t *body, *sig;
	size_t len;
	uint32_t siglen, nparams;
	int has_this, ret;

	if (img_method_body(img, row, &body, &len) < 0)
		return -1;
	if (!body)
		return lt_error_set(LT_E_BODY, "MethodDef row %u has no body", row);
	if (md_blob(&img->md, md_get(&img->md, MD_METHODDEF, row, MD_METHODDEF_SIGNATURE), &sig, &siglen) < 0 ||
	    sig_method_stack_effect(sig, siglen, &nparams, &has_this, &ret) < 0 ||
	    il_decode(body, len, out) < 0)
		return lt_error_prefix("MethodDef row %u: ", row);
	out->returns_value = ret;
	return 0;
}

int img_encode_body(struct img *img, uint32_t row, struct il_body *b)
{
	struct lt_buf out = LT_BUF_INIT;
	struct pdb_map *map = NULL, *both;
	const struct img_body *old = row - 1 < img->nbodies ? &img->bodies[row - 1] : NULL;
	const struct pdb_map *earlier = old ? old->map : NULL;
	/* A body set as bytes has no map to the input: nor has its re-encoding. */
	int unmapped = old && old->data && !old->map;
	int rc = -1;

	if (il_encode(b, img_stack_effect, img, &out) < 0) {
		lt_buf_free(&out);
		return lt_error_prefix("MethodDef row %u: ", row);
	}
	/* b was decoded from the body an earlier encode wrote: chain the maps,
	 * so the map always starts at the input's offsets.  A body whose map
	 * cannot be made (instructions claiming one input offset) is kept
	 * without one: its debug symbols go stale, the edit still stands. */
	if (pdb_map_from_body(b, &map) < 0 || (earlier && pdb_map_compose(earlier, map, &both) < 0)) {
		if (lt_error_last()->code == LT_E_NOMEM)
			goto done;
		unmapped = 1;
	} else if (earlier) {
		pdb_map_free(map);
		map = both;
	}
	if (img_set_method_body(img, row, out.data, out.len) < 0)
		goto done;
	if (!unmapped) {
		img->bodies[row - 1].map = map;
		map = NULL;
	}
	rc = 0;
done:
	if (rc < 0)
		lt_error_prefix("MethodDef row %u: ", row);
	pdb_map_free(map);
	lt_buf_free(&out);
	return rc;
}

int img_add_locals(struct img *img, struct il_body *b, const uint8_t *types, uint32_t len, uint32_t n,
		   uint16_t *first)
{
	struct lt_buf sig = LT_BUF_INIT;
	const uint8_t *old = NULL;
	uint32_t oldlen = 0, cells[1], row;
	int rc = -1;

	if (b->local_var_sig_tok) {
		uint32_t r = md_token_row(b->local_var_sig_tok);
		if (md_token_table(b->local_var_sig_tok) != MD_STANDALONESIG || r == 0 ||
		    r > md_rows(&img->md, MD_STANDALONESIG))
			return lt_error_set(LT_E_METADATA, "LocalVarSigTok 0x%08x is not a StandAloneSig row",
					    b->local_var_sig_tok);
		if (md_blob(&img->md, md_get(&img->md, MD_STANDALONESIG, r, MD_STANDALONESIG_SIGNATURE), &old, &oldlen) < 0)
			return -1;
	}
	if (sig_locals_append(old, oldlen, types, len, n, &sig, first) < 0 ||
	    md_add_blob(&img->md, sig.data, (uint32_t)sig.len, &cells[0]) < 0 ||
	    md_append_row(&img->md, MD_STANDALONESIG, cells, &row) < 0)
		goto done;
	b->local_var_sig_tok = md_token(MD_STANDALONESIG, row);
	b->init_locals = 1;
	rc = 0;
done:
	lt_buf_free(&sig);
	return rc;
}
