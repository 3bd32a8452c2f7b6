/* cli_package.c - `locktime weave` and `locktime list` on a .nupkg: the assemblies inside it. */
#include "cli_package.h"
#include "cli_print.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "lt_file.h"
#include "pkg_nupkg.h"
#include "pkg_weave.h"
#include "weave_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct pkg_cli {
	const char *path; /* the .nupkg, as named on the command line */
	int verbosity;
	const char *skipped; /* what happens to an assembly LockTime cannot weave */
	const struct weave_opts *opts; /* weave, --unpack: the filters named by PKG_FILTERED_OUT */
};

int cli_is_package(const char *path)
{
	size_t len = strlen(path);
	return len > 6 && strcasecmp(path + len - 6, ".nupkg") == 0;
}

static void print_note(void *ctx, const struct pkg_note *n)
{
	const struct pkg_cli *c = ctx;

	switch (n->kind) {
	case PKG_WOVEN:
		if (c->verbosity >= 0)
			printf("%s: %s: woven, %ld lock site%s timed\n", c->path, n->entry, n->nsites, n->nsites == 1 ? "" : "s");
		if (c->verbosity >= 1)
			cli_print_metrics(c->path, n->entry, n->framework);
		break;
	case PKG_NO_LOCKS:
	case PKG_ALREADY_WOVEN:
		if (c->verbosity >= 0)
			printf("%s: %s: %s\n", c->path, n->entry,
			       n->kind == PKG_ALREADY_WOVEN ? "already woven by LockTime, left as it is" : "no lock found, left as it is");
		break;
	case PKG_FILTERED_OUT:
		cli_warn_filtered(c->path, n->entry, n->nsites, c->opts);
		break;
	case PKG_NOT_WOVEN:
		cli_warn(c->path, n->code, "%s: %s; %s", n->entry, n->msg, c->skipped);
		break;
	case PKG_STRONG_NAMED:
		/* Unpacked too (LockTimePackages): a .NET Framework app may load it
		 * from the GAC, or check it (a full-trust partial-trust host). */
		cli_warn(c->path, LT_E_STRONG_NAME,
			 "%s: its strong-name signature no longer matches (.NET ignores it; .NET Framework checks it only for the GAC)",
			 n->entry);
		break;
	case PKG_SYMBOLS_STALE:
		cli_warn(c->path, LT_E_PDB, "%s: %s", n->entry, n->msg);
		break;
	case PKG_SYMBOLS_RENEWED:
		/* Packages rarely carry their PDBs: said with -v only. */
		if (c->verbosity >= 1)
			printf("%s: %s: %s\n", c->path, n->entry, n->msg);
		break;
	case PKG_TRIM_UNFIT: {
		char why[600];
		weave_trim_unfit_why(n->trim_unfit, why, sizeof why);
		cli_warn(c->path, LT_E_TRIM_ATTRIBUTE, "%s: %s", n->entry, why);
		break;
	}
	case PKG_SIGNATURE_DROPPED:
		cli_warn(c->path, LT_E_PACKAGE, "%s dropped: the package signature no longer matches the woven assemblies",
			 n->entry);
		break;
	}
}

static void print_frameworks(const struct pkg_cli *c, const struct nuspec *spec)
{
	size_t i;

	if (c->verbosity < 1)
		return;
	printf("%s: %s %s, dependency groups:", c->path, spec->id, spec->version);
	for (i = 0; i < spec->ntfms; i++)
		printf("%s %s", i ? "," : "", spec->tfms[i]);
	printf("%s\n", spec->ntfms ? "" : " none");
}

int cli_weave_package(const char *in, const char *out, const struct weave_opts *opts, int verbosity)
{
	struct pkg_cli c = { in, verbosity, "left as it is", opts };
	struct pkg_report r = { print_note, NULL, &c };
	struct lt_file_lock lock = LT_FILE_LOCK_INIT;
	struct lt_buf woven = LT_BUF_INIT;
	struct nuspec spec;
	uint8_t *data = NULL;
	size_t size;
	long n = -1;

	lt_error_clear();
	/* As for an assembly: the output's lock is held from the read to the write. */
	if (lt_file_lock(&lock, out) == 0 && lt_file_read(in, &data, &size) == 0 &&
	    (n = pkg_weave(data, size, opts, &r, &spec, &woven)) >= 0) {
		print_frameworks(&c, &spec);
		/* Nothing woven: in place, the file stays byte-identical. */
		if (woven.len ? lt_file_write_atomic(out, woven.data, woven.len) < 0
			      : out != in && lt_file_write_atomic(out, data, size) < 0)
			n = -1;
		else if (verbosity >= 0 && n > 0)
			printf("%s: %s %s: %ld assembl%s woven\n", in, spec.id, spec.version, n, n == 1 ? "y" : "ies");
		else if (verbosity >= 0)
			printf("%s: %s %s: nothing to weave, left as it is\n", in, spec.id, spec.version);
	}
	if (n < 0)
		cli_report_error(in);
	lt_buf_free(&woven);
	free(data);
	lt_file_unlock(&lock);
	return n < 0 ? 1 : 0;
}

/* Where --unpack writes: DIR/<entry>, its folders made as needed. */
struct unpack_dir {
	const char *dir;
	int verbosity;
};

/* Make every folder of `path` that is not there (like mkdir -p of its folder). */
static int make_parents(char *path)
{
	for (char *p = path + 1; *p; p++) {
		char sep = *p;
		int rc;
		if (!lt_path_is_sep(sep))
			continue;
		*p = '\0';
		rc = lt_file_exists(path) ? 0 : lt_file_mkdir(path);
		*p = sep;
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int put_file(void *ctx, const char *entry, const uint8_t *data, size_t size)
{
	const struct unpack_dir *u = ctx;
	char *path;
	int rc;

	/* nupkg_open checked every name; checked again where a path is made. */
	if (nupkg_name_check(entry) < 0)
		return -1;
	if (!(path = lt_malloc(strlen(u->dir) + strlen(entry) + 2)))
		return lt_nomem(NULL);
	sprintf(path, "%s/%s", u->dir, entry);
	rc = make_parents(path);
	if (rc == 0)
		rc = lt_file_write_atomic(path, data, size);
	if (rc == 0 && u->verbosity >= 1)
		printf("%s\n", path);
	free(path);
	return rc;
}

int cli_unpack_package(const char *in, const char *dir, const char *const *entries, int n,
		       const struct weave_opts *opts, int verbosity)
{
	struct pkg_cli c = { in, verbosity, "copied as it is", opts };
	struct pkg_report r = { print_note, NULL, &c };
	struct unpack_dir u = { dir, verbosity };
	struct nuspec spec;
	uint8_t *data = NULL;
	size_t size;
	long woven = -1;

	lt_error_clear();
	if (lt_file_read(in, &data, &size) == 0)
		woven = pkg_unpack(data, size, entries, (size_t)n, opts, &r, put_file, &u, &spec);
	if (woven < 0)
		cli_report_error(in);
	else if (verbosity >= 0)
		printf("%s: %s %s: %ld assembl%s woven into %s\n", in, spec.id, spec.version, woven, woven == 1 ? "y" : "ies", dir);
	free(data);
	return woven < 0 ? 1 : 0;
}

static void print_entry_site(void *ctx, const char *entry, const struct weave_site *s)
{
	(void)ctx;
	cli_print_site(entry, s);
}

int cli_list_package(const char *path)
{
	struct pkg_cli c = { path, 0, "not listed", NULL };
	struct pkg_report r = { print_note, print_entry_site, &c };
	struct nuspec spec;
	uint8_t *data;
	size_t size;

	lt_error_clear();
	if (lt_file_read(path, &data, &size) < 0) {
		cli_report_error(path);
		return 1;
	}
	if (pkg_list(data, size, &r, &spec) < 0) {
		cli_report_error(path);
		free(data);
		return 1;
	}
	free(data);
	return 0;
}
