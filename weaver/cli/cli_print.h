/* cli_print.h - what every `locktime` command prints: diagnostics in MSBuild's
 * canonical format, and the `list` line of a lock site. */
#ifndef CLI_PRINT_H
#define CLI_PRINT_H

#include "lt_error.h"

struct weave_site;
struct weave_opts;

/* Print the recorded error (lt_error_last) for `file` in MSBuild's canonical
 * format "<file>: error LT0NN: <message>" on stderr. */
void cli_report_error(const char *file);

/* Print "<file>: warning LT0NN: <message>" on stderr. */
void cli_warn(const char *file, int code, const char *fmt, ...) LT_PRINTF(3, 4);

/* Warning LT022 for `file` ([<entry>: ] when entry is not NULL): nsites lock
 * sites were found and the filters of opts (--include, --exclude, named with
 * their patterns, and LockTimeIgnoreAttribute) left every one alone. */
void cli_warn_filtered(const char *file, const char *entry, long nsites, const struct weave_opts *opts);

/* One `list` line for site s: "[<prefix>: ]<Type>::<Method> IL_xxxx <kind>
 * [<file>:<line>]" on stdout; prefix NULL for none. */
void cli_print_site(const char *prefix, const struct weave_site *s);

/* -v: whether a woven assembly gets live metrics (the run-time's Meter,
 * docs/metrics.md), from `framework`, its TargetFrameworkAttribute ("" for
 * none: weave_target_framework): one line "<file>: [<entry>: ]live metrics..."
 * on stdout; entry (a package's entry name) NULL for none. */
void cli_print_metrics(const char *file, const char *entry, const char *framework);

#endif
