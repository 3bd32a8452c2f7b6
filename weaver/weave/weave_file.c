/* weave_file.c - the one weave pipeline: inputs read at the edge, the weave in memory, the pair written (see weave_file.h). */
#include "weave_file.h"
#include "lt_error.h"
#include "lt_file.h"
#include "weave_framework.h"
#include "weave_inputs.h"
#include "weave_merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void weave_job_free(struct weave_job *j)
{
	if (!j)
		return;
	pdb_found_free(&j->found);
	pdb_update_free(&j->pdb);
}

int weave_refuse_reference(const struct img *img)
{
	if (img_is_reference_assembly(img))
		return lt_error_set(LT_E_REF_ASSEMBLY, "reference assembly: it has no method bodies to weave");
	return 0;
}

/* j->found for weave_job_run; a PDB of sym's that it keeps is taken (NULL in sym). */
static int find_symbols(struct weave_job *j, const struct img *img, struct weave_symbols *sym)
{
	uint8_t *data = sym->pdb;
	char *name = sym->pdb_name;

	if (sym->in_path)
		return weave_pdb_find(&j->found, img, sym->in_path);
	if (pdb_find_embedded(&j->found, img) < 0)
		return -1;
	if (j->found.embedded >= 0 || j->found.codeview < 0 || !sym->pdb)
		return 0;
	/* pdb_found_file takes the bytes and the name, also when it fails. */
	sym->pdb = NULL;
	sym->pdb_name = NULL;
	return pdb_found_file(&j->found, data, sym->pdb_size, name);
}

int weave_job_run(struct weave_job *j, struct img *img, const struct weave_opts *opts, struct weave_symbols *sym)
{
	struct weave_opts with_pdb = *opts;
	int rc;

	memset(j, 0, sizeof *j);
	j->found.codeview = j->found.embedded = -1;
	rc = weave_refuse_reference(img) < 0 || (sym && find_symbols(j, img, sym) < 0) ? -1 : 0;
	if (sym) { /* a PDB's bytes the job did not keep */
		free(sym->pdb);
		free(sym->pdb_name);
		sym->pdb = NULL;
		sym->pdb_name = NULL;
	}
	if (rc < 0)
		return -1;
	with_pdb.pdb = &j->found;
	with_pdb.read_source = sym && sym->in_path ? lt_file_read : NULL;
	if (weave_image(img, &with_pdb, &j->outcome, &j->nsites, &j->trim_unfit) < 0)
		return -1;
	if (j->outcome != WEAVE_WOVEN)
		return 0;
	j->strong_named = img_is_strong_named(img);
	if (weave_target_framework(img, j->framework, sizeof j->framework) < 0) {
		if (lt_error_last()->code == LT_E_NOMEM)
			return -1;
		lt_error_clear(); /* a bad attribute: what -v says of the metrics, not a reason to refuse the weave */
		j->framework[0] = '\0';
	}
	/* The PDB is rewritten and the debug entries set before the image is
	 * laid out. */
	if (!sym)
		return 0;
	rc = sym->in_path ? weave_pdb_update(&j->pdb, img, &j->found, sym->in_path, sym->out_path)
			  : pdb_update(&j->pdb, img, &j->found, NULL);
	/* Rewritten into j->pdb and img: the input's bytes are not kept through the layout and the write. */
	pdb_found_release_data(&j->found);
	return rc;
}

void weave_symbols_why(const struct weave_job *j, char *buf, size_t n)
{
	static const char disowned[] = "the woven assembly names a new PDB id, so that no PDB written before the weave "
				       "matches it";

	if (j->pdb.stale)
		snprintf(buf, n, "%s: its source lines are stale after weaving%s%s", j->pdb.why,
			 j->pdb.disowned ? "; " : "", j->pdb.disowned ? disowned : "");
	else
		snprintf(buf, n, "%s, which its debug directory names, is neither beside it nor embedded: %s (its lines "
			 "would be wrong: the weave moved the IL)", *j->found.cv_name ? j->found.cv_name : "its PDB", disowned);
}

void weave_trim_unfit_why(unsigned unfit, char *buf, size_t n)
{
	int two = (unfit & (unfit - 1)) != 0;
	const char *name;
	size_t at = 0;

	buf[0] = '\0';
	for (unsigned i = 0; (name = weave_merge_trim_attribute(i)) != NULL; i++)
		if (unfit & (1u << i) && at < n)
			at += (size_t)snprintf(buf + at, n - at, "%s%s", at ? " and " : "its own ", name);
	if (at < n)
		snprintf(buf + at, n - at, " %s not fit LockTime's run-time (the constructor or properties its uses "
			 "need): those uses are left out, so an app that trims it or compiles it with NativeAOT warns "
			 "of the merged run-time (IL2xxx, IL3xxx; docs/weaving.md, \"Trimming and NativeAOT\")",
			 two ? "do" : "does");
}

static void warn(const struct weave_report *r, int code, const char *msg)
{
	if (r && r->warn)
		r->warn(r->ctx, code, msg);
}

/* What the woven img's strong name becomes (see weave_file): j->sn, and
 * *sign 1 when it is to be signed again with key.  Returns 0, or -1. */
static int strong_name_plan(struct weave_job *j, const struct img *img, const struct lt_rsa_key *key,
			    const struct weave_report *r, struct img_sn *sn, int *sign)
{
	*sign = 0;
	if (img_strong_name(img, sn) < 0)
		return -1;
	j->sn = sn->kind;
	if (sn->kind != IMG_SN_SIGNED)
		return 0;
	if (!key) {
		warn(r, LT_E_STRONG_NAME, "its strong-name signature no longer matches (.NET ignores it; .NET Framework "
					  "checks it only for the GAC); --key FILE.snk signs it again");
		return 0;
	}
	if (!lt_rsa_matches(key, sn->public_key, sn->public_key_len))
		return lt_error_set(LT_E_KEY, "the key is not this assembly's: its public key differs");
	*sign = 1;
	return 0;
}

/* weave_file once the lock is held and the input loaded. */
static int weave_loaded(struct weave_job *j, struct img *img, const char *in_path, const char *out_path,
			const struct weave_opts *opts, const struct weave_report *r)
{
	struct img_out laid = IMG_OUT_INIT;
	struct lt_buf joined = LT_BUF_INIT;
	struct lt_iov one = { NULL, 0 };
	char why[sizeof j->pdb.why + 128];
	struct img_sn sn;
	int rc = -1, sign;

	if (weave_job_run(j, img, opts, &(struct weave_symbols){ .in_path = in_path, .out_path = out_path }) < 0)
		return -1;
	if (j->outcome != WEAVE_WOVEN) {
		/* Nothing changes: an in-place weave leaves the file byte-identical. */
		return strcmp(in_path, out_path) ? lt_file_write_atomic(out_path, img->file, img->size) : 0;
	}
	if (strong_name_plan(j, img, opts->key, r, &sn, &sign) < 0)
		return -1;
	if (j->trim_unfit) {
		weave_trim_unfit_why(j->trim_unfit, why, sizeof why);
		warn(r, LT_E_TRIM_ATTRIBUTE, why);
	}
	if (j->pdb.stale || j->pdb.disowned) {
		weave_symbols_why(j, why, sizeof why);
		warn(r, LT_E_PDB, why);
	}
	if (img_layout(img, &laid) < 0)
		goto done;
	if (sign) {
		/* The signature covers the laid-out bytes: join them, sign, write one piece. */
		if (img_out_join(&laid, &joined) < 0 || img_strong_name_sign(joined.data, joined.len, opts->key, sn.alg) < 0)
			goto done;
		one = (struct lt_iov){ joined.data, joined.len };
	}
	/* The PDB file is written after the assembly. */
	if (weave_write_pair(&j->pdb, out_path, sign ? &one : laid.parts, sign ? 1 : laid.nparts,
			     strcmp(in_path, out_path) ? NULL : img->file, img->size) == 0) {
		j->resigned = sign;
		rc = 0;
	}
done:
	lt_buf_free(&joined);
	img_out_free(&laid);
	return rc;
}

int weave_file(struct weave_job *j, const char *in_path, const char *out_path, const struct weave_opts *opts,
	       const struct weave_report *r)
{
	struct lt_file_lock lock = LT_FILE_LOCK_INIT;
	struct img *img = NULL;
	char *in = NULL, *out = NULL;
	uint8_t *data;
	size_t size;
	int rc = -1;

	memset(j, 0, sizeof *j);
	j->found.codeview = j->found.embedded = -1;
	/* Through a symbolic link, the file it names: its symbols, and the
	 * lock, beside it, not beside the link. */
	if (lt_file_target(in_path, &in) < 0 || lt_file_target(out_path, &out) < 0)
		goto done;
	/* Held from before the read to after the write: a parallel build
	 * weaving the same file waits, then finds it already woven. */
	if (lt_file_lock(&lock, out) < 0)
		goto done;
	/* A later run that finds the assembly already woven writes no PDB
	 * that would clean what a killed one left: cleaned here, and the
	 * woven assembly's own PDB, when a kill left it staged, put in place. */
	if (lt_file_read(in, &data, &size) == 0 && img_load(&img, data, size) == 0) {
		weave_clean_pdb_temps(out, strcmp(in, out) ? NULL : img);
		rc = weave_loaded(j, img, in, out, opts, r);
	} else {
		weave_clean_pdb_temps(out, NULL);
	}
	img_free(img);
	lt_file_unlock(&lock);
done:
	free(in);
	free(out);
	return rc;
}

long weave_list_file(const char *path, void (*fn)(void *ctx, const struct weave_site *s), void *ctx, int *reference)
{
	struct pdb_found pdb = { .source = PDB_NONE, .codeview = -1, .embedded = -1 };
	struct img *img = NULL;
	char *file = NULL;
	uint8_t *data;
	size_t size;
	long n = -1;

	*reference = 0;
	/* Through a symbolic link, the symbols beside the file it names (as weave_file). */
	if (lt_file_target(path, &file) == 0 && lt_file_read(file, &data, &size) == 0 && img_load(&img, data, size) == 0 &&
	    weave_pdb_find(&pdb, img, file) == 0) {
		n = weave_list_pdb(img, &pdb, lt_file_read, fn, ctx);
		*reference = img_is_reference_assembly(img);
	}
	pdb_found_free(&pdb);
	img_free(img);
	free(file);
	return n;
}
