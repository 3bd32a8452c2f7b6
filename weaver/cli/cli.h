/* cli.h - the `locktime` commands main.c dispatches to, and the version. */
#ifndef CLI_H
#define CLI_H

#include <stddef.h>

/* The next release's version (the Makefile reads it for the packages' versions). */
#define LOCKTIME_VERSION "0.1.0"

/* What `locktime --version` prints (cli_version.c): the version of the package the binary was built
 * for, or LOCKTIME_VERSION "-dev" for a build from source. */
extern const char cli_version[];

/* Read the text file at path as lines: *lines gets *n NUL-terminated lines
 * and a NULL after them, in one block (free(*lines) frees all).  Line ends
 * "\n" or "\r\n" and a leading UTF-8 byte order mark are dropped; nothing
 * else (spaces and quotes are kept).  Returns 0, or -1 with LT_E_IO (cannot
 * read), LT_E_USAGE (a NUL byte: not text) or LT_E_NOMEM. */
int cli_read_lines(const char *path, char ***lines, size_t *n);

/* The commands: argc/argv after the command word; return the exit status
 * (0 done, 1 an input failed, 2 usage). */
int cli_weave(int argc, char **argv);
int cli_list(int argc, char **argv);
int cli_report(int argc, char **argv);
int cli_check(int argc, char **argv);

#endif
