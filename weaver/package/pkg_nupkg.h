/* pkg_nupkg.h - a .nupkg (a zip archive) open for editing: entries checked against hostile
 * names and sizes, its .nuspec read, assemblies found, read and replaced, and the archive
 * written again with every other entry copied as it was.
 *
 * The archive is opened from memory with libzip and edited in place: on write,
 * libzip copies each unchanged entry's compressed data as it is (no inflate,
 * no deflate), keeps names, order, times, attributes and extra fields, and
 * deflates only the replaced entries.  The input bytes are never modified. */
#ifndef PKG_NUPKG_H
#define PKG_NUPKG_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <zip.h>

#include "lt_buf.h"
#include "pkg_nuspec.h"

/* Sane limits.  Sizes are the declared uncompressed sizes, in bytes. */
#define NUPKG_MAX_ENTRIES 65536u                   /* entries in one package */
#define NUPKG_MAX_ENTRY_SIZE ((uint64_t)512 << 20) /* one entry */
#define NUPKG_MAX_TOTAL_SIZE ((uint64_t)4 << 30)   /* all entries together */
#define NUPKG_MAX_NUSPEC_SIZE ((uint64_t)1 << 20)  /* the .nuspec */
#define NUPKG_MAX_NAME 1024u                       /* bytes of an entry name */

struct nupkg_limits {
	uint64_t max_entries, max_entry_size, max_total_size;
};

struct nupkg_entry {
	char *name;     /* raw name bytes as stored (owned), NUL-terminated */
	uint64_t size;  /* declared uncompressed size, bytes */
	time_t mtime;   /* modification time (DOS time, as libzip converts it) */
};

struct nupkg {
	zip_t *zip;                  /* the open archive, NULL once written */
	zip_source_t *src;           /* the archive bytes (libzip writes the new archive here) */
	struct nupkg_entry *entries; /* in archive order */
	uint32_t nentries;
	struct nuspec spec;          /* the parsed manifest */
	struct nupkg_limits lim;
	int changed;                 /* an entry was replaced or deleted */
};

/* Open the package in data[0..size) (borrowed: it must outlive *out and is
 * never written) and check it as a whole before anything is read from it:
 *   - the zip structure, with libzip's consistency checks (local headers
 *     agree with the central directory);
 *   - at most lim->max_entries entries, each declaring at most
 *     lim->max_entry_size bytes, all together at most lim->max_total_size;
 *     no encrypted entry; Stored or Deflate compression only;
 *   - every name passes nupkg_name_check; no two names equal ignoring ASCII
 *     case (they would be one file on Windows and macOS);
 *   - exactly one .nuspec at the root, at most NUPKG_MAX_NUSPEC_SIZE bytes,
 *     read with nuspec_parse into (*out)->spec.
 * lim NULL means the NUPKG_MAX_* defaults.  Returns 0 and *out (free with
 * nupkg_free), or -1 with LT_E_PACKAGE (each failure above; the message
 * names the entry), LT_E_NOMEM. */
int nupkg_open(struct nupkg **out, const uint8_t *data, size_t size, const struct nupkg_limits *lim);

/* Free everything.  NULL is a no-op. */
void nupkg_free(struct nupkg *p);

/* Check an entry name: not empty, at most NUPKG_MAX_NAME bytes, relative
 * ('/'-separated, no leading '/'), no '\', no ':' (drive letters, alternate
 * streams), no control character, no "." or ".." segment and no empty
 * segment (a trailing '/' marks a folder) - also after decoding %XX escapes,
 * as NuGet does when it unpacks.  Returns 0, or -1 with LT_E_PACKAGE. */
int nupkg_name_check(const char *name);

/* Whether `name` is an assembly to weave: lib/<tfm>/.../<file>.dll|.exe or
 * runtimes/<rid>/lib/<tfm>/.../<file>.dll|.exe (folder names and extensions
 * in any case; never ref/).  Returns 1 and the <tfm> segment as
 * name[*tfm_at .. *tfm_at + *tfm_len), or 0. */
int nupkg_is_assembly(const char *name, size_t *tfm_at, size_t *tfm_len);

/* Whether `name` is the package signature, .signature.p7s at the root. */
int nupkg_is_signature(const char *name);

/* Inflate entry i (0-based, < nentries) into a new buffer *out (freed by the
 * caller with free(); one '\0' is appended past *size).  Inflates no more
 * than the declared size: an entry whose data goes on past it (a zip bomb
 * lying about its size), stops short of it, or fails its CRC is an error.
 * Returns 0, or -1 with LT_E_PACKAGE (the message names the entry),
 * LT_E_NOMEM. */
int nupkg_read(struct nupkg *p, uint32_t i, uint8_t **out, size_t *size);

/* Replace entry i's data with data[0..size), taking ownership of data (freed
 * with free(), also on failure).  Name, place, time and attributes stay; the
 * data is deflated on write.  Returns 0, or -1 with LT_E_PACKAGE, LT_E_NOMEM. */
int nupkg_replace(struct nupkg *p, uint32_t i, uint8_t *data, size_t size);

/* Remove entry i from the package written.  Returns 0, or -1 with LT_E_PACKAGE. */
int nupkg_delete(struct nupkg *p, uint32_t i);

/* Write the edited archive into `out` (appended) and close it: afterwards
 * only nupkg_free may be called.  Returns 0, or -1 with LT_E_PACKAGE (libzip
 * failed to write), LT_E_NOMEM. */
int nupkg_write(struct nupkg *p, struct lt_buf *out);

#endif
