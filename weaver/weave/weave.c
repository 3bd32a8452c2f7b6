/* weave.c - the weaving passes: list the lock sites of an assembly, or weave them (docs/weaving.md). */
#include "weave.h"
#include "weave_pass.h"
#include "lt_error.h"
#include "lt_hash.h"
#include "lt_mem.h"
#include "weave_merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Index the image and find its lock calls. */
static int scan(const struct img *img, struct weave_names *names, struct weave_sites *sites)
{
	if (weave_names_init(names, img) < 0)
		return -1;
	if (weave_sites_find(names, sites) < 0) {
		weave_names_free(names);
		return -1;
	}
	return 0;
}

long weave_list_pdb(const struct img *img, const struct pdb_found *pdb,
		    int (*read_source)(const char *path, uint8_t **data, size_t *size),
		    void (*fn)(void *ctx, const struct weave_site *s), void *ctx)
{
	struct weave_names names;
	struct weave_sites sites;
	struct weave_site s;
	struct wlines lines;
	struct lt_buf method = LT_BUF_INIT;
	long count = 0;
	size_t i;
	int woven = weave_is_woven(img);

	if (woven)
		return woven < 0 ? -1 : weave_list_woven(img, fn, ctx);
	if (scan(img, &names, &sites) < 0)
		return -1;
	if (wlines_init(&lines, pdb, read_source) < 0) {
		count = -1;
		sites.n = 0;
	} else if (weave_sites_locate(img, &lines, &sites) < 0) {
		count = -1;
	}
	memset(&s, 0, sizeof s);
	for (i = 0; i < sites.n && count >= 0; i++) {
		const struct weave_call *c = &sites.calls[i];
		if (!weave_kind_acquires(c->kind))
			continue;
		/* Sites come grouped by method: name each method once. */
		if (c->methoddef != s.methoddef && weave_site_name(&names, &lines, c->methoddef, &method) < 0) {
			count = -1;
			break;
		}
		s.method = (const char *)method.data;
		s.methoddef = c->methoddef;
		s.il_offset = c->il_offset;
		s.kind = c->kind;
		if (!weave_location(&lines, c, s.location, sizeof s.location))
			s.location[0] = 0;
		fn(ctx, &s);
		count++;
	}
	lt_buf_free(&method);
	wlines_free(&lines);
	weave_sites_free(&sites);
	weave_names_free(&names);
	return count;
}

long weave_list(const struct img *img, void (*fn)(void *ctx, const struct weave_site *s), void *ctx)
{
	return weave_list_pdb(img, NULL, NULL, fn, ctx);
}

int weave_is_woven(const struct img *img)
{
	for (uint32_t t = 1; t <= md_rows(&img->md, MD_TYPEDEF); t++) {
		int is = weave_names_is_ours(&img->md, t);
		if (is != 0)
			return is;
	}
	return 0;
}

/* The ldstr token of the assembly's simple name (II.22.2 Assembly; a
 * module without one: its Module name, II.22.30). */
static int assembly_name(struct img *img, uint32_t *out)
{
	const struct md_image *md = &img->md;
	const char *name;
	int is_asm = md_rows(md, MD_ASSEMBLY) > 0;

	if (md_string(md, is_asm ? md_get(md, MD_ASSEMBLY, 1, MD_ASSEMBLY_NAME) : md_get(md, MD_MODULE, 1, MD_MODULE_NAME),
		      &name) < 0)
		return lt_error_prefix("%s row 1: ", is_asm ? "Assembly" : "Module");
	return img_string_token(img, name, out);
}

/* The site table's names of MethodDef `row` into r's method and within_*
 * tokens (its other fields zero): the name reports show (weave_site_name)
 * and, for a lambda or local function, what the code is inside which method
 * (weave_within_parts); `buf` is scratch.  Returns 0, or -1 as
 * weave_site_method or img_string_token. */
static int method_row(struct img *img, const struct weave_names *names, const struct wlines *lines, uint32_t row,
		      struct lt_buf *buf, struct weave_site_row *r)
{
	struct weave_within w;
	struct lt_buf what = LT_BUF_INIT;
	const char *kind;
	int rc = -1;

	memset(r, 0, sizeof *r);
	if (weave_site_method(names, lines, row, buf, &w) < 0 || !(kind = weave_within_parts(lines, &w, &what)))
		goto done;
	if (*kind && (img_string_token(img, kind, &r->within_kind) < 0 ||
		      img_string_token(img, (const char *)buf->data, &r->within_method) < 0 ||
		      img_string_token(img, (const char *)what.data, &r->within_what) < 0))
		goto done;
	if (weave_within_append(lines, &w, buf) < 0 || img_string_token(img, (const char *)buf->data, &r->method) < 0)
		goto done;
	rc = 0;
done:
	lt_buf_free(&what);
	return rc;
}

/* Number the acquiring sites of `sites` (weave_call.site, in their order)
 * and make the site table's rows: *rows (owned) gets one per site. */
static int site_table(struct img *img, const struct weave_names *names, const struct wlines *lines,
		      struct weave_sites *sites, struct weave_site_table *t, struct weave_site_row **rows)
{
	char text[sizeof ((struct weave_site *)0)->location];
	struct lt_buf method = LT_BUF_INIT;
	struct weave_site_row named = { 0 };
	uint32_t kinds[WEAVE_KIND_COUNT] = { 0 }, empty, n = 0, row = 0;
	int rc = -1;

	*rows = NULL;
	memset(t, 0, sizeof *t);
	if (assembly_name(img, &t->assembly) < 0 || img_string_token(img, "", &empty) < 0)
		return -1;
	if (!(*rows = lt_calloc(sites->n + 1, sizeof **rows)))
		return lt_nomem("the site table");
	for (size_t i = 0; i < sites->n; i++) {
		struct weave_call *c = &sites->calls[i];
		struct weave_site_row *r = &(*rows)[n];
		if (!weave_kind_acquires(c->kind))
			continue;
		if (c->methoddef != row) {
			if (method_row(img, names, lines, c->methoddef, &method, &named) < 0)
				goto done;
			row = c->methoddef;
		}
		*r = named;
		r->file = empty;
		r->line = c->line;
		weave_location(lines, c, text, sizeof text);
		if (img_string_token(img, text, &r->location) < 0)
			goto done;
		if (c->line && wlines_path(lines, c->doc, text, sizeof text) &&
		    img_string_token(img, text, &r->file) < 0)
			goto done;
		if (!kinds[c->kind] && img_string_token(img, weave_kind_name(c->kind), &kinds[c->kind]) < 0)
			goto done;
		r->kind = kinds[c->kind];
		c->site = n++;
	}
	t->rows = *rows;
	t->n = n;
	rc = 0;
done:
	lt_buf_free(&method);
	return rc;
}

/* A size limit a method passed (LT_E_LIMIT: only hostile bodies do) names
 * the method as users know it; other errors say what broke as they are.
 * Returns -1. */
static int limit_in(const struct weave_names *names, uint32_t row)
{
	struct lt_buf method = LT_BUF_INIT;
	struct lt_error limit = *lt_error_last();
	int named;

	if (limit.code != LT_E_LIMIT)
		return -1;
	named = weave_names_method(names, row, &method, NULL) == 0;
	lt_error_set(limit.code, "%s", limit.msg);
	if (named)
		lt_error_prefix("%s: ", (const char *)method.data);
	else
		lt_error_prefix("MethodDef row %u: ", row);
	lt_buf_free(&method);
	return -1;
}

/* Rewrite every method that has lock sites, one run of sites per method. */
static int rewrite_all(struct img *img, struct weave_stubs *h, const struct weave_names *names,
		       const struct weave_sites *sites)
{
	size_t i = 0, j;

	while (i < sites->n) {
		for (j = i; j < sites->n && sites->calls[j].methoddef == sites->calls[i].methoddef; j++)
			;
		if (weave_rewrite_method(img, h, names, &sites->calls[i], j - i) < 0)
			return limit_in(names, sites->calls[i].methoddef);
		i = j;
	}
	return 0;
}

/* Give the woven module a new Mvid (II.22.30: it tells versions of a module
 * apart), so that native code compiled for the input and keyed by it (NGen
 * images; Mono's AOT code, matched by the first #GUID entry, which Mono
 * takes for the image's GUID) is not run in place of the woven IL.  The new
 * GUID replaces the first #GUID entry when the Mvid is that entry (what
 * compilers write; the input file's bytes stay, md_set_guid), else it is
 * appended.  It is derived, not random, so that the output stays
 * deterministic: the SHA-1 of the old Mvid, the baked options and every
 * rewritten method body, shaped as a name-based (version 5, RFC 4122
 * variant) GUID in the #GUID layout (Data3 little-endian: its high byte is
 * byte 7). */
static int renew_mvid(struct img *img, const struct weave_opts *opts)
{
	struct md_image *md = &img->md;
	uint8_t digest[LT_HASH_MAX], guid[16] = { 0 };
	const uint8_t *old = NULL;
	uint32_t index = md_rows(md, MD_MODULE) ? md_get(md, MD_MODULE, 1, MD_MODULE_MVID) : 0;
	struct lt_hash *h;
	char options[1200];
	int n, rc;

	if (md_rows(md, MD_MODULE) == 0)
		return lt_error_set(LT_E_METADATA, "no Module row (II.22.30)");
	/* Mvid index 0 (none) is allowed by md_read: zeros stand for it. */
	if (index && md_guid(md, index, &old) < 0)
		return lt_error_prefix("Module row 1: ");
	n = snprintf(options, sizeof options, "LockTime %.17g %s|%s|%s|%s%s%s", opts->threshold_ms,
		     opts->output ? opts->output : "", opts->summary ? opts->summary : "", opts->report ? opts->report : "",
		     opts->lock_order ? opts->lock_order : "", opts->lines ? "|" : "", opts->lines ? opts->lines : "");
	if (lt_hash_new(&h, LT_HASH_SHA1) < 0)
		return -1;
	rc = lt_hash_update(h, old ? old : guid, 16) < 0 ||
	     lt_hash_update(h, options, n < 0 ? 0 : (size_t)n < sizeof options ? (size_t)n : sizeof options - 1) < 0;
	for (uint32_t r = 0; r < img->nbodies && !rc; r++)
		rc = img->bodies[r].data && lt_hash_update(h, img->bodies[r].data, img->bodies[r].len) < 0;
	if (rc || lt_hash_final(h, digest) < 0) {
		lt_hash_free(h);
		return -1;
	}
	lt_hash_free(h);
	memcpy(guid, digest, 16);
	guid[7] = (uint8_t)((guid[7] & 0x0F) | 0x50);
	guid[8] = (uint8_t)((guid[8] & 0x3F) | 0x80);
	if (index == 1)
		return md_set_guid(md, 1, guid);
	if (md_add_guid(md, guid, &index) < 0)
		return -1;
	md_set(md, MD_MODULE, 1, MD_MODULE_MVID, index);
	return 0;
}

int weave_image(struct img *img, const struct weave_opts *opts, enum weave_outcome *outcome, long *nsites,
		unsigned *trim_unfit)
{
	struct weave_names names;
	struct weave_sites sites;
	struct weave_site_table table;
	struct weave_site_row *rows = NULL;
	struct weave_stubs *h;
	struct wlines lines;
	long acquiring = 0, found = 0;
	size_t i;
	int woven = weave_is_woven(img), rc = -1;

	*outcome = WEAVE_NO_LOCKS;
	*nsites = 0;
	if (trim_unfit)
		*trim_unfit = 0;
	if (woven != 0) {
		if (woven > 0)
			*outcome = WEAVE_ALREADY_WOVEN;
		return woven > 0 ? 0 : -1;
	}
	if (scan(img, &names, &sites) < 0)
		return -1;
	for (i = 0; i < sites.n; i++)
		found += weave_kind_acquires(sites.calls[i].kind);
	if (wlines_init(&lines, sites.n ? opts->pdb : NULL, opts->read_source) < 0 || weave_sites_filter(&names, &lines, opts, &sites) < 0)
		goto done;
	for (i = 0; i < sites.n; i++)
		acquiring += weave_kind_acquires(sites.calls[i].kind);
	if (sites.n == 0) {
		if (found > 0) {
			*outcome = WEAVE_FILTERED_OUT;
			*nsites = found;
		}
		rc = 0;
		goto done;
	}
	if (weave_sites_locate(img, &lines, &sites) < 0)
		goto done;
	wlines_forget_sources(&lines); /* the searches in them are done: not kept through the merge */
	if (site_table(img, &names, &lines, &sites, &table, &rows) < 0 || weave_stubs_begin(img, opts, &table, &h) < 0)
		goto done;
	if (trim_unfit)
		*trim_unfit = weave_stubs_trim_unfit(h);
	rc = rewrite_all(img, h, &names, &sites) < 0 || weave_early(img, weave_stubs_watch(h)) < 0 ? -1 : 0;
	if (rc < 0) {
		weave_stubs_free(h);
		goto done;
	}
	rc = -1;
	if (weave_stubs_end(h) < 0 || renew_mvid(img, opts) < 0)
		goto done;
	*outcome = WEAVE_WOVEN;
	*nsites = acquiring;
	rc = 0;
done:
	free(rows);
	wlines_free(&lines);
	weave_sites_free(&sites);
	weave_names_free(&names);
	return rc;
}
