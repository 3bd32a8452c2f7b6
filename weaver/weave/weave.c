/* weave.c - the weaving passes: list the lock sites of an assembly, or weave them (docs/weaving.md). */
#include "weave.h"
#include "weave_pass.h"
#include "lt_error.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	uint8_t acquires;
} kinds[WEAVE_KIND_COUNT] = {
	[WEAVE_MONITOR_ENTER] = { "Monitor.Enter", 1 },
	[WEAVE_MONITOR_ENTER_TAKEN] = { "Monitor.Enter", 1 },
	[WEAVE_MONITOR_TRYENTER] = { "Monitor.TryEnter", 1 },
	[WEAVE_LOCK_ENTER] = { "Lock.Enter", 1 },
	[WEAVE_LOCK_TRYENTER] = { "Lock.TryEnter", 1 },
	[WEAVE_LOCK_ENTERSCOPE] = { "Lock.EnterScope", 1 },
	[WEAVE_SYNCHRONIZED] = { "Synchronized", 1 },
	[WEAVE_MONITOR_EXIT] = { "Monitor.Exit", 0 },
	[WEAVE_LOCK_EXIT] = { "Lock.Exit", 0 },
	[WEAVE_SCOPE_DISPOSE] = { "Lock.Scope.Dispose", 0 },
	[WEAVE_MONITOR_WAIT] = { "Monitor.Wait", 0 },
};

const char *weave_kind_name(enum weave_kind k)
{
	return (unsigned)k < WEAVE_KIND_COUNT ? kinds[k].name : "?";
}

int weave_kind_acquires(enum weave_kind k)
{
	return (unsigned)k < WEAVE_KIND_COUNT && kinds[k].acquires;
}

void weave_location(const struct wlines *lines, uint32_t methoddef, uint32_t il_offset, char *buf, size_t n)
{
	if (!wlines_find(lines, methoddef, il_offset, buf, n))
		snprintf(buf, n, "IL_%04x", il_offset);
}

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

long weave_list_path(const struct img *img, const char *path,
		     void (*fn)(void *ctx, const struct weave_site *s), void *ctx)
{
	struct weave_names names;
	struct weave_sites sites;
	struct weave_site s;
	struct wlines lines;
	long count = 0;
	size_t i;

	if (scan(img, &names, &sites) < 0)
		return -1;
	wlines_open(&lines, img, path);
	memset(&s, 0, sizeof s);
	for (i = 0; i < sites.n; i++) {
		const struct weave_call *c = &sites.calls[i];
		if (!weave_kind_acquires(c->kind))
			continue;
		/* Sites come grouped by method: name each method once. */
		if (c->methoddef != s.methoddef &&
		    weave_names_method(&names, c->methoddef, s.method, sizeof s.method) < 0) {
			count = -1;
			break;
		}
		s.methoddef = c->methoddef;
		s.il_offset = c->il_offset;
		s.kind = c->kind;
		if (!wlines_find(&lines, c->methoddef, c->il_offset, s.location, sizeof s.location))
			s.location[0] = 0;
		fn(ctx, &s);
		count++;
	}
	wlines_free(&lines);
	weave_sites_free(&sites);
	weave_names_free(&names);
	return count;
}

long weave_list(const struct img *img, void (*fn)(void *ctx, const struct weave_site *s), void *ctx)
{
	return weave_list_path(img, NULL, fn, ctx);
}

/* Whether img already carries the helper TypeDef: 1, 0, or -1. */
static int already_woven(const struct img *img)
{
	for (uint32_t t = 1; t <= md_rows(&img->md, MD_TYPEDEF); t++) {
		int is = weave_names_is_helper(&img->md, t);
		if (is != 0)
			return is;
	}
	return 0;
}

/* Rewrite every method that has lock calls, one run of calls per method
 * (synchronized-method entries are listed, not woven). */
static int rewrite_all(struct img *img, struct weave_helper *h, const struct weave_names *names,
		       const struct wlines *lines, const struct weave_sites *sites)
{
	size_t i = 0, j;

	while (i < sites->n) {
		if (sites->calls[i].kind == WEAVE_SYNCHRONIZED) {
			i++;
			continue;
		}
		for (j = i; j < sites->n && sites->calls[j].methoddef == sites->calls[i].methoddef; j++)
			;
		if (weave_rewrite_method(img, h, names, lines, &sites->calls[i], j - i) < 0)
			return -1;
		i = j;
	}
	return 0;
}

int weave_image(struct img *img, const struct weave_opts *opts, enum weave_outcome *outcome, long *nsites)
{
	struct weave_names names;
	struct weave_sites sites;
	struct weave_helper *h;
	struct wlines lines;
	long calls = 0, acquiring = 0;
	size_t i;
	int woven = already_woven(img), rc = -1;

	*outcome = WEAVE_NO_LOCKS;
	*nsites = 0;
	if (woven != 0) {
		if (woven > 0)
			*outcome = WEAVE_ALREADY_WOVEN;
		return woven > 0 ? 0 : -1;
	}
	if (scan(img, &names, &sites) < 0)
		return -1;
	for (i = 0; i < sites.n; i++) {
		if (sites.calls[i].kind == WEAVE_SYNCHRONIZED)
			continue;
		calls++;
		acquiring += weave_kind_acquires(sites.calls[i].kind);
	}
	if (calls == 0) {
		rc = 0;
		goto done;
	}
	if (weave_helper_begin(img, opts, &h) < 0)
		goto done;
	wlines_open(&lines, img, opts->path);
	rc = rewrite_all(img, h, &names, &lines, &sites);
	wlines_free(&lines);
	if (rc < 0) {
		weave_helper_free(h);
		goto done;
	}
	rc = -1;
	if (weave_helper_end(h) < 0)
		goto done;
	*outcome = WEAVE_WOVEN;
	*nsites = acquiring;
	rc = 0;
done:
	weave_sites_free(&sites);
	weave_names_free(&names);
	return rc;
}
