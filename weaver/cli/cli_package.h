/* cli_package.h - `locktime weave` and `locktime list` on a NuGet package. */
#ifndef CLI_PACKAGE_H
#define CLI_PACKAGE_H

struct weave_opts;

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
