/* weave_stub_type.c - the stub type <LockTime>: the run-time merged in, its TypeDef, rows and stub bodies encoded. */
#include "weave_stubs_int.h"
#include "weave_pass.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "lt_utf8.h"
#include "md_find.h"
#include "sig.h"

#include <stdio.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* TypeDef flags (II.23.1.15): NotPublic | Abstract | Sealed | BeforeFieldInit. */
#define STUB_TYPE_FLAGS 0x00100180u

/* Largest threshold baked in: the run-time's own limit for LOCKTIME_THRESHOLD_MS (Settings.cs). */
#define THRESHOLD_MS_MAX 1e12

int weave_stubs_add_method(struct weave_stubs *h, const char *name, uint16_t flags, const uint8_t *sig, size_t len,
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

int weave_stubs_add_body(struct weave_stubs *h, uint32_t method, struct em *e, const uint8_t *locals, size_t len,
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

/* II.22.37: the stub type is the last TypeDef, after the merged run-time's, so
 * every MethodDef appended from now on is in its list and no existing token
 * moves.  It extends System.Object as the merged Api class does (its
 * Extends, already resolved in the target's framework). */
static int add_typedef(struct weave_stubs *h)
{
	struct md_image *md = &h->img->md;
	uint32_t cells[MD_TYPEDEF_COLS] = { STUB_TYPE_FLAGS }, api = 0;
	uint32_t n = md_rows(md, MD_TYPEDEF);

	for (uint32_t t = n; t >= 1 && !api; t--)
		if (md_get(md, MD_TYPEDEF, t, MD_TYPEDEF_METHODLIST) <= md_token_row(h->hook[HK_ACQUIRED]))
			api = t;
	if (!api)
		return lt_error_set(LT_E_WEAVE, "the merged run-time's Api class has no TypeDef");
	cells[MD_TYPEDEF_EXTENDS] = md_get(md, MD_TYPEDEF, api, MD_TYPEDEF_EXTENDS);
	cells[MD_TYPEDEF_FIELDLIST] = md_rows(md, MD_FIELD) + 1;
	cells[MD_TYPEDEF_METHODLIST] = md_rows(md, MD_METHODDEF) + 1;
	if (md_add_string(md, WEAVE_STUB_TYPE, &cells[MD_TYPEDEF_NAME]) < 0 ||
	    md_append_row(md, MD_TYPEDEF, cells, &h->typedef_row) < 0)
		return -1;
	return 0;
}

/* Largest --lines: LOCKTIME_LINES's (Settings.cs LinesMax). */
#define LINES_MAX 1e6

const char *weave_lines_value(const char *s)
{
	char *end;
	double d;

	if (!strcasecmp(s, "all"))
		return "all";
	/* The run-time's Decimal: no blanks, no sign but '-' (refused below), no hex, inf or nan. */
	if (!strchr("0123456789.", s[0]) || strpbrk(s, "xXpPiInN \t"))
		return NULL;
	d = strtod(s, &end);
	return *end || end == s || !(d >= 0) || d > LINES_MAX ? NULL : s;
}

/* The weave's options that the run-time cannot be given (Baked.*, parsed as
 * its LOCKTIME_* variables are: Settings.cs). */
static int check_options(const struct weave_opts *opts)
{
	const char *const texts[2][2] = { { "output", opts->output }, { "report", opts->report } };

	if (!isfinite(opts->threshold_ms) || opts->threshold_ms < 0 || opts->threshold_ms > THRESHOLD_MS_MAX)
		return lt_error_set(LT_E_WEAVE, "threshold %g ms: not between 0 and %g", opts->threshold_ms,
				    THRESHOLD_MS_MAX);
	if (opts->output && !opts->output[0])
		return lt_error_set(LT_E_WEAVE, "empty output name");
	/* Baked into the run-time as .NET strings: a path that is not UTF-8 would name another file. */
	for (unsigned i = 0; i < 2; i++)
		if (texts[i][1] && !lt_utf8_valid(texts[i][1]))
			return lt_error_set(LT_E_WEAVE, "%s \"%.60s\" is not valid UTF-8", texts[i][0], texts[i][1]);
	if (opts->summary && (!opts->summary[0] || strspn(opts->summary, "0123456789") != strlen(opts->summary) ||
			      strlen(opts->summary) > 9))
		return lt_error_set(LT_E_WEAVE, "summary \"%.20s\": not a number of rows", opts->summary);
	if (opts->lock_order && strcmp(opts->lock_order, "0") && strcmp(opts->lock_order, "1"))
		return lt_error_set(LT_E_WEAVE, "lock order \"%.20s\": not 0 or 1", opts->lock_order);
	if (opts->lines && !weave_lines_value(opts->lines))
		return lt_error_set(LT_E_WEAVE, "lines \"%.20s\": not all or a number of lines a second from 0 to %g",
				    opts->lines, LINES_MAX);
	return 0;
}

/* weave_stubs_check_hooks's report: keeps the first finding. */
static void first_hook_finding(void *ctx, const char *what)
{
	char *first = ctx;

	if (!first[0])
		snprintf(first, 400, "%s", what);
}

/* The run-time template, linked in (build/gen/runtime_template.c): loaded, its hooks checked
 * (weave_stubs_check_hooks) and prepared for merging (weave_template_open) on the first weave of the
 * process, then kept for every other (it is the same bytes; the weaver runs on one thread).  Returns 0
 * with *out, or -1 (tried again on the next call). */
static int runtime_template(const struct weave_template **out)
{
	static struct img *img;
	static struct weave_template *prepared;
	char finding[400] = "";
	uint8_t *copy;
	long found;

	if (prepared) {
		*out = prepared;
		return 0;
	}
	if (!(copy = lt_malloc(lt_runtime_template_len)))
		return lt_nomem("the run-time template");
	memcpy(copy, lt_runtime_template, lt_runtime_template_len);
	if (img_load(&img, copy, lt_runtime_template_len) < 0)
		return lt_error_prefix("the run-time template: ");
	if ((found = weave_stubs_check_hooks(img, first_hook_finding, finding)) != 0) {
		if (found < 0)
			lt_error_prefix("the run-time template: ");
		else
			lt_error_set(LT_E_WEAVE, "the run-time template lacks what the weaver needs: %s%s", finding,
				     found > 1 ? " (and more: weave_stubs_check_hooks lists them)" : "");
	} else if (weave_template_open(img, &prepared) == 0) {
		*out = prepared;
		return 0;
	}
	img_free(img);
	img = NULL;
	return -1;
}

/* Merge the run-time with the options baked in and the site table, and
 * look up the hooks (enum hhook) among the merged members. */
static int merge_runtime(struct weave_stubs *h, const struct weave_opts *opts, const struct weave_site_table *sites)
{
	char threshold[32];
	struct weave_subst substs[12];
	struct weave_merge_map map;
	const struct weave_template *tmpl = NULL;
	size_t n = 0;
	int rc;

	snprintf(threshold, sizeof threshold, "%.17g", opts->threshold_ms);
	substs[n++] = (struct weave_subst){ .method = "LockTime.Runtime.Baked::ThresholdMs", .kind = WEAVE_SUBST_STRING,
					    .string = threshold };
	substs[n++] = (struct weave_subst){ .method = "LockTime.Runtime.Baked::Output", .kind = WEAVE_SUBST_STRING,
					    .string = opts->output ? opts->output : "stderr" };
	if (opts->summary)
		substs[n++] = (struct weave_subst){ .method = "LockTime.Runtime.Baked::Summary",
						    .kind = WEAVE_SUBST_STRING, .string = opts->summary };
	if (opts->report)
		substs[n++] = (struct weave_subst){ .method = "LockTime.Runtime.Baked::Report", .kind = WEAVE_SUBST_STRING,
						    .string = opts->report };
	if (opts->lock_order)
		substs[n++] = (struct weave_subst){ .method = "LockTime.Runtime.Baked::LockOrder",
						    .kind = WEAVE_SUBST_STRING, .string = opts->lock_order };
	if (opts->lines)
		substs[n++] = (struct weave_subst){ .method = "LockTime.Runtime.Baked::Lines", .kind = WEAVE_SUBST_STRING,
						    .string = opts->lines };
	substs[n++] = (struct weave_subst){ .method = "LockTime.Runtime.Clock::Ticks", .kind = WEAVE_SUBST_CORLIB_TIMESTAMP };
	substs[n++] = (struct weave_subst){ .method = "LockTime.Runtime.Clock::Frequency",
					    .kind = WEAVE_SUBST_CORLIB_FREQUENCY };
	substs[n++] = (struct weave_subst){ .method = "LockTime.Runtime.SiteList::Load", .kind = WEAVE_SUBST_EMIT,
					    .emit = weave_stubs_site_list, .ctx = (void *)sites };
	substs[n++] = (struct weave_subst){ .method = "LockTime.Runtime.Signals::RegisterDirect", .kind = WEAVE_SUBST_SIGTERM };
	/* A program's SIGINT handler, registered before its code runs (weave_early); a library's handler could come
	 * before the program's, which may cancel the signal (Signals.WatchInterrupt). */
	if (weave_entry_point(h->img))
		substs[n++] = (struct weave_subst){ .method = "LockTime.Runtime.Signals::RegisterInterruptDirect",
						    .kind = WEAVE_SUBST_SIGINT };
	substs[n++] = (struct weave_subst){ .method = "LockTime.Runtime.ExitOrder::WatchUnloading",
					    .kind = WEAVE_SUBST_UNLOADING };
	if (runtime_template(&tmpl) < 0)
		return -1;
	rc = weave_merge(h->img, tmpl, opts, substs, n, &map);
	if (rc == 1)
		return lt_error_set(LT_E_WEAVE, "the assembly already holds LockTime's run-time types");
	if (rc < 0)
		return -1;
	h->trim_unfit = map.trim_unfit;
	for (unsigned k = 0; k < HK_COUNT && rc == 0; k++)
		if (!weave_merge_find(&map, weave_hooks[k].name, &h->hook[k]))
			rc = lt_error_set(LT_E_WEAVE, "the run-time template has no %s", weave_hooks[k].name);
	return rc;
}

unsigned weave_stubs_trim_unfit(const struct weave_stubs *h)
{
	return h->trim_unfit;
}

uint32_t weave_stubs_watch(const struct weave_stubs *h)
{
	return h->hook[HK_WATCH];
}

int weave_stubs_begin(struct img *img, const struct weave_opts *opts, const struct weave_site_table *sites,
		       struct weave_stubs **out)
{
	struct weave_stubs *h;

	if (check_options(opts) < 0)
		return -1;
	if (!(h = lt_calloc(1, sizeof *h)))
		return lt_nomem(NULL);
	h->img = img;
	if (merge_runtime(h, opts, sites) < 0 || add_typedef(h) < 0) {
		weave_stubs_free(h);
		return -1;
	}
	*out = h;
	return 0;
}

int weave_stubs_site_list(void *ctx, struct img *target, const struct weave_merge_map *map, struct em *e)
{
	const struct weave_site_table *t = ctx;
	uint32_t begin, define, within;

	(void)target;
	if (!weave_merge_find(map, "LockTime.Runtime.SiteTable::Begin", &begin) ||
	    !weave_merge_find(map, "LockTime.Runtime.SiteTable::Define", &define) ||
	    !weave_merge_find(map, "LockTime.Runtime.SiteTable::Within", &within))
		return lt_error_set(LT_E_WEAVE, "the run-time template has no SiteTable::Begin, Define or Within");
	em_ldarg(e, 0);
	em_tok(e, IL_LDSTR, t->assembly);
	em_i4(e, (int32_t)t->n);
	em_tok(e, IL_CALL, begin);
	for (uint32_t i = 0; i < t->n; i++) {
		const struct weave_site_row *r = &t->rows[i];
		em_ldarg(e, 0);
		em_i4(e, (int32_t)i);
		em_tok(e, IL_LDSTR, r->method);
		em_tok(e, IL_LDSTR, r->location);
		em_tok(e, IL_LDSTR, r->file);
		em_i4(e, (int32_t)r->line);
		em_tok(e, IL_LDSTR, r->kind);
		em_tok(e, IL_CALL, define);
		if (!r->within_kind)
			continue;
		em_ldarg(e, 0);
		em_i4(e, (int32_t)i);
		em_tok(e, IL_LDSTR, r->within_kind);
		em_tok(e, IL_LDSTR, r->within_method);
		em_tok(e, IL_LDSTR, r->within_what);
		em_tok(e, IL_CALL, within);
	}
	em_op(e, IL_RET);
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
		return lt_error_set(LT_E_ENCODE, "stub body: call token 0x%08x is not a MemberRef or MethodDef", token);
	blob = md_get(md, t, row, t == MD_MEMBERREF ? MD_MEMBERREF_SIGNATURE : MD_METHODDEF_SIGNATURE);
	if (md_blob(md, blob, &p, &len) < 0 || sig_method_stack_effect(p, len, &nparams, &has_this, &returns) < 0)
		return lt_error_prefix("token 0x%08x: ", token);
	*pops = (int)nparams + (has_this && op != IL_NEWOBJ);
	*pushes = op == IL_NEWOBJ ? 1 : returns;
	return 0;
}

int weave_stubs_end(struct weave_stubs *h)
{
	struct lt_buf b = LT_BUF_INIT;
	int rc = 0;

	for (uint32_t i = 0; i < h->nbodies && rc == 0; i++) {
		b.len = 0;
		if (il_encode(&h->bodies[i].body, stack_effect, &h->img->md, &b) < 0 ||
		    img_set_method_body(h->img, h->bodies[i].row, b.data, b.len) < 0)
			rc = lt_error_prefix("%s MethodDef row %u: ", WEAVE_STUB_TYPE, h->bodies[i].row);
	}
	lt_buf_free(&b);
	weave_stubs_free(h);
	return rc;
}

void weave_stubs_free(struct weave_stubs *h)
{
	if (!h)
		return;
	for (uint32_t i = 0; i < h->nbodies; i++)
		il_body_free(&h->bodies[i].body);
	free(h->bodies);
	free(h->wrappers);
	free(h);
}
