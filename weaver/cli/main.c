/* main.c - entry point of `locktime`: dispatch to a command, help, version. */
#include "cli.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "lt_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: locktime weave [options] FILE...   weave each assembly in place (atomic replace)\n"
	"         -o, --output PATH                 write here instead (one input)\n"
	"         --threshold-ms X                  report threshold baked in (default 1; 0 = every lock)\n"
	"         --output-sink S                   default report sink baked in: stderr, stdout or a path\n"
	"         --summary N                       rows of the summary at exit baked in (default 10; 0 = none)\n"
	"         --report PATH                     report file baked in, written at exit ({pid} = process id)\n"
	"         --lock-order on|off               follow the lock order for potential deadlocks (default on)\n"
	"         --lines N|all                     slow-lock lines a second per site after its first 10, the\n"
	"                                           rest rolled up every 10 s (default 2; all = every line)\n"
	"         -r, --reference PATH              assembly to resolve framework types against, added to\n"
	"                                           the framework the target references (repeatable;\n"
	"                                           @FILE = one path a line)\n"
	"         --include PATTERNS                weave only methods matching one (Namespace.Type::Method,\n"
	"                                           * wildcards, ';'-separated; repeatable; @FILE = one a line)\n"
	"         --exclude PATTERNS                leave methods matching one alone (same form)\n"
	"                                           (and always those under an attribute named LockTimeIgnoreAttribute)\n"
	"         --key FILE.snk                    sign strong-named assemblies again with this key pair\n"
	"         --key-container NAME              ... with the key pair of this key container (Mono's key store, or\n"
	"                                           CryptoAPI's on Windows); with --key too: the container if it exists\n"
	"         -v, --verbose / -q, --quiet\n"
	"         --unpack DIR                      with PKG.nupkg [ENTRY...]: write its woven assemblies\n"
	"                                           to DIR/<entry>, not the package (docs/packages.md)\n"
	"       locktime list FILE                  one line per lock acquisition site\n"
	"       locktime report RUN.json... [-o PATH] [--format html|pprof|text|trace]\n"
	"                                           the reports woven programs wrote (LOCKTIME_REPORT), added\n"
	"                                           up: one HTML page (default report.html), a gzipped pprof\n"
	"                                           profile (default locks.pb.gz), the summary table (stdout)\n"
	"                                           or the timeline as a Chrome trace (default trace.json)\n"
	"       locktime check RUN.json... [--max-hold-ms N] [--max-wait-ms N] [--ignore-deadlocks]\n"
	"                                           an error LT200/LT201 on the source line of each site held\n"
	"                                           or waited at or over the limit, LT202 on the line where a\n"
	"                                           deadlock's thread waits (unless --ignore-deadlocks); exit 1\n"
	"                                           when any\n"
	"       A FILE ending in .nupkg is a NuGet package: weave and list act on the assemblies\n"
	"       under its lib/ and runtimes/<rid>/lib/ folders; other entries are kept as they are.\n"
	"       locktime --help | --version\n"
	"\n"
	"At run time: LOCKTIME_THRESHOLD_MS overrides the threshold, LOCKTIME_OUTPUT the sink,\n"
	"LOCKTIME_SUMMARY the rows, LOCKTIME_REPORT the report (LOCKTIME_REPORT_INTERVAL_S: also every\n"
	"N seconds), LOCKTIME_LOCK_ORDER=0 stops following the lock order, LOCKTIME_METRICS=N tags at most\n"
	"N sites in the Meter \"LockTime\" (default 20, 0 to 1000; 0 = no Meter),\n"
	"LOCKTIME_DISABLED=1 (true, yes, on) turns timing off; a bad value is one warning line.\n";

static int run(int argc, char **argv);

int main(int argc, char **argv)
{
	char **lines = NULL, **args = NULL;
	size_t nlines;
	int rc;

	lt_file_start(&argc, &argv);
	/* locktime @FILE: the whole command line in FILE, one argument a line, as
	 * it is (no quoting, no nested @FILE; "-r @LIST" keeps its meaning).  The
	 * MSBuild targets pass everything this way, through no shell. */
	if (argc == 2 && argv[1][0] == '@') {
		if (cli_read_lines(argv[1] + 1, &lines, &nlines) < 0 || nlines > 1000000) {
			fprintf(stderr, "%s: error LT%03d: %s\n", argv[1] + 1, LT_E_USAGE,
				lines ? "too many lines" : lt_error_last()->msg);
			free(lines);
			return 2;
		}
		if (!(args = lt_malloc((nlines + 2) * sizeof *args))) {
			lt_nomem("%zu arguments", nlines + 2);
			fprintf(stderr, "locktime: error LT%03d: %s\n", LT_E_NOMEM, lt_error_last()->msg);
			free(lines);
			return 2;
		}
		args[0] = argv[0];
		memcpy(args + 1, lines, (nlines + 1) * sizeof *lines);
		argc = (int)nlines + 1;
		argv = args;
	}
	rc = run(argc, argv);
	free(args);
	free(lines);
	return rc;
}

/* The command line, once a response file is read. */
static int run(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("locktime %s\n", cli_version);
		return 0;
	}
	if (!strcmp(argv[1], "weave"))
		return cli_weave(argc - 1, argv + 1);
	if (!strcmp(argv[1], "list"))
		return cli_list(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return cli_report(argc - 1, argv + 1);
	if (!strcmp(argv[1], "check"))
		return cli_check(argc - 1, argv + 1);
	fprintf(stderr, "locktime: error LT%03d: unknown command '%s'\n%s", LT_E_USAGE, argv[1], usage);
	return 2;
}
