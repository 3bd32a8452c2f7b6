/* pdb_find.h - the portable PDB of an assembly, from bytes: embedded in its
 * debug directory, or the bytes of a file the caller read (PE-COFF.md "Debug
 * Directory", PortablePdb-Metadata.md), and telling a matching PDB from a
 * stale one.  Which files to read is the caller's (weave_inputs.h). */
#ifndef PDB_FIND_H
#define PDB_FIND_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "lt_error.h"
#include "md_image.h"

/* CodeView entry data (PE-COFF.md): "RSDS", GUID, Age, UTF-8 path. */
#define PDB_CV_SIGNATURE 0x53445352u   /* "RSDS" */
#define PDB_CV_PORTABLE_MINOR 0x504Du  /* MinorVersion of a portable PDB's CodeView entry */
#define PDB_CV_HEADER 24               /* bytes before the path */
/* Embedded Portable PDB entry data: "MPDB", UncompressedSize, Deflate data. */
#define PDB_EMBEDDED_SIGNATURE 0x4244504Du
#define PDB_ID_SIZE 20                 /* #Pdb PDB id: GUID then stamp */

enum pdb_source {
	PDB_NONE,     /* no debug symbols to update (none named, none found) */
	PDB_FILE,     /* a matching portable PDB file: data, md, path */
	PDB_EMBEDDED, /* a matching Embedded Portable PDB entry: data, md */
	PDB_STALE,    /* symbols found that cannot be updated: why (and path for a file) */
	PDB_MDB       /* a matching Mono .mdb file (mdb.h): data, mdb, path */
};

struct mdb_file;

struct pdb_found {
	enum pdb_source source;
	uint8_t *data;      /* the PDB's bytes, inflated when embedded (owned; md borrows them) */
	size_t size;
	struct md_image md; /* PDB_FILE, PDB_EMBEDDED: the PDB's metadata */
	struct mdb_file *mdb; /* PDB_MDB: the parsed .mdb (owned; borrows data) */
	char *path;         /* the file read (PDB_FILE, PDB_MDB; PDB_STALE when a file is stale), owned */
	int codeview;       /* index in pe.debug of the RSDS CodeView entry, -1 when none */
	int embedded;       /* index in pe.debug of the Embedded Portable PDB entry, -1 when none */
	char why[300];      /* PDB_STALE: what was found and why it cannot be used */
	uint8_t id[PDB_ID_SIZE]; /* codeview >= 0: the PDB id it names (GUID, stamp) */
	int portable;       /* codeview >= 0: its MinorVersion says portable (the stamp counts) */
	const char *cv_name; /* codeview >= 0: the last part of the path it names (after either
			      * separator; "" for an empty path), borrowed from img; else NULL */
};

/* Start looking for the debug symbols of `img`: out->codeview and
 * out->embedded get the indexes of its RSDS CodeView and Embedded Portable
 * PDB entries (-1 when none), and out->cv_name the file name the CodeView
 * entry names.  An Embedded Portable PDB entry
 * (type 17) is inflated (raw Deflate, its UncompressedSize exactly, at most
 * 1 GiB and 1032 times the Deflate data) and judged: PDB_EMBEDDED when it is
 * portable metadata with a #Pdb stream whose id matches the CodeView entry
 * (GUID, and its TimeDateStamp as the stamp when MinorVersion is 0x504D),
 * else PDB_STALE; without one out->source is PDB_NONE and the caller may
 * give a file's bytes to pdb_found_file.  Debug symbols never fail a weave:
 * the only error is running out of memory.  Returns 0 (release *out with
 * pdb_found_free), or -1 with LT_E_NOMEM (*out is then released). */
int pdb_find_embedded(struct pdb_found *out, const struct img *img);

/* Judge the bytes data[0..size) of the file `path` (both taken, owned by f
 * afterwards) as f's assembly's PDB, after pdb_find_embedded found no
 * embedded one and a CodeView entry: PDB_FILE with f->md when it matches as
 * above, else PDB_STALE with the reason in f->why (a Windows PDB, a PDB of
 * another build, malformed metadata).  Returns 0, or -1 with LT_E_NOMEM
 * (f keeps what it took: release it with pdb_found_free). */
int pdb_found_file(struct pdb_found *f, uint8_t *data, size_t size, char *path);

/* Judge the bytes data[0..size) of the file `path` (both taken, owned by f
 * afterwards) as the Mono symbols of img (<assembly>.mdb): PDB_MDB with
 * f->mdb when mdb_read parses it and its GUID is img's Mvid
 * (mdb_module_guid; Mono's run time compares the two), else PDB_STALE with
 * f->why naming the file and the reason (a malformed file: mdb_read's
 * message; another build's).  Returns 0, or -1 with LT_E_NOMEM (f keeps what
 * it took: release it with pdb_found_free). */
int pdb_found_mdb(struct pdb_found *f, uint8_t *data, size_t size, char *path, const struct img *img);

/* Mark f PDB_STALE, its data released: f->why formatted like printf, f->path
 * set to `path` (taken; may be NULL).  Returns 0. */
int pdb_found_stale(struct pdb_found *f, char *path, const char *fmt, ...) LT_PRINTF(3, 4);

/* Release what pdb_find_embedded and pdb_found_file read; *f is PDB_NONE afterwards.  NULL is a no-op. */
void pdb_found_free(struct pdb_found *f);

/* Release f's bytes and what was read of them (f->data, f->md, f->mdb: a
 * PDB can weigh as much as its assembly), keeping what f says of them
 * (source, path, why, the debug entries' indexes, id, cv_name): for when
 * they have been rewritten (pdb_update), or found stale. */
void pdb_found_release_data(struct pdb_found *f);

/* The data of debug entry `index` of img: a cursor over [PointerToRawData,
 * +SizeOfData) (pe_parse checked it lies in the file).  Returns 0, or -1 with
 * LT_E_PDB. */
int pdb_entry_data(const struct img *img, uint32_t index, struct lt_cur *out);

#endif
