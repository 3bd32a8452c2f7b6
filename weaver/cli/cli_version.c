/* cli_version.c - the version `locktime --version` prints.  `make package` compiles this file with
 * LOCKTIME_BUILD_VERSION, the packages' version (cli.h's for a release, cli.h's with -dev.<UTC time>
 * otherwise), into the binaries it packs; every other build is cli.h's with "-dev": built from
 * source, not the release. */
#include "cli.h"

#ifdef LOCKTIME_BUILD_VERSION
const char cli_version[] = LOCKTIME_BUILD_VERSION;
#else
const char cli_version[] = LOCKTIME_VERSION "-dev";
#endif
