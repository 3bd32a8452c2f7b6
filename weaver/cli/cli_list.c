/* cli_list.c - `locktime list`: one line per lock acquisition site. */
#include "cli.h"
#include "cli_package.h"
#include "cli_print.h"
#include "lt_error.h"
#include "weave_file.h"

#include <stdio.h>

static void print_site(void *ctx, const struct weave_site *s)
{
	(void)ctx;
	cli_print_site(NULL, s);
}

int cli_list(int argc, char **argv)
{
	int rc = 1, reference;
	long n;

	if (argc != 2) {
		fprintf(stderr, "locktime: error LT%03d: usage: locktime list FILE\n", LT_E_USAGE);
		return 2;
	}
	if (cli_is_package(argv[1]))
		return cli_list_package(argv[1]);
	lt_error_clear();
	if ((n = weave_list_file(argv[1], print_site, NULL, &reference)) >= 0) {
		/* A note on stderr: stdout stays one line per site. */
		if (n == 0 && reference)
			fprintf(stderr, "%s: a reference assembly: its methods have no real bodies, so no lock sites (list the "
					"implementation assembly instead)\n", argv[1]);
		rc = 0;
	} else {
		cli_report_error(argv[1]);
	}
	return rc;
}
