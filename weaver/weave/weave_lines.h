/* weave_lines.h - source lines of lock sites from the assembly's portable PDB
 * (embedded, or a file next to the assembly, found before weaving), for the
 * site location strings. */
#ifndef WEAVE_LINES_H
#define WEAVE_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "md_image.h"
#include "pdb_find.h"

/* The portable PDB of an assembly, or nothing (has_pdb 0). */
struct wlines {
	int has_pdb;                /* 1 when md is a PDB whose id matches the assembly */
	const struct md_image *md;  /* borrowed from the pdb_found */
	struct wlines_memo *memo;   /* the sequence points of the method asked last (owned) */
};

/* The lines of the debug symbols `pdb` found for an assembly (pdb_find.h,
 * weave_pdb_find): used when they are a matching portable PDB (PDB_FILE,
 * PDB_EMBEDDED) with MethodDebugInformation rows; anything else, and NULL,
 * gives out->has_pdb 0: debug info never fails a weave.  out borrows pdb,
 * which must outlive it.  The sequence points of one method are decoded
 * once however many of its sites ask.  Returns 0 (release with
 * wlines_free), or -1 with LT_E_NOMEM. */
int wlines_init(struct wlines *out, const struct pdb_found *pdb);

/* Release what wlines_init allocated.  NULL is a no-op. */
void wlines_free(struct wlines *lines);

/* The source location of IL offset `il_offset` (bytes, in the input body) of
 * MethodDef `methoddef` (1-based row; its MethodDebugInformation row has the
 * same number): the line of the last non-hidden sequence point at an offset
 * <= il_offset, written as "<file name>:<line>" (the last part of the
 * Document name, PortablePdb-Metadata.md "Document Name Blob") into
 * buf[0..n) like snprintf.  Returns 1, or 0 when there is no PDB, no
 * sequence point, or the PDB's data is malformed (buf is then untouched),
 * or -1 with LT_E_NOMEM. */
int wlines_find(const struct wlines *lines, uint32_t methoddef, uint32_t il_offset, char *buf, size_t n);

/* Which sequence point wlines_point picks. */
enum wlines_which {
	WLINES_AT_OR_BEFORE, /* the last visible one at an offset <= il_offset (wlines_find) */
	WLINES_AFTER,        /* the first visible one at an offset > il_offset */
};

/* As wlines_find, with the point chosen by `which`; *point (when not NULL)
 * gets the point's IL offset.  Returns 1, or 0 (buf and *point untouched),
 * or -1 with LT_E_NOMEM. */
int wlines_point(const struct wlines *lines, uint32_t methoddef, uint32_t il_offset, enum wlines_which which,
		 char *buf, size_t n, uint32_t *point);

/* The source lines MethodDef `methoddef`'s visible sequence points cover in
 * the document of its first one: *doc gets that Document row, *first and
 * *last the smallest StartLine and largest EndLine there.  Returns 1, or 0
 * when there is no PDB, no visible point, or malformed data, or -1 with
 * LT_E_NOMEM. */
int wlines_span(const struct wlines *lines, uint32_t methoddef, uint32_t *doc, uint32_t *first, uint32_t *last);

#endif
