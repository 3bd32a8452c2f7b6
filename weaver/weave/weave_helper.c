/* weave_helper.c - LockTime's helper type <LockTime>: its TypeDef, fields, rows, and body encoding. */
#include "weave_helper_int.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "lt_utf8.h"
#include "md_find.h"
#include "sig.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* TypeDef flags (II.23.1.15): NotPublic | Abstract | Sealed | BeforeFieldInit. */
#define HELPER_TYPE_FLAGS 0x00100180u
/* Field flags (II.23.1.5). */
enum { HFA_PRIVATE = 0x0001, HFA_STATIC = 0x0010, HFA_INITONLY = 0x0020 };

static const struct field_info {
	const char *name;
	uint16_t flags;
	uint8_t sig[3];    /* FieldSig (II.23.2.4) */
	uint8_t siglen;
	uint8_t thread_static;
} fields[HF_COUNT] = {
	[HF_DISABLED] = { "Disabled", HFA_PRIVATE | HFA_STATIC | HFA_INITONLY, { SIG_CONV_FIELD, SIG_BOOLEAN }, 2, 0 },
	[HF_THRESHOLD] = { "Threshold", HFA_PRIVATE | HFA_STATIC | HFA_INITONLY, { SIG_CONV_FIELD, SIG_I8 }, 2, 0 },
	[HF_OUTPUT] = { "Output", HFA_PRIVATE | HFA_STATIC | HFA_INITONLY, { SIG_CONV_FIELD, SIG_STRING }, 2, 0 },
	[HF_GATE] = { "Gate", HFA_PRIVATE | HFA_STATIC | HFA_INITONLY, { SIG_CONV_FIELD, SIG_OBJECT }, 2, 0 },
	[HF_FRAMES] = { "Frames", HFA_PRIVATE | HFA_STATIC, { SIG_CONV_FIELD, SIG_SZARRAY, SIG_OBJECT }, 3, 1 },
	[HF_TIMES] = { "Times", HFA_PRIVATE | HFA_STATIC, { SIG_CONV_FIELD, SIG_SZARRAY, SIG_I8 }, 3, 1 },
	[HF_DEPTH] = { "Depth", HFA_PRIVATE | HFA_STATIC, { SIG_CONV_FIELD, SIG_I4 }, 2, 1 },
	[HF_REPORTING] = { "Reporting", HFA_PRIVATE | HFA_STATIC, { SIG_CONV_FIELD, SIG_BOOLEAN }, 2, 1 },
};

/* A custom attribute blob with no arguments: prolog 0x0001, NumNamed 0 (II.23.3). */
static const uint8_t empty_attribute[4] = { 0x01, 0x00, 0x00, 0x00 };

int weave_helper_add_method(struct weave_helper *h, const char *name, uint16_t flags, const uint8_t *sig, size_t len,
		      uint32_t *out)
{
	struct md_image *md = &h->img->md;
	uint32_t cells[MD_METHODDEF_COLS] = { 0 }, row;

	cells[MD_METHODDEF_FLAGS] = flags;
	cells[MD_METHODDEF_PARAMLIST] = md_rows(md, MD_PARAM) + 1;
	if (md_add_string(md, name, &cells[MD_METHODDEF_NAME]) < 0 ||
	    md_add_blob(md, sig, (uint32_t)len, &cells[MD_METHODDEF_SIGNATURE]) < 0 ||
	    md_append_row(md, MD_METHODDEF, cells, &row) < 0)
		return -1;
	*out = md_token(MD_METHODDEF, row);
	return 0;
}

int weave_helper_add_body(struct weave_helper *h, uint32_t method, struct em *e, const uint8_t *locals, size_t len,
		    int returns_value)
{
	struct hbody *hb;
	uint32_t sig_tok = 0;

	if ((locals && md_standalonesig(&h->img->md, locals, (uint32_t)len, &sig_tok) < 0) ||
	    lt_grow(&h->bodies, &h->bodies_cap, h->nbodies + 1, sizeof *h->bodies) < 0) {
		em_free(e);
		return -1;
	}
	hb = &h->bodies[h->nbodies];
	hb->row = md_token_row(method);
	if (em_finish(e, &hb->body) < 0) {
		em_free(e);
		return -1;
	}
	em_free(e);
	hb->body.local_var_sig_tok = sig_tok;
	hb->body.init_locals = sig_tok != 0;
	hb->body.returns_value = returns_value;
	h->nbodies++;
	return 0;
}

void weave_helper_ldstr(struct weave_helper *h, struct em *e, const char *s)
{
	uint32_t tok;

	if (e->failed)
		return;
	if (img_string_token(h->img, s, &tok) < 0)
		e->failed = 1;
	else
		em_tok(e, IL_LDSTR, tok);
}

/* The fields, and [ThreadStatic] on the per-thread ones (II.22.10; md_write
 * sorts CustomAttribute by Parent). */
static int add_fields(struct weave_helper *h)
{
	struct md_image *md = &h->img->md;

	for (unsigned f = 0; f < HF_COUNT; f++) {
		uint32_t cells[MD_FIELD_COLS] = { fields[f].flags }, ca[MD_CUSTOMATTRIBUTE_COLS], row;
		if (md_add_string(md, fields[f].name, &cells[MD_FIELD_NAME]) < 0 ||
		    md_add_blob(md, fields[f].sig, fields[f].siglen, &cells[MD_FIELD_SIGNATURE]) < 0 ||
		    md_append_row(md, MD_FIELD, cells, &row) < 0)
			return -1;
		h->field[f] = md_token(MD_FIELD, row);
		if (!fields[f].thread_static)
			continue;
		if (md_coded_encode(MD_CI_HASCUSTOMATTRIBUTE, h->field[f], &ca[MD_CUSTOMATTRIBUTE_PARENT]) < 0 ||
		    md_coded_encode(MD_CI_CUSTOMATTRIBUTETYPE, h->refs.member[WM_THREADSTATIC_CTOR],
				    &ca[MD_CUSTOMATTRIBUTE_TYPE]) < 0 ||
		    md_add_blob(md, empty_attribute, sizeof empty_attribute, &ca[MD_CUSTOMATTRIBUTE_VALUE]) < 0 ||
		    md_append_row(md, MD_CUSTOMATTRIBUTE, ca, &row) < 0)
			return -1;
	}
	return 0;
}

/* II.22.37: the helper is the last TypeDef, so every Field and MethodDef
 * appended from now on is in its lists and no existing token moves. */
static int add_typedef(struct weave_helper *h)
{
	struct md_image *md = &h->img->md;
	uint32_t cells[MD_TYPEDEF_COLS] = { HELPER_TYPE_FLAGS };

	cells[MD_TYPEDEF_FIELDLIST] = md_rows(md, MD_FIELD) + 1;
	cells[MD_TYPEDEF_METHODLIST] = md_rows(md, MD_METHODDEF) + 1;
	if (md_add_string(md, WEAVE_HELPER_TYPE, &cells[MD_TYPEDEF_NAME]) < 0 ||
	    md_coded_encode(MD_CI_TYPEDEFORREF, h->refs.type[WT_OBJECT], &cells[MD_TYPEDEF_EXTENDS]) < 0 ||
	    md_append_row(md, MD_TYPEDEF, cells, &h->typedef_row) < 0)
		return -1;
	return 0;
}

/* What the helper cannot be added to, or with. */
static int check_target(const struct md_image *md, const struct weave_opts *opts)
{
	const char *name;

	if (!isfinite(opts->threshold_ms) || opts->threshold_ms < 0 || opts->threshold_ms > HELPER_THRESHOLD_MS_MAX)
		return lt_error_set(LT_E_WEAVE, "threshold %g ms: not between 0 and %g", opts->threshold_ms,
				    HELPER_THRESHOLD_MS_MAX);
	if (opts->output && !opts->output[0])
		return lt_error_set(LT_E_WEAVE, "empty output name");
	/* Baked into the helper as a .NET string: a path that is not UTF-8
	 * would name another file. */
	if (opts->output && !lt_utf8_valid(opts->output))
		return lt_error_set(LT_E_WEAVE, "output \"%.60s\" is not valid UTF-8", opts->output);
	/* II.24.2.6: with FieldPtr / MethodPtr / ParamPtr (uncompressed #-
	 * metadata) lists go through the pointer tables; not supported. */
	if (md_rows(md, MD_FIELDPTR) || md_rows(md, MD_METHODPTR) || md_rows(md, MD_PARAMPTR))
		return lt_error_set(LT_E_WEAVE, "metadata with FieldPtr/MethodPtr/ParamPtr tables (II.24.2.6): not supported");
	for (uint32_t r = 1; r <= md_rows(md, MD_TYPEDEF); r++) {
		if (md_string(md, md_get(md, MD_TYPEDEF, r, MD_TYPEDEF_NAME), &name) < 0)
			return -1;
		if (strcmp(name, WEAVE_HELPER_TYPE) == 0)
			return lt_error_set(LT_E_WEAVE, "TypeDef row %u: the assembly already has LockTime's helper type", r);
	}
	return 0;
}

int weave_helper_begin(struct img *img, const struct weave_opts *opts, struct weave_helper **out)
{
	struct weave_helper *h;

	if (check_target(&img->md, opts) < 0)
		return -1;
	if (!(h = lt_calloc(1, sizeof *h)))
		return lt_nomem(NULL);
	h->img = img;
	h->threshold_ms = opts->threshold_ms;
	h->output = opts->output ? opts->output : "stderr";
	if (wref_resolve(img, opts, &h->refs) < 0 || add_typedef(h) < 0 || add_fields(h) < 0 || hbody_add_all(h) < 0) {
		weave_helper_free(h);
		return -1;
	}
	h->output = NULL; /* borrowed from opts: used by the .cctor only */
	*out = h;
	return 0;
}

/* il_encode's stack-effect callback (III.3.19 call, III.4.21 newobj): a
 * MemberRef or MethodDef token of the image's metadata. */
static int stack_effect(void *ctx, uint32_t token, enum il_op op, int *pops, int *pushes)
{
	const struct md_image *md = ctx;
	enum md_table_id t = md_token_table(token);
	uint32_t row = md_token_row(token), blob, nparams;
	const uint8_t *p;
	uint32_t len;
	int has_this, returns;

	if ((t != MD_MEMBERREF && t != MD_METHODDEF) || row == 0 || row > md_rows(md, t))
		return lt_error_set(LT_E_ENCODE, "helper body: call token 0x%08x is not a MemberRef or MethodDef", token);
	blob = md_get(md, t, row, t == MD_MEMBERREF ? MD_MEMBERREF_SIGNATURE : MD_METHODDEF_SIGNATURE);
	if (md_blob(md, blob, &p, &len) < 0 || sig_method_stack_effect(p, len, &nparams, &has_this, &returns) < 0)
		return lt_error_prefix("token 0x%08x: ", token);
	*pops = (int)nparams + (has_this && op != IL_NEWOBJ);
	*pushes = op == IL_NEWOBJ ? 1 : returns;
	return 0;
}

int weave_helper_end(struct weave_helper *h)
{
	struct lt_buf b = LT_BUF_INIT;
	int rc = 0;

	for (uint32_t i = 0; i < h->nbodies && rc == 0; i++) {
		b.len = 0;
		if (il_encode(&h->bodies[i].body, stack_effect, &h->img->md, &b) < 0 ||
		    img_set_method_body(h->img, h->bodies[i].row, b.data, b.len) < 0)
			rc = lt_error_prefix("%s MethodDef row %u: ", WEAVE_HELPER_TYPE, h->bodies[i].row);
	}
	lt_buf_free(&b);
	weave_helper_free(h);
	return rc;
}

void weave_helper_free(struct weave_helper *h)
{
	if (!h)
		return;
	for (uint32_t i = 0; i < h->nbodies; i++)
		il_body_free(&h->bodies[i].body);
	free(h->bodies);
	free(h->wrappers);
	free(h->scopes);
	free(h);
}
