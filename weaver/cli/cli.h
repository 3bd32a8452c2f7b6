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

struct weave_opts;
struct weave_site;

/* One `list` line for site s: "[<prefix>: ]<Type>::<Method> IL_xxxx <kind>
 * [<file>:<line>]" on stdout; prefix NULL for none. */
void cli_print_site(const char *prefix, const struct weave_site *s);

/* NuGet packages (cli_package.c).  cli_is_package: 1 when path ends in
 * .nupkg (any case).  cli_weave_package weaves the assemblies inside `in`
 * and writes the package to `out` (may equal `in`: atomic replace; nothing
 * is written on failure); cli_list_package prints "<entry>: <site line>" for
 * each site of each assembly inside.  Both return 0, or 1 after reporting
 * the error. */
int cli_is_package(const char *path);
int cli_weave_package(const char *in, const char *out, const struct weave_opts *opts, int verbosity);
int cli_list_package(const char *path);

/* `locktime weave --unpack DIR PKG.nupkg [ENTRY...]`: weave the assemblies
 * ENTRY... of the package (names as stored; none: every assembly) and write
 * each to DIR/<entry>, woven or as it is; the package is not written.
 * Returns 0, or 1 after reporting the error. */
int cli_unpack_package(const char *in, const char *dir, const char *const *entries, int n,
		       const struct weave_opts *opts, int verbosity);

#endif
