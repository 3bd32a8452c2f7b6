/* cli_weave.c - `locktime weave`: options, and weaving each file in place. */
#include "cli.h"
#include "image.h"
#include "lt_error.h"
#include "lt_file.h"
#include "pdb_update.h"
#include "weave.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct refs {
	char **paths;
	size_t n, cap;
};

static int refs_add(struct refs *r, const char *path)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		char **p = realloc(r->paths, cap * sizeof *p);
		if (!p)
			return lt_error_set(LT_E_NOMEM, "out of memory");
		r->paths = p;
		r->cap = cap;
	}
	if (!(r->paths[r->n] = strdup(path)))
		return lt_error_set(LT_E_NOMEM, "out of memory");
	r->n++;
	return 0;
}

/* -r @FILE: one path a line (MSBuild writes @(ReferencePath) this way);
 * blank lines and surrounding spaces and quotes are ignored. */
static int refs_add_file(struct refs *r, const char *list)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;
	FILE *f = fopen(list, "r");

	if (!f)
		return lt_error_set(LT_E_IO, "cannot read reference list %s", list);
	while (rc == 0 && (n = getline(&line, &cap, f)) >= 0) {
		char *s = line, *e = line + n;
		while (s < e && strchr(" \t\r\n\"", *s))
			s++;
		while (e > s && strchr(" \t\r\n\"", e[-1]))
			e--;
		*e = '\0';
		if (*s)
			rc = refs_add(r, s);
	}
	free(line);
	fclose(f);
	return rc;
}

static void refs_free(struct refs *r)
{
	size_t i;
	for (i = 0; i < r->n; i++)
		free(r->paths[i]);
	free(r->paths);
}

/* Remove what a run killed while writing the PDB beside `out` left
 * (<name without .dll/.exe>.pdb.locktime-XXXXXX): the PDB is written under
 * out's lock, which the caller holds, and a later run that finds the
 * assembly already woven writes no PDB that would clean them. */
static void clean_pdb_temps(const char *out)
{
	const char *base = strrchr(out, '/') ? strrchr(out, '/') + 1 : out, *dot = strrchr(base, '.');
	size_t stem = dot && (!strcasecmp(dot, ".dll") || !strcasecmp(dot, ".exe")) ? (size_t)(dot - out) : strlen(out);
	char *pdb = malloc(stem + 5);

	if (!pdb)
		return;
	memcpy(pdb, out, stem);
	memcpy(pdb + stem, ".pdb", 5);
	lt_file_clean_temps(pdb);
	free(pdb);
}

/* Weave one file; returns 0 (woven, nothing to do, or already woven) or 1. */
static int weave_one(const char *in, const char *out, const struct weave_opts *opts, int verbosity)
{
	struct img_out img_out = IMG_OUT_INIT;
	struct pdb_update pdb = { 0 };
	struct lt_file_lock lock = LT_FILE_LOCK_INIT;
	struct weave_opts with_path = *opts;
	enum weave_outcome outcome;
	struct img *img = NULL;
	uint8_t *data;
	size_t size;
	long nsites = 0;
	int rc = 1;

	lt_error_clear();
	/* Held from before the read to after the write: a parallel build
	 * weaving the same file waits, then finds it already woven. */
	if (lt_file_lock(&lock, out) < 0)
		goto done;
	clean_pdb_temps(out);
	if (lt_file_read(in, &data, &size) < 0 || img_load(&img, data, size) < 0)
		goto done;
	if (img_is_reference_assembly(img)) {
		lt_error_set(LT_E_REF_ASSEMBLY, "reference assembly: it has no method bodies to weave");
		goto done;
	}
	with_path.path = in;
	if (weave_image(img, &with_path, &outcome, &nsites) < 0)
		goto done;
	if (outcome == WEAVE_WOVEN) {
		if (img->pe.cli.flags & PE_COMIMAGE_STRONGNAMESIGNED)
			cli_warn(in, LT_E_STRONG_NAME, "its strong-name signature no longer matches (.NET ignores it; .NET Framework checks it only for the GAC)");
		/* The PDB is rewritten and the debug entries set before the image
		 * is laid out; the PDB file is written after the assembly. */
		if (pdb_update(&pdb, img, in, out) < 0)
			goto done;
		if (pdb.stale)
			cli_warn(in, LT_E_PDB, "%s: its source lines are stale after weaving", pdb.why);
		if (img_layout(img, &img_out) < 0 ||
		    pdb_write_pair(&pdb, out, img_out.parts, img_out.nparts, strcmp(in, out) ? NULL : img->file,
				   img->size) < 0)
			goto done;
		if (verbosity >= 0)
			printf("%s: woven, %ld lock site%s timed\n", in, nsites, nsites == 1 ? "" : "s");
	} else {
		/* Nothing changes: an in-place weave leaves the file byte-identical. */
		if (out != in && lt_file_write_atomic(out, img->file, img->size) < 0)
			goto done;
		if (verbosity >= 0)
			printf("%s: %s\n", in, outcome == WEAVE_ALREADY_WOVEN ? "already woven by LockTime, left as it is"
									   : "no lock found, left as it is");
	}
	rc = 0;
done:
	if (rc)
		cli_report_error(in);
	img_out_free(&img_out);
	pdb_update_free(&pdb);
	img_free(img);
	lt_file_unlock(&lock);
	return rc;
}

int cli_weave(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "threshold-ms", required_argument, NULL, 't' },
		{ "output-sink", required_argument, NULL, 's' },
		{ "reference", required_argument, NULL, 'r' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "unpack", required_argument, NULL, 'u' },
		{ NULL, 0, NULL, 0 },
	};
	struct weave_opts opts = { .threshold_ms = 1.0, .output = "stderr" };
	struct refs refs = { NULL, 0, 0 };
	const char *output = NULL, *unpack = NULL;
	int c, i, verbosity = 0, failed = 0;
	char *end;

	optind = 1;
	opterr = 0; /* getopt's own message is not in LT0NN form: the default case says it */
	while ((c = getopt_long(argc, argv, "o:r:vq", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 't':
			opts.threshold_ms = strtod(optarg, &end);
			if (*end || end == optarg || !(opts.threshold_ms >= 0) || opts.threshold_ms > 1e9) {
				fprintf(stderr, "locktime: error LT%03d: --threshold-ms: '%s' is not a number of milliseconds >= 0\n",
					LT_E_USAGE, optarg);
				goto usage;
			}
			break;
		case 's':
			if (!*optarg) {
				fprintf(stderr, "locktime: error LT%03d: --output-sink: empty (stderr, stdout or a file path)\n",
					LT_E_USAGE);
				goto usage;
			}
			opts.output = optarg;
			break;
		case 'r':
			if ((optarg[0] == '@' ? refs_add_file(&refs, optarg + 1) : refs_add(&refs, optarg)) < 0) {
				cli_report_error(optarg);
				goto usage;
			}
			break;
		case 'v': verbosity = 1; break;
		case 'q': verbosity = -1; break;
		case 'u': unpack = optarg; break;
		default:
			fprintf(stderr, "locktime: error LT%03d: weave: unknown option or missing value: %s\n", LT_E_USAGE,
				argv[optind - 1]);
			goto usage;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "locktime: error LT%03d: weave: no input file\n", LT_E_USAGE);
		goto usage;
	}
	if (output && argc - optind > 1) {
		fprintf(stderr, "locktime: error LT%03d: weave: -o takes one input file\n", LT_E_USAGE);
		goto usage;
	}
	if (unpack && (output || !cli_is_package(argv[optind]))) {
		fprintf(stderr, "locktime: error LT%03d: weave: --unpack DIR takes a .nupkg and entry names, not -o\n", LT_E_USAGE);
		goto usage;
	}
	opts.refs = (const char *const *)refs.paths;
	opts.nrefs = refs.n;
	if (unpack) /* --unpack DIR PKG.nupkg [ENTRY...] */
		failed = cli_unpack_package(argv[optind], unpack, (const char *const *)argv + optind + 1, argc - optind - 1,
					    &opts, verbosity);
	for (i = optind; i < argc && !unpack; i++)
		failed |= cli_is_package(argv[i]) ? cli_weave_package(argv[i], output ? output : argv[i], &opts, verbosity)
						  : weave_one(argv[i], output ? output : argv[i], &opts, verbosity);
	refs_free(&refs);
	return failed ? 1 : 0;
usage:
	refs_free(&refs);
	fputs("run 'locktime --help' for usage\n", stderr);
	return 2;
}
