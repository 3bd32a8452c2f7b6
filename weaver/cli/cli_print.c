/* cli_print.c - diagnostics and site lines, as every command prints them (see cli_print.h). */
#include "cli_print.h"
#include "lt_buf.h"
#include "lt_error.h"
#include "weave.h"
#include "weave_framework.h"

#include <stdarg.h>
#include <stdio.h>

void cli_report_error(const char *file)
{
	const struct lt_error *e = lt_error_last();
	fprintf(stderr, "%s: error LT%03d: %s\n", file, e->code, e->msg[0] ? e->msg : "unknown error");
}

void cli_warn(const char *file, int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: warning LT%03d: ", file, code);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* " --NAME 'P1' 'P2'..." for the n patterns p, none when n is 0. */
static void put_patterns(struct lt_buf *b, const char *name, const char *const *p, size_t n)
{
	if (n)
		lt_buf_printf(b, " --%s", name);
	for (size_t i = 0; i < n; i++)
		lt_buf_printf(b, " '%s'", p[i]);
}

void cli_warn_filtered(const char *file, const char *entry, long nsites, const struct weave_opts *opts)
{
	struct lt_buf b = LT_BUF_INIT;

	put_patterns(&b, "include", opts->include, opts->ninclude);
	put_patterns(&b, "exclude", opts->exclude, opts->nexclude);
	lt_buf_u8(&b, 0);
	cli_warn(file, LT_E_FILTERED, "%s%s%ld lock site%s found, all filtered out by%s%s LockTimeIgnoreAttribute: "
		 "nothing woven, left as it is", entry ? entry : "", entry ? ": " : "", nsites, nsites == 1 ? "" : "s",
		 b.data ? (char *)b.data : "", opts->ninclude || opts->nexclude ? " or" : "");
	lt_buf_free(&b);
}

void cli_print_site(const char *prefix, const struct weave_site *s)
{
	/* <Type>::<Method> IL_xxxx <kind> [<file>:<line>] [(woven)]: the location
	 * is what woven reports print after "at" (the IL offset when there is no
	 * line); a woven site, read back from the site table, has no input
	 * offset: "-" stands in its place. */
	char offset[16] = "-";

	if (!s->woven)
		snprintf(offset, sizeof offset, "IL_%04x", s->il_offset);
	printf("%s%s%s %s %s%s%s%s\n", prefix ? prefix : "", prefix ? ": " : "", s->method, offset,
	       weave_kind_name(s->kind), s->location[0] ? " " : "", s->location, s->woven ? " (woven)" : "");
}

void cli_print_metrics(const char *file, const char *entry, const char *framework)
{
	const char *fw = framework[0] ? framework : "no TargetFrameworkAttribute";
	int metrics = weave_framework_metrics(framework);

	printf("%s: %s%s", file, entry ? entry : "", entry ? ": " : "");
	if (metrics > 0)
		printf("live metrics: the Meter \"LockTime\" (%s)\n", fw);
	else if (metrics == 0)
		printf("no live metrics: %s has no System.Diagnostics.Metrics (.NET 6 and later have)\n", fw);
	else
		printf("live metrics when the program runs on .NET 6 or later (%s)\n", fw);
}
