/* pdb_find.h - finding the portable PDB of an assembly: embedded in its debug
 * directory, or a file next to it (PE-COFF.md "Debug Directory",
 * PortablePdb-Metadata.md), and telling a matching PDB from a stale one. */
#ifndef PDB_FIND_H
#define PDB_FIND_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
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
	PDB_STALE     /* symbols found that cannot be updated: why (and path for a file) */
};

struct pdb_found {
	enum pdb_source source;
	uint8_t *data;      /* the PDB's bytes, inflated when embedded (owned; md borrows them) */
	size_t size;
	struct md_image md; /* PDB_FILE, PDB_EMBEDDED: the PDB's metadata */
	char *path;         /* the file read (PDB_FILE; PDB_STALE when a file is stale), owned */
	int codeview;       /* index in pe.debug of the RSDS CodeView entry, -1 when none */
	int embedded;       /* index in pe.debug of the Embedded Portable PDB entry, -1 when none */
	char why[300];      /* PDB_STALE: what was found and why it cannot be used */
};

/* Find the debug symbols of `img`, read from `assembly_path` (NULL: look
 * only for an embedded PDB).  In order:
 *  - an Embedded Portable PDB entry (type 17): inflated (raw Deflate, its
 *    UncompressedSize exactly, at most 1 GiB and 1032 times the Deflate
 *    data) - PDB_EMBEDDED, or PDB_STALE when malformed;
 *  - with a CodeView entry, the file named by its path's last part (either
 *    separator) in the assembly's folder, else <assembly name without
 *    .dll/.exe>.pdb there: PDB_FILE when it is portable metadata with a #Pdb
 *    stream whose id matches (GUID, and the entry's TimeDateStamp as the
 *    stamp when MinorVersion is 0x504D), else PDB_STALE (a Windows PDB, a
 *    PDB of another build, malformed metadata);
 *  - without a CodeView entry, <name>.pdb there: PDB_STALE (nothing names it);
 *  - <assembly path>.mdb (Mono's symbols): PDB_STALE.
 * Nothing found is PDB_NONE.  Debug symbols never fail a weave: the only
 * error is running out of memory.  Returns 0 (release *out with
 * pdb_found_free), or -1 with LT_E_NOMEM (*out is then released). */
int pdb_find(struct pdb_found *out, const struct img *img, const char *assembly_path);

/* Release what pdb_find read; *f is PDB_NONE afterwards.  NULL is a no-op. */
void pdb_found_free(struct pdb_found *f);

/* The data of debug entry `index` of img: a cursor over [PointerToRawData,
 * +SizeOfData) (pe_parse checked it lies in the file).  Returns 0, or -1 with
 * LT_E_PDB. */
int pdb_entry_data(const struct img *img, uint32_t index, struct lt_cur *out);

/* The folder part of `path` (through its last '/') followed by `name`, in a
 * new string (free()).  NULL when memory runs out (LT_E_NOMEM recorded). */
char *pdb_path_beside(const char *path, const char *name, size_t name_len);

/* The file name of an assembly's symbols: for ext ".pdb", the assembly's
 * file name without a .dll or .exe extension, then ".pdb" ("A.dll" ->
 * "A.pdb"); for any other ext (".mdb") the whole file name then ext
 * ("A.exe.mdb").  A new string (free()), or NULL with LT_E_NOMEM. */
char *pdb_symbols_name(const char *assembly_path, const char *ext);

#endif
