/* cli_weave.c - `locktime weave`: options, and weaving each file in place. */
#include "cli.h"
#include "cli_package.h"
#include "cli_print.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "weave.h"
#include "weave_file.h"
#include "weave_inputs.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest --threshold-ms: 10^12 ms, the largest the run-time takes from
 * LOCKTIME_THRESHOLD_MS (Settings.cs ThresholdMsMax) and LockTimeThresholdMs
 * (LockTime.Numbers.targets). */
#define CLI_THRESHOLD_MS_MAX 1e12

/* Largest --summary: the largest LOCKTIME_SUMMARY the run-time takes
 * (Settings.cs SummaryMax) and LockTimeSummary (LockTime.Numbers.targets). */
#define CLI_SUMMARY_MAX 1000000

/* A switch's value, as the run-time reads LOCKTIME_* switches (1/true/yes/on,
 * 0/false/no/off, any case): "1" or "0", or NULL for anything else. */
static const char *switch_value(const char *s)
{
	static const char *const on[] = { "1", "true", "yes", "on" }, *const off[] = { "0", "false", "no", "off" };

	for (unsigned i = 0; i < 4; i++) {
		if (!strcasecmp(s, on[i]))
			return "1";
		if (!strcasecmp(s, off[i]))
			return "0";
	}
	return NULL;
}

/* A list of strings: reference paths, or --include/--exclude patterns. */
struct refs {
	char **paths;
	size_t n, cap;
};

static int refs_add(struct refs *r, const char *path)
{
	if (lt_grow(&r->paths, &r->cap, r->n + 1, sizeof *r->paths) < 0)
		return -1;
	if (!(r->paths[r->n] = lt_strdup(path)))
		return lt_nomem(NULL);
	r->n++;
	return 0;
}

/* -r @FILE: one path a line (MSBuild writes @(ReferencePath) this way);
 * blank lines and surrounding spaces and quotes are ignored. */
static int refs_add_file(struct refs *r, const char *list)
{
	char **lines;
	size_t n, i;
	int rc = 0;

	if (cli_read_lines(list, &lines, &n) < 0)
		return lt_error_prefix("reference list %s: ", list);
	for (i = 0; rc == 0 && i < n; i++) {
		char *s = lines[i], *e = s + strlen(s);
		while (s < e && strchr(" \t\"", *s))
			s++;
		while (e > s && strchr(" \t\"", e[-1]))
			e--;
		*e = '\0';
		if (*s)
			rc = refs_add(r, s);
	}
	free(lines);
	return rc;
}

/* Whether patterns p[from..n) hold a pattern: a character other than the
 * separators and spaces weave_pattern_match skips. */
static int has_pattern(const struct refs *p, size_t from)
{
	for (size_t i = from; i < p->n; i++)
		if (p->paths[i][strspn(p->paths[i], "; \t")])
			return 1;
	return 0;
}

static void refs_free(struct refs *r)
{
	size_t i;
	for (i = 0; i < r->n; i++)
		free(r->paths[i]);
	free(r->paths);
}

static void print_warning(void *ctx, int code, const char *msg)
{
	cli_warn(ctx, code, "%s", msg);
}

/* -v: what became of woven assembly in's strong name (weave_file). */
static void print_strong_name(const char *in, const struct weave_job *j, int have_key)
{
	if (j->resigned)
		printf("%s: strong-name signed again with the key\n", in);
	else if (j->sn == IMG_SN_PUBLIC || j->sn == IMG_SN_DELAY)
		printf("%s: %s: public key kept, left without a signature, as it was\n", in,
		       j->sn == IMG_SN_PUBLIC ? "public-signed" : "delay-signed");
	else if (j->sn == IMG_SN_NONE && have_key)
		printf("%s: not strong-named: the key is not used\n", in);
}

/* Weave one file; returns 0 (woven, nothing to do, or already woven) or 1. */
static int weave_one(const char *in, const char *out, const struct weave_opts *opts, int verbosity)
{
	const struct weave_report report = { print_warning, (void *)in };
	struct weave_job job;
	int rc;

	lt_error_clear();
	rc = weave_file(&job, in, out, opts, &report);
	if (rc == 0 && job.outcome == WEAVE_WOVEN && verbosity >= 1) {
		print_strong_name(in, &job, opts->key != NULL);
		cli_print_metrics(in, NULL, job.framework);
	}
	if (rc < 0)
		cli_report_error(in);
	else if (verbosity >= 0 && job.outcome == WEAVE_WOVEN)
		printf("%s: woven, %ld lock site%s timed\n", in, job.nsites, job.nsites == 1 ? "" : "s");
	else if (job.outcome == WEAVE_FILTERED_OUT)
		cli_warn_filtered(in, NULL, job.nsites, opts);
	else if (verbosity >= 0)
		printf("%s: %s\n", in, job.outcome == WEAVE_ALREADY_WOVEN ? "already woven by LockTime, left as it is"
									 : "no lock found, left as it is");
	weave_job_free(&job);
	return rc < 0 ? 1 : 0;
}

/* What the command line of `locktime weave` gives, options and lists. */
struct weave_args {
	struct weave_opts opts;
	struct refs refs, include, exclude;
	const char *output, *unpack, *key_file, *key_container;
	int verbosity;
};

static void weave_args_free(struct weave_args *a)
{
	refs_free(&a->refs);
	refs_free(&a->include);
	refs_free(&a->exclude);
}

/* --include/--exclude (c 'i'/'x'): PATTERNS (';'-separated) or @FILE, one pattern (or list) a line;
 * 0, or -1 after an error message (an empty --include would weave nothing, an empty --exclude is a slip). */
static int add_patterns(struct weave_args *a, int c, const char *arg)
{
	struct refs *patterns = c == 'i' ? &a->include : &a->exclude;
	size_t from = patterns->n;

	if ((arg[0] == '@' ? refs_add_file(patterns, arg + 1) : refs_add(patterns, arg)) < 0) {
		cli_report_error(arg);
		return -1;
	}
	if (!has_pattern(patterns, from)) {
		fprintf(stderr, "locktime: error LT%03d: --%s: '%s' holds no pattern (Namespace.Type::Method, "
				"* wildcards, ';'-separated); leave the option out for %s\n", LT_E_USAGE,
			c == 'i' ? "include" : "exclude", arg, c == 'i' ? "every method" : "none");
		return -1;
	}
	return 0;
}

/* An option's value that may not be empty: 0, or -1 after an error message naming the option and
 * what it takes (LT012). */
static int nonempty(const char *option, const char *arg, const char *takes)
{
	if (*arg)
		return 0;
	fprintf(stderr, "locktime: error LT%03d: --%s: empty (%s)\n", LT_E_USAGE, option, takes);
	return -1;
}

/* One option c (getopt_long's) with its value arg into a; 0, or -1 after an error message (LT012). */
static int weave_option(struct weave_args *a, int c, const char *arg, const char *word)
{
	char *end;
	long rows;

	switch (c) {
	case 'o': a->output = arg; return 0;
	case 't':
		a->opts.threshold_ms = strtod(arg, &end);
		if (*end || end == arg || !(a->opts.threshold_ms >= 0) || a->opts.threshold_ms > CLI_THRESHOLD_MS_MAX) {
			fprintf(stderr, "locktime: error LT%03d: --threshold-ms: '%s' is not a number of milliseconds "
					"from 0 to %.0f\n", LT_E_USAGE, arg, CLI_THRESHOLD_MS_MAX);
			return -1;
		}
		return 0;
	case 's':
		if (nonempty("output-sink", arg, "stderr, stdout or a file path") < 0)
			return -1;
		/* The console sinks in any case: STDOUT is no file name. */
		a->opts.output = !strcasecmp(arg, "stdout") ? "stdout" : !strcasecmp(arg, "stderr") ? "stderr" : arg;
		return 0;
	case 'r':
		if ((arg[0] == '@' ? refs_add_file(&a->refs, arg + 1) : refs_add(&a->refs, arg)) < 0) {
			cli_report_error(arg);
			return -1;
		}
		return 0;
	case 'i':
	case 'x':
		return add_patterns(a, c, arg);
	case 'S':
		rows = strtol(arg, &end, 10);
		if (*end || end == arg || !strchr("0123456789", arg[0]) || rows < 0 || rows > CLI_SUMMARY_MAX) {
			fprintf(stderr, "locktime: error LT%03d: --summary: '%s' is not a number of rows from 0 to %d\n",
				LT_E_USAGE, arg, CLI_SUMMARY_MAX);
			return -1;
		}
		a->opts.summary = arg;
		return 0;
	case 'R':
		if (nonempty("report", arg, "a file path; {pid} is the process id") < 0)
			return -1;
		a->opts.report = arg;
		return 0;
	case 'L':
		if (!(a->opts.lock_order = switch_value(arg))) {
			fprintf(stderr, "locktime: error LT%03d: --lock-order: '%s' is not on or off\n", LT_E_USAGE, arg);
			return -1;
		}
		return 0;
	case 'l':
		if (!(a->opts.lines = weave_lines_value(arg))) {
			fprintf(stderr, "locktime: error LT%03d: --lines: '%s' is not all or a number of lines a second "
					"from 0 to 1000000\n", LT_E_USAGE, arg);
			return -1;
		}
		return 0;
	case 'k': a->key_file = arg; return 0;
	case 'K':
		if (nonempty("key-container", arg, "the name of a key container") < 0)
			return -1;
		a->key_container = arg;
		return 0;
	case 'v': a->verbosity = 1; return 0;
	case 'q': a->verbosity = -1; return 0;
	case 'u': a->unpack = arg; return 0;
	default:
		fprintf(stderr, "locktime: error LT%03d: weave: unknown option or missing value: %s\n", LT_E_USAGE, word);
		return -1;
	}
}

/* The inputs argv[first..argc) of a parsed command line: 0, or -1 after an error message. */
static int check_inputs(const struct weave_args *a, int first, int argc, char **argv)
{
	if (first >= argc) {
		fprintf(stderr, "locktime: error LT%03d: weave: no input file\n", LT_E_USAGE);
		return -1;
	}
	if (a->output && argc - first > 1) {
		fprintf(stderr, "locktime: error LT%03d: weave: -o takes one input file\n", LT_E_USAGE);
		return -1;
	}
	if (a->unpack && (a->output || !cli_is_package(argv[first]))) {
		fprintf(stderr, "locktime: error LT%03d: weave: --unpack DIR takes a .nupkg and entry names, not -o\n",
			LT_E_USAGE);
		return -1;
	}
	return 0;
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
		{ "include", required_argument, NULL, 'i' },
		{ "exclude", required_argument, NULL, 'x' },
		{ "key", required_argument, NULL, 'k' },
		{ "key-container", required_argument, NULL, 'K' },
		{ "summary", required_argument, NULL, 'S' },
		{ "report", required_argument, NULL, 'R' },
		{ "lock-order", required_argument, NULL, 'L' },
		{ "lines", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	struct weave_args a = { .opts = { .threshold_ms = 1.0, .output = "stderr" } };
	struct weave_ref *read = NULL;
	const char *key_from = NULL;
	struct lt_rsa_key *key = NULL;
	int c, i, failed = 0;

	optind = 1;
	opterr = 0; /* getopt's own message is not in LT0NN form: weave_option's default case says it */
	while ((c = getopt_long(argc, argv, "o:r:vq", longopts, NULL)) != -1)
		if (weave_option(&a, c, optarg, argv[optind - 1]) < 0)
			goto usage;
	if (check_inputs(&a, optind, argc, argv) < 0)
		goto usage;
	if (weave_key_find(a.key_file, a.key_container, &key, &key_from) < 0 ||
	    weave_refs_read(&read, (const char *const *)a.refs.paths, a.refs.n) < 0) {
		/* A key file's errors are the file's; a container's messages name it. */
		cli_report_error(key_from && key_from == a.key_file && !key ? a.key_file : "locktime");
		lt_rsa_free(key);
		weave_args_free(&a);
		return 1;
	}
	if (key && a.verbosity >= 1) /* with both, which one csc's order picked */
		printf("locktime: strong-name key: %s %s\n", key_from == a.key_container ? "key container" : "key file",
		       key_from);
	a.opts.refs = read;
	a.opts.key = key;
	a.opts.nrefs = a.refs.n;
	a.opts.include = (const char *const *)a.include.paths;
	a.opts.ninclude = a.include.n;
	a.opts.exclude = (const char *const *)a.exclude.paths;
	a.opts.nexclude = a.exclude.n;
	if (a.unpack) /* --unpack DIR PKG.nupkg [ENTRY...] */
		failed = cli_unpack_package(argv[optind], a.unpack, (const char *const *)argv + optind + 1, argc - optind - 1,
					    &a.opts, a.verbosity);
	for (i = optind; i < argc && !a.unpack; i++) {
		const char *out = a.output ? a.output : argv[i];
		failed |= cli_is_package(argv[i]) ? cli_weave_package(argv[i], out, &a.opts, a.verbosity)
						  : weave_one(argv[i], out, &a.opts, a.verbosity);
	}
	weave_refs_free(read, a.refs.n);
	lt_rsa_free(key);
	weave_args_free(&a);
	return failed ? 1 : 0;
usage:
	weave_args_free(&a);
	fputs("run 'locktime --help' for usage\n", stderr);
	return 2;
}
