/* pkg_weave.c - weaving, unpacking and listing the assemblies inside a .nupkg (see pkg_weave.h). */
#include "pkg_weave.h"
#include "image.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "pkg_nupkg.h"
#include "weave_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One pass over the assemblies of a package: list them (opts NULL), weave
 * them into the package (put NULL), or weave them and hand them to put. */
struct pass {
	const struct pkg_report *r;
	const struct weave_opts *opts;
	pkg_put_fn put;
	void *put_ctx;
	const char *const *only; /* unpack: the entries asked for; NULL: all */
	size_t nonly;
	long count;              /* assemblies woven, or sites listed */
	const char *entry;       /* the assembly being listed */
};

static void note(const struct pass *ps, struct pkg_note *n)
{
	if (ps->r && ps->r->note)
		ps->r->note(ps->r->ctx, n);
}

/* Errors of img_load and refusals that mean "not an assembly LockTime can
 * weave": the entry is left as it is and the package is still woven. */
static int refused(int code)
{
	return code == LT_E_NOT_PE || code == LT_E_NOT_CLI || code == LT_E_MIXED_MODE ||
	       code == LT_E_READY_TO_RUN || code == LT_E_REF_ASSEMBLY;
}

/* Whether entry `name` is one of ps->only (always, without a list). */
static int wanted(struct pass *ps, const char *name)
{
	size_t i;

	if (!ps->only)
		return 1;
	for (i = 0; i < ps->nonly; i++)
		if (!strcmp(ps->only[i], name))
			return 1;
	return 0;
}

/* The index of the entry <folder>/<name>.pdb beside assembly entry `name`
 * (<folder>/<name>.dll or .exe), or p->nentries when the package has none. */
static uint32_t pdb_entry(const struct nupkg *p, const char *name)
{
	size_t len = strlen(name);
	uint32_t k;

	for (k = 0; k < p->nentries; k++) {
		const char *e = p->entries[k].name;
		if (strlen(e) == len && !strncmp(e, name, len - 4) && !strcmp(e + len - 4, ".pdb"))
			break;
	}
	return k;
}

/* The rewritten PDB of a woven assembly into the package (or to put), in
 * place of entry k. */
static int put_pdb(struct nupkg *p, uint32_t k, struct lt_buf *pdb, struct pass *ps)
{
	int rc;

	if (ps->put) {
		rc = ps->put(ps->put_ctx, p->entries[k].name, pdb->data, pdb->len);
		lt_buf_free(pdb);
		return rc;
	}
	rc = nupkg_replace(p, k, pdb->data, pdb->len); /* takes pdb->data */
	*pdb = (struct lt_buf)LT_BUF_INIT;
	return rc;
}

static int weave_assembly(struct nupkg *p, uint32_t i, struct img *img, struct pkg_note *n, struct pass *ps)
{
	struct lt_buf buf = LT_BUF_INIT;
	struct weave_symbols sym = { NULL };
	struct weave_job job;
	uint32_t k = pdb_entry(p, n->entry);
	int rc;

	/* The symbols: embedded, or the package's PDB beside the entry. */
	if (k < p->nentries && (nupkg_read(p, k, &sym.pdb, &sym.pdb_size) < 0 || !(sym.pdb_name = lt_strdup(p->entries[k].name)))) {
		free(sym.pdb);
		return -1;
	}
	rc = weave_job_run(&job, img, ps->opts, &sym);
	if (rc < 0) {
		weave_job_free(&job);
		return -1;
	}
	n->nsites = job.nsites;
	if (job.outcome != WEAVE_WOVEN) {
		n->kind = job.outcome == WEAVE_ALREADY_WOVEN ? PKG_ALREADY_WOVEN
			  : job.outcome == WEAVE_FILTERED_OUT ? PKG_FILTERED_OUT : PKG_NO_LOCKS;
		note(ps, n);
		weave_job_free(&job);
		return ps->put ? ps->put(ps->put_ctx, n->entry, img->file, img->size) : 0;
	}
	if (img_write(img, &buf) < 0 || (job.pdb.data.len && put_pdb(p, k, &job.pdb.data, ps) < 0)) {
		weave_job_free(&job);
		lt_buf_free(&buf);
		return -1;
	}
	if (ps->put) {
		rc = ps->put(ps->put_ctx, n->entry, buf.data, buf.len);
		lt_buf_free(&buf);
	} else {
		rc = nupkg_replace(p, i, buf.data, buf.len); /* takes buf.data */
	}
	if (rc < 0)
		return -1;
	ps->count++;
	n->kind = PKG_WOVEN;
	n->framework = job.framework;
	note(ps, n);
	n->framework = NULL;
	if (job.strong_named) {
		n->kind = PKG_STRONG_NAMED;
		note(ps, n);
	}
	if (job.trim_unfit) {
		n->kind = PKG_TRIM_UNFIT;
		n->trim_unfit = job.trim_unfit;
		note(ps, n);
	}
	if (job.pdb.stale || job.pdb.disowned) {
		char why[sizeof job.pdb.why + 256];
		weave_symbols_why(&job, why, sizeof why);
		n->kind = job.pdb.stale ? PKG_SYMBOLS_STALE : PKG_SYMBOLS_RENEWED;
		n->msg = why;
		note(ps, n);
		n->msg = NULL;
	}
	weave_job_free(&job);
	return 0;
}

static void list_site(void *ctx, const struct weave_site *s)
{
	struct pass *ps = ctx;

	if (ps->r && ps->r->site)
		ps->r->site(ps->r->ctx, ps->entry, s);
}

static int list_assembly(struct img *img, struct pass *ps)
{
	long n = weave_list(img, list_site, ps);

	if (n < 0)
		return -1;
	ps->count += n;
	return 0;
}

/* An assembly LockTime does not weave: noted; unpacking hands it on as it is. */
static int not_woven(struct nupkg *p, uint32_t i, struct pkg_note *n, struct pass *ps)
{
	uint8_t *data;
	size_t size;
	int rc;

	n->kind = PKG_NOT_WOVEN;
	n->code = lt_error_last()->code;
	n->msg = lt_error_last()->msg;
	note(ps, n);
	lt_error_clear();
	if (!ps->put)
		return 0;
	if (nupkg_read(p, i, &data, &size) < 0)
		return -1;
	rc = ps->put(ps->put_ctx, n->entry, data, size);
	free(data);
	return rc;
}

/* Load each assembly of the package and list, weave or unpack it. */
static int each_assembly(struct nupkg *p, struct pass *ps)
{
	uint32_t i;

	for (i = 0; i < p->nentries; i++) {
		const char *name = p->entries[i].name;
		struct pkg_note n = { .entry = name };
		struct img *img = NULL;
		char tfm[64];
		size_t at, len;
		uint8_t *data;
		size_t size;
		int rc;

		if (!nupkg_is_assembly(name, &at, &len) || !wanted(ps, name))
			continue;
		snprintf(tfm, sizeof tfm, "%.*s", (int)len, name + at);
		n.tfm = tfm;
		if (nupkg_read(p, i, &data, &size) < 0)
			return -1;
		lt_error_clear();
		rc = img_load(&img, data, size); /* takes data */
		if (rc == 0)
			rc = weave_refuse_reference(img);
		if (rc < 0 && refused(lt_error_last()->code)) {
			rc = not_woven(p, i, &n, ps);
		} else if (rc == 0) {
			ps->entry = name;
			rc = ps->opts ? weave_assembly(p, i, img, &n, ps) : list_assembly(img, ps);
		}
		img_free(img);
		if (rc < 0)
			return lt_error_prefix("%s: ", name);
	}
	return 0;
}

long pkg_weave(const uint8_t *data, size_t size, const struct weave_opts *opts, const struct pkg_report *r,
	       struct nuspec *spec, struct lt_buf *out)
{
	struct pass ps = { .r = r, .opts = opts };
	struct nupkg *p;
	uint32_t i;
	int rc = -1;

	if (nupkg_open(&p, data, size, NULL) < 0)
		return -1;
	*spec = p->spec;
	if (each_assembly(p, &ps) < 0)
		goto done;
	if (!p->changed) {
		rc = 0;
		goto done;
	}
	for (i = 0; i < p->nentries; i++) {
		struct pkg_note n = { .kind = PKG_SIGNATURE_DROPPED, .entry = p->entries[i].name, .tfm = "" };
		if (!nupkg_is_signature(n.entry))
			continue;
		if (nupkg_delete(p, i) < 0)
			goto done;
		note(&ps, &n);
	}
	rc = nupkg_write(p, out);
done:
	nupkg_free(p);
	return rc < 0 ? -1 : ps.count;
}

long pkg_unpack(const uint8_t *data, size_t size, const char *const *entries, size_t n, const struct weave_opts *opts,
		const struct pkg_report *r, pkg_put_fn put, void *put_ctx, struct nuspec *spec)
{
	struct pass ps = { .r = r, .opts = opts, .put = put, .put_ctx = put_ctx, .only = n ? entries : NULL, .nonly = n };
	struct nupkg *p;
	size_t i;
	int rc = 0;

	if (nupkg_open(&p, data, size, NULL) < 0)
		return -1;
	*spec = p->spec;
	/* Every entry asked for is checked before anything is put. */
	for (i = 0; rc == 0 && i < n; i++) {
		size_t at, len;
		uint32_t e;
		for (e = 0; e < p->nentries && strcmp(p->entries[e].name, entries[i]); e++)
			;
		if (e == p->nentries || !nupkg_is_assembly(entries[i], &at, &len))
			rc = lt_error_set(LT_E_PACKAGE, "'%s' is not an assembly of the package (lib/<tfm>/ or runtimes/<rid>/lib/<tfm>/)",
					  entries[i]);
	}
	if (rc == 0)
		rc = each_assembly(p, &ps);
	nupkg_free(p);
	return rc < 0 ? -1 : ps.count;
}

long pkg_list(const uint8_t *data, size_t size, const struct pkg_report *r, struct nuspec *spec)
{
	struct pass ps = { .r = r };
	struct nupkg *p;
	int rc;

	if (nupkg_open(&p, data, size, NULL) < 0)
		return -1;
	*spec = p->spec;
	rc = each_assembly(p, &ps);
	nupkg_free(p);
	return rc < 0 ? -1 : ps.count;
}
