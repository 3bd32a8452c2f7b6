/* cli.h - the `locktime` command line: shared diagnostics and the commands. */
#ifndef CLI_H
#define CLI_H

#define LOCKTIME_VERSION "0.1.0"

/* Print the recorded error (lt_error_last) for `file` in MSBuild's canonical
 * format "<file>: error LT0NN: <message>" on stderr. */
void cli_report_error(const char *file);

/* Print "<file>: warning LT0NN: <message>" on stderr. */
void cli_warn(const char *file, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The commands: argc/argv after the command word; return the exit status
 * (0 done, 1 an input failed, 2 usage). */
int cli_weave(int argc, char **argv);
int cli_list(int argc, char **argv);

#endif
