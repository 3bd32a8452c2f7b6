/* pkg_weave.h - weaving and listing the assemblies inside a .nupkg, in memory. */
#ifndef PKG_WEAVE_H
#define PKG_WEAVE_H

#include <stddef.h>
#include <stdint.h>

#include "lt_buf.h"
#include "pkg_nuspec.h"
#include "weave.h"

/* What happened to one entry, for the caller to print. */
enum pkg_note_kind {
	PKG_WOVEN,             /* an assembly was woven: nsites sites timed */
	PKG_NO_LOCKS,          /* an assembly without a lock: left as it is */
	PKG_ALREADY_WOVEN,     /* an assembly LockTime wove before: left as it is */
	PKG_FILTERED_OUT,      /* an assembly whose nsites sites the filters all left alone: as it is */
	PKG_NOT_WOVEN,         /* not weavable (not .NET, mixed-mode, ReadyToRun, reference
				* assembly): code and msg say why; left as it is */
	PKG_STRONG_NAMED,      /* a woven assembly was strong-name signed: that no longer matches */
	PKG_TRIM_UNFIT,        /* a woven assembly's own class of an attribute for the trimmer does not
				* fit the run-time's uses (trim_unfit): they are left out (LT025) */
	PKG_SIGNATURE_DROPPED, /* the package signature was removed (weaving invalidated it) */
	PKG_SYMBOLS_STALE,     /* a woven assembly's symbols (embedded, or the package's PDB beside it)
				* could not be rewritten: msg says which and why (LT017) */
	PKG_SYMBOLS_RENEWED,   /* a woven assembly's PDB is not in the package: its PDB id was renewed
				* so that the PDB it named (a symbol server's) does not match; msg */
};

struct pkg_note {
	enum pkg_note_kind kind;
	const char *entry;  /* the entry's name as stored */
	const char *tfm;    /* an assembly's <tfm> folder ("net6.0", "netstandard2.0"), else "" */
	long nsites;        /* PKG_WOVEN: sites timed; PKG_FILTERED_OUT: found */
	const char *framework; /* PKG_WOVEN: its TargetFrameworkAttribute (weave_job's framework), "" when none */
	int code;           /* PKG_NOT_WOVEN: the lt_code of the reason */
	const char *msg;    /* PKG_NOT_WOVEN: the reason; PKG_SYMBOLS_*: weave_symbols_why's text */
	unsigned trim_unfit; /* PKG_TRIM_UNFIT: weave_job's trim_unfit */
};

/* Callbacks; any may be NULL.  Pointers in a note or site live for the call. */
struct pkg_report {
	void (*note)(void *ctx, const struct pkg_note *n);
	void (*site)(void *ctx, const char *entry, const struct weave_site *s); /* pkg_list */
	void *ctx;
};

/* Weave every assembly of the package in data[0..size) (see
 * nupkg_is_assembly: lib/<tfm>/ and runtimes/<rid>/lib/<tfm>/, never ref/),
 * in entry order, each with weave_job_run and `opts` (without symbols:
 * there is no file beside it to read a PDB from; references resolve from
 * opts->refs, else from each assembly's own AssemblyRefs - netstandard for a
 * netstandard assembly).  When an assembly was woven, .signature.p7s is
 * dropped and the new package is appended to `out`; every other entry is
 * copied unchanged.  When nothing was woven (no locks, or woven before)
 * `out` is left empty: the package stays as it is.  *spec gets the manifest.
 * Returns the number of assemblies woven (>= 0), or -1 with the errors of
 * nupkg_open and nupkg_read, and those of weave_image and img_write for an
 * assembly (prefixed with its entry name); nothing is appended then. */
long pkg_weave(const uint8_t *data, size_t size, const struct weave_opts *opts, const struct pkg_report *r,
	       struct nuspec *spec, struct lt_buf *out);

/* Where pkg_unpack puts each assembly: its entry name (checked with
 * nupkg_name_check: a relative path that stays below the folder it is
 * joined to) and its bytes.  Returns 0, or -1 with the error recorded. */
typedef int (*pkg_put_fn)(void *ctx, const char *entry, const uint8_t *data, size_t size);

/* Weave the assemblies entries[0..n) of the package (names as stored; n 0:
 * every assembly) as pkg_weave does and hand each to `put`: the woven bytes,
 * or the bytes as they are when it has no lock, was woven before, or is not
 * weavable.  The package itself is not written.  *spec gets the manifest.
 * Returns the number of assemblies woven (>= 0), or -1 with the errors of
 * pkg_weave, LT_E_PACKAGE when a named entry is not an assembly of the
 * package (see nupkg_is_assembly), and those of `put`. */
long pkg_unpack(const uint8_t *data, size_t size, const char *const *entries, size_t n, const struct weave_opts *opts,
		const struct pkg_report *r, pkg_put_fn put, void *put_ctx, struct nuspec *spec);

/* Call r->site for every lock site of every assembly of the package, in
 * entry order and then as weave_list does.  *spec gets the manifest.
 * Returns the number of sites, or -1 with the errors of nupkg_open,
 * nupkg_read and weave_list (prefixed with the entry name). */
long pkg_list(const uint8_t *data, size_t size, const struct pkg_report *r, struct nuspec *spec);

#endif
