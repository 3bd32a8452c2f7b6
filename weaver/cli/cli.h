/* cli.h - the `locktime` commands main.c dispatches to, and the version. */
#ifndef CLI_H
#define CLI_H

#define LOCKTIME_VERSION "0.1.0"

/* The commands: argc/argv after the command word; return the exit status
 * (0 done, 1 an input failed, 2 usage). */
int cli_weave(int argc, char **argv);
int cli_list(int argc, char **argv);

#endif
