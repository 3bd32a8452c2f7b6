/* cli_report.c - `locktime report` (HTML, pprof, text, trace) and `locktime check` (limits) over report files. */
#include "cli.h"
#include "cli_print.h"
#include "lt_buf.h"
#include "lt_error.h"
#include "lt_file.h"
#include "rp_output.h"
#include "rp_report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The index of an earlier file of files[0..i) that is files[i] (the same
 * device and inode, lt_file_same: another path to it too), else -1. */
static int earlier_same(char **files, int i)
{
	for (int j = 0; j < i; j++)
		if (lt_file_same(files[j], files[i]))
			return j;
	return -1;
}

/* Read every file into r once (a file named again is a warning naming both),
 * sorted; 0, or 1 after printing the first file's error. */
static int read_all(struct rp_report *r, char **files, int n)
{
	for (int i = 0; i < n; i++) {
		int same = earlier_same(files, i);
		if (same >= 0) {
			cli_warn(files[i], LT_E_SAME_FILE, "the same file as %s, given again: read once", files[same]);
			continue;
		}
		lt_error_clear();
		if (rp_add_file(r, files[i])) {
			cli_report_error(files[i]);
			return 1;
		}
	}
	rp_sort(r);
	return 0;
}

static int usage_error(const char *what)
{
	fprintf(stderr, "locktime: error LT%03d: %s\n", LT_E_USAGE, what);
	return 2;
}

/* The bytes in b to path ("-": stdout); 0, or 1 after printing the error. */
static int emit(const struct lt_buf *b, const char *path)
{
	if (!strcmp(path, "-")) {
		/* A reader that stopped reading (`| head`) wanted no more: not an error (SIGPIPE ignored). */
		if ((b->len && fwrite(b->data, 1, b->len, stdout) != b->len) || fflush(stdout))
			return errno == EPIPE ? 0 : (perror("locktime: stdout"), 1);
		return 0;
	}
	lt_error_clear();
	if (lt_file_write_atomic(path, b->data ? b->data : (const uint8_t *)"", b->len)) {
		cli_report_error(path);
		return 1;
	}
	return 0;
}

/* The formats of `locktime report`: name, the output without -o, the writer (rp_output.h). */
static const struct {
	const char *name, *out;
	int (*write)(const struct rp_report *, struct lt_buf *);
} formats[] = {
	{ "html", "report.html", rp_write_html },
	{ "pprof", "locks.pb.gz", rp_write_pprof },
	{ "text", "-", rp_write_text },
	{ "trace", "trace.json", rp_write_trace },
};

int cli_report(int argc, char **argv)
{
	const char *out = NULL, *format = "html";
	size_t f = 0;
	char **files = calloc((size_t)argc, sizeof *files);
	int n = 0, rc;
	struct rp_report r = RP_REPORT_INIT;
	struct lt_buf b = LT_BUF_INIT;

	if (!files)
		return usage_error("out of memory");
	for (int i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) && i + 1 < argc)
			out = argv[++i];
		else if (!strcmp(argv[i], "--format") && i + 1 < argc)
			format = argv[++i];
		else if (argv[i][0] == '-' && argv[i][1])
			return free(files), usage_error("usage: locktime report RUN.json... [-o PATH] [--format html|pprof|text|trace]");
		else
			files[n++] = argv[i];
	}
	if (n == 0)
		return free(files), usage_error("usage: locktime report RUN.json... [-o PATH] [--format html|pprof|text|trace]");
	while (f < sizeof formats / sizeof *formats && strcmp(format, formats[f].name))
		f++;
	if (f == sizeof formats / sizeof *formats)
		return free(files), usage_error("--format: html, pprof, text or trace");
	if (!out)
		out = formats[f].out;
	for (int i = 0; strcmp(out, "-") && i < n; i++)
		if (lt_file_same(out, files[i])) {
			fprintf(stderr, "%s: error LT%03d: the output is the report %s, which would be overwritten: name "
				"another file with -o\n", out, LT_E_USAGE, files[i]);
			free(files);
			return 2;
		}
	rc = read_all(&r, files, n);
	if (rc == 0) {
		lt_error_clear();
		if (formats[f].write(&r, &b))
			cli_report_error(out), rc = 1;
		else
			rc = emit(&b, out);
	}
	lt_buf_free(&b);
	rp_free(&r);
	free(files);
	return rc;
}

/* Largest --max-hold-ms, --max-wait-ms: as LockTimeMaxHoldMs (LockTime.Numbers.targets). */
#define CHECK_LIMIT_MS_MAX 1e12

/* A limit in ms ("100", "0.5") into ns; -1 when not a number from 0 to CHECK_LIMIT_MS_MAX. */
static int64_t limit_ns(const char *text)
{
	char *end;
	double v = strtod(text, &end);
	if (!*text || *end || !(v >= 0) || v > CHECK_LIMIT_MS_MAX)
		return -1;
	return (int64_t)llround(v * 1e6);
}

int cli_check(int argc, char **argv)
{
	static const char use[] = "usage: locktime check RUN.json... [--max-hold-ms N] [--max-wait-ms N] [--ignore-deadlocks]";
	struct rp_limits limits = { -1, -1, 1 };
	char **files = calloc((size_t)argc, sizeof *files);
	int n = 0, rc;
	size_t over = 0;
	struct rp_report r = RP_REPORT_INIT;
	struct lt_buf b = LT_BUF_INIT;

	if (!files)
		return usage_error("out of memory");
	for (int i = 1; i < argc; i++) {
		int hold = !strcmp(argv[i], "--max-hold-ms"), wait = !strcmp(argv[i], "--max-wait-ms");
		if ((hold || wait) && i + 1 < argc) {
			int64_t v = limit_ns(argv[++i]);
			if (v < 0) {
				free(files);
				fprintf(stderr, "locktime: error LT%03d: %s %s: not a number of milliseconds from 0 to %.0f\n",
					LT_E_USAGE, argv[i - 1], argv[i], CHECK_LIMIT_MS_MAX);
				return 2;
			}
			*(hold ? &limits.max_hold_ns : &limits.max_wait_ns) = v;
		} else if (!strcmp(argv[i], "--ignore-deadlocks")) {
			limits.deadlocks = 0;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return free(files), usage_error(use);
		} else {
			files[n++] = argv[i];
		}
	}
	if (n == 0)
		return free(files), usage_error(use);
	if (limits.max_hold_ns < 0 && limits.max_wait_ns < 0 && !limits.deadlocks)
		return free(files), usage_error("locktime check: --ignore-deadlocks without --max-hold-ms or --max-wait-ms checks nothing");
	rc = read_all(&r, files, n);
	if (rc == 0) {
		lt_error_clear();
		if (rp_write_check(&r, &limits, &b, &over))
			cli_report_error(files[0]), rc = 1;
		else
			rc = emit(&b, "-") || over ? 1 : 0;
	}
	lt_buf_free(&b);
	rp_free(&r);
	free(files);
	return rc;
}
