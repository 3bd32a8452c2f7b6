/* weave_opts.h - what a weave is given (options, reference assemblies, debug
 * symbols) and what it tells of a lock site; shared by the passes below
 * weave.c and the callers above it. */
#ifndef WEAVE_OPTS_H
#define WEAVE_OPTS_H

#include <stddef.h>
#include <stdint.h>

#include "lt_error.h"
#include "lt_rsa.h"
#include "pdb_find.h"
#include "weave_kind.h"

/* A reference assembly, read once before weaving (weave_refs_read). */
struct weave_ref {
	char *path;                /* as given, for messages (owned) */
	uint8_t *data;             /* its bytes (owned), NULL when it could not be read */
	size_t size;
	struct lt_error error;     /* data NULL: why, raised when a weave needs the reference */
};

struct weave_opts {
	double threshold_ms;       /* report threshold baked in (default 1; 0 = every lock) */
	const char *output;        /* default sink baked in: "stderr", "stdout" or a path */
	/* Baked into the run-time as text, LOCKTIME_* overriding them; NULL: the run-time's default. */
	const char *summary;       /* rows of the summary at exit, digits ("0": none; default 10) */
	const char *report;        /* report file path, {pid} replaced at run time (default none) */
	const char *lock_order;    /* "1" lock order followed (default), "0" off */
	const char *lines;         /* slow-lock lines a second per site after the first 10, or "all" (default 2;
				    * weave_lines_value) */
	const struct weave_ref *refs; /* reference assemblies to resolve framework types (borrowed) */
	size_t nrefs;
	const struct pdb_found *pdb;  /* the input's debug symbols, for source lines (NULL: none) */
	const char *const *include; /* patterns of the methods woven (none: all; weave_sites_filter) */
	size_t ninclude;
	const char *const *exclude; /* patterns of the methods left alone */
	size_t nexclude;
	const struct lt_rsa_key *key; /* weave_file: signs a strong-named assembly again (NULL: none; borrowed) */
	/* Reads a source file the PDB names, for the line of a C# 13 lock (as
	 * lt_file_read; NULL: no source is read; weave_job_run sets it). */
	int (*read_source)(const char *path, uint8_t **data, size_t *size);
};

/* One acquisition site, as `locktime list` shows it. */
struct weave_site {
	const char *method;        /* user-facing name (weave_site_name), valid for the call only */
	uint32_t methoddef;        /* MethodDef row holding the call */
	uint32_t il_offset;        /* offset of the call in the input body */
	enum weave_kind kind;
	char location[300];        /* "<file>:<line>" from debug info, else "" */
	int woven;                 /* 1: read back from a woven assembly (weave_list_woven) */
};

#endif
