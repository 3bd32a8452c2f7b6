/* weave_lines.h - source lines of lock sites from the assembly's portable PDB
 * (embedded, or a file next to the assembly, found before weaving) or its
 * Mono .mdb, for the site location strings. */
#ifndef WEAVE_LINES_H
#define WEAVE_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "md_image.h"
#include "mdb.h"
#include "pdb_find.h"
#include "pdb_seq.h"

/* Reads the file at `path` into *data (owned, released with free) and *size
 * bytes, as lt_file_read: returns 0, or -1 with the error set.  The edge of
 * the pipeline gives it (weave_job_run): passes open no file themselves. */
typedef int (*wlines_reader)(const char *path, uint8_t **data, size_t *size);

/* Bytes of source text held at once (wlines_source): past them, the files
 * asked for least recently are released.  Sites come in MethodDef order, a
 * file's methods mostly together; a library of 200 files held them all
 * (21 MB, 26 MB with their line indexes) without it. */
#define WLINES_SOURCE_BUDGET ((size_t)4 << 20)

/* A source file named by a Document row, read when first asked for. */
struct wlines_source {
	int state;      /* 0 not read yet, 1 text holds it, -1 missing or changed since the build */
	uint8_t *text;  /* the file's bytes (owned) */
	size_t len;
	uint32_t *line_start; /* byte index in text where each line starts, [line - 1] (owned) */
	uint32_t nlines;    /* entries in line_start */
	uint64_t used;      /* when it was last asked for (wlines_source; the least recent is released first) */
};

/* The portable PDB or Mono .mdb of an assembly, or nothing (has_pdb 0). */
struct wlines {
	int has_pdb;                /* 1 when md is a PDB whose id matches the assembly, or mdb is set */
	const struct md_image *md;  /* borrowed from the pdb_found */
	const struct mdb_file *mdb; /* a matching .mdb (borrowed from the pdb_found), else NULL */
	struct wlines_memo *memo;   /* the sequence points of the method asked last (owned) */
	size_t common;              /* bytes of the Document names' common folder, its last separator included */
	uint32_t common_doc;        /* a document the common folder holds (0: none) */
	struct wlines_source *sources; /* [Document row - 1], owned; a cache, so filled through const */
	wlines_reader read;         /* reads the source files (NULL: none is read) */
	size_t source_budget;       /* bytes of source text held at once (wlines_init: WLINES_SOURCE_BUDGET) */
};

/* The lines of the debug symbols `pdb` found for an assembly (pdb_find.h,
 * weave_pdb_find): used when they are a matching portable PDB (PDB_FILE,
 * PDB_EMBEDDED) with MethodDebugInformation rows, or a matching .mdb
 * (PDB_MDB) with methods - its sources stand for Document rows, its line
 * tables for sequence points; anything else, and NULL,
 * gives out->has_pdb 0: debug info never fails a weave.  out borrows pdb,
 * which must outlive it; `read` (NULL: none) reads the source files
 * wlines_source gives.  The sequence points of one method are decoded
 * once however many of its sites ask.  Also finds the common folder of all
 * Document names with code (PortablePdb-Metadata.md "Document Name Blob"),
 * which reports leave out, but for documents outside the project (a
 * folder "obj", "contentFiles" or ".nuget/packages" in their path: generated
 * files, sources of source-only packages), unless all are.  Returns 0 (release with wlines_free), or -1
 * with LT_E_NOMEM. */
int wlines_init(struct wlines *out, const struct pdb_found *pdb, wlines_reader read);

/* Release what wlines_init allocated.  NULL is a no-op. */
void wlines_free(struct wlines *lines);

/* Release the source files read so far and their line indexes (a library's
 * sources can weigh more than the assembly); a later wlines_source reads a
 * file again.  For when every search in them is done. */
void wlines_forget_sources(struct wlines *lines);

/* Which sequence point wlines_point picks. */
enum wlines_which {
	WLINES_AT_OR_BEFORE, /* the last visible one at an offset <= il_offset */
	WLINES_AFTER,        /* the first visible one at an offset > il_offset */
};

/* The visible sequence point of MethodDef `methoddef` (1-based row; its
 * MethodDebugInformation row has the same number) chosen by `which` for IL
 * offset `il_offset` (bytes, in the input body) into *out.  Returns 1, or 0
 * when there is no PDB, no such point, or the PDB's data is malformed
 * (*out untouched), or -1 with LT_E_NOMEM. */
int wlines_point(const struct wlines *lines, uint32_t methoddef, uint32_t il_offset, enum wlines_which which,
		 struct pdb_seq_point *out);

/* "<path>:<line>" - or "<path>:<line>:<column>" when column is not 0 - into
 * buf[0..n) like snprintf, where path is Document row `doc`'s name past the
 * common folder of all documents ("Shop/Inventory.cs"), or its file name
 * when that folder does not hold it ("Polyfill.cs"), with '/' between
 * folders.  Returns 1, or 0 for a bad row or name blob (buf untouched). */
int wlines_format(const struct wlines *lines, uint32_t doc, uint32_t line, uint32_t column, char *buf, size_t n);

/* Document row `doc`'s name as the PDB holds it (the full path the compiler
 * was given) into buf[0..n) like snprintf.  Returns 1, or 0 without a PDB,
 * for a bad row or name blob (buf untouched). */
int wlines_path(const struct wlines *lines, uint32_t doc, char *buf, size_t n);

/* The text of the source file Document row `doc` names, as the compiler
 * read it: the file at that path (read with lines->read; none without it), used only when its hash is the Document's
 * Hash (SHA-1 or SHA-256, by HashAlgorithm; PortablePdb-Metadata.md
 * "Document Table").  Read when first asked for, then kept while the
 * sources held stay within lines->source_budget bytes (past it, the least
 * recently asked for is released, read and checked again when asked for
 * again).  Returns 1
 * with *text (borrowed: valid until another document is asked for) and
 * *len bytes, or 0 when there is none (a moved or edited file, a path
 * map, a hash LockTime does not compute), or -1 with LT_E_NOMEM. */
int wlines_source(const struct wlines *lines, uint32_t doc, const uint8_t **text, size_t *len);

/* The byte index in the text wlines_source gives for Document row `doc` where
 * its line `line` (1-based; "\r\n", "\r" and "\n" end a line, as the
 * compilers count them for sequence points) starts, into *at.  Returns 1, or
 * 0 when the text has no such line or wlines_source gives none. */
int wlines_line_start(const struct wlines *lines, uint32_t doc, uint32_t line, size_t *at);

/* The source lines MethodDef `methoddef`'s visible sequence points cover in
 * the document of its first one: *doc gets that Document row, *first and
 * *last the smallest StartLine and largest EndLine there.  Returns 1, or 0
 * when there is no PDB, no visible point, or malformed data, or -1 with
 * LT_E_NOMEM. */
int wlines_span(const struct wlines *lines, uint32_t methoddef, uint32_t *doc, uint32_t *first, uint32_t *last);

#endif
