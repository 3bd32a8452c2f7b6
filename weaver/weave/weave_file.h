/* weave_file.h - the one weave pipeline: an assembly's inputs resolved once at
 * the edge (its bytes, its PDB beside it or embedded, the reference
 * assemblies), then in memory: load, find the sites, rewrite, update the PDB;
 * then the woven pair written atomically.  `locktime weave`, the package
 * weaver and the fuzz target all run it. */
#ifndef WEAVE_FILE_H
#define WEAVE_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "image_sign.h"
#include "pdb_find.h"
#include "pdb_update.h"
#include "weave.h"

/* Warnings about an assembly, for the caller to print; warn may be NULL.
 * code is an lt_code (LT_E_STRONG_NAME, LT_E_PDB), msg lives for the call. */
struct weave_report {
	void (*warn)(void *ctx, int code, const char *msg);
	void *ctx;
};

/* 0 when img can be woven, else -1 with LT_E_REF_ASSEMBLY: it is a
 * reference assembly (img_is_reference_assembly), with no bodies to weave. */
int weave_refuse_reference(const struct img *img);

/* One assembly through the in-memory part of the pipeline. */
struct weave_job {
	enum weave_outcome outcome;
	long nsites;              /* WEAVE_WOVEN: acquisition sites timed; WEAVE_FILTERED_OUT: found */
	int strong_named;         /* WEAVE_WOVEN: it was strong-name signed, which no longer matches */
	enum img_sn_kind sn;      /* WEAVE_WOVEN, weave_file: how the input is strong-named (img_strong_name) */
	int resigned;             /* WEAVE_WOVEN, weave_file: signed again with opts->key */
	struct pdb_found found;   /* its debug symbols, found once (PDB_NONE without symbols) */
	struct pdb_update pdb;    /* WEAVE_WOVEN: the symbols brought up to date */
	char framework[96];       /* WEAVE_WOVEN: its TargetFrameworkAttribute (weave_target_framework), "" when none or unreadable */
	unsigned trim_unfit;      /* WEAVE_WOVEN: the attributes for the trimmer left out because its own class
				   * of that name does not fit (weave_image), 0 when none */
};

/* Where weave_job_run finds an assembly's debug symbols: in its file's
 * folder (in_path, the output going to out_path), or, without in_path, a
 * portable PDB the caller read (a package's entry beside the assembly;
 * NULL when there is none) - after an embedded one in both cases. */
struct weave_symbols {
	const char *in_path, *out_path;
	uint8_t *pdb;       /* without in_path: the PDB's bytes (malloc'd; weave_job_run takes them) */
	size_t pdb_size;
	char *pdb_name;     /* its name for messages (malloc'd; taken too) */
};

/* Weave `img` (loaded with img_load) in memory: refuse a reference assembly
 * (weave_refuse_reference); with `sym` (NULL: no symbols), find its debug
 * symbols once (weave_pdb_find beside sym->in_path, else pdb_find_embedded
 * then sym->pdb through pdb_found_file) for the site lines, and with
 * sym->in_path read the source files they name (lt_file_read, as
 * opts->read_source) for the line of a C# 13 lock; weave_image with opts; when woven, read its framework
 * (j->framework: a malformed attribute leaves it "", it matters only to -v; out of memory fails) and bring the symbols up to date
 * (weave_pdb_update for the output sym->out_path, else pdb_update: a PDB
 * of sym's rewritten into j->pdb.data).  The caller lays img out and
 * writes it only for j->outcome WEAVE_WOVEN.  Returns 0 (release *j with
 * weave_job_free), or -1 with the errors of weave_image and LT_E_NOMEM. */
int weave_job_run(struct weave_job *j, struct img *img, const struct weave_opts *opts, struct weave_symbols *sym);

/* The LT017 warning's text for a job whose symbols were not rewritten
 * (j->pdb.stale) or whose PDB id was renewed (j->pdb.disowned): the file
 * and why, into buf[0..n), like snprintf. */
void weave_symbols_why(const struct weave_job *j, char *buf, size_t n);

/* The LT025 warning's text for a job whose trim_unfit is `unfit` (not 0)
 * into buf[0..n), like snprintf. */
void weave_trim_unfit_why(unsigned unfit, char *buf, size_t n);

/* Release what weave_job_run kept.  NULL is a no-op. */
void weave_job_free(struct weave_job *j);

/* Weave the assembly file in_path into out_path (the same path: in place),
 * under out_path's lock (lt_file_lock: a parallel build weaving the same file
 * waits, then finds it already woven): read it, img_load, weave_job_run with
 * its symbols, report the strong-name and stale-symbols warnings, then for a
 * woven assembly img_layout and weave_write_pair with its PDB; otherwise
 * out_path gets the bytes as they are (an in-place weave leaves the file
 * untouched).  A woven assembly's strong name (II.6.2.1.3, img_strong_name):
 * a signed one is signed again with opts->key (img_strong_name_sign; the key
 * must be the assembly's), or without a key gets the LT018 warning;
 * public-signed and delay-signed ones stay as they were.  *j gets what
 * happened (release with weave_job_free).  A path that is a symbolic link
 * stands for the file it names (lt_file_target): symbols and lock beside
 * that file.  Returns 0, or -1 with the errors
 * of lt_file_target, lt_file_read, img_load, weave_job_run, img_strong_name, img_layout,
 * img_strong_name_sign and weave_write_pair, LT_E_KEY for a key that is not
 * the assembly's; out_path is untouched then. */
int weave_file(struct weave_job *j, const char *in_path, const char *out_path, const struct weave_opts *opts,
	       const struct weave_report *r);

/* weave_list_pdb on the assembly file `path`, with the lines of its PDB
 * (weave_pdb_find, beside the file a symbolic link names); for a woven
 * assembly, the sites it timed (weave_list).
 * *reference gets 1 when it is a reference assembly (img_is_reference_assembly:
 * no method bodies, so no sites), else 0.  Returns the number of sites, or -1
 * with the errors of lt_file_read, img_load and weave_list. */
long weave_list_file(const char *path, void (*fn)(void *ctx, const struct weave_site *s), void *ctx, int *reference);

#endif
