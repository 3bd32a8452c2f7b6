/* pdb_update.h - keeping an edited assembly's debug symbols right: its
 * portable PDB (a file next to it, or embedded) rewritten for the new
 * bodies, and the debug directory (CodeView, PdbChecksum, Embedded Portable
 * PDB entries) made to match it (PE-COFF.md "Debug Directory"). */
#ifndef PDB_UPDATE_H
#define PDB_UPDATE_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "lt_buf.h"
#include "pdb_find.h"

struct pdb_update {
	enum pdb_source source; /* what was found */
	int stale;              /* 1: symbols exist that were not updated; why says which and why */
	int disowned;           /* 1: the symbols were not rewritten and the CodeView entry got a new
				 * PDB id, so that no PDB written before the weave matches it */
	char why[400];
	char *path;             /* PDB_FILE, PDB_MDB: where the rewritten symbols go (owned; set by
				 * the caller, weave_pdb_update), else NULL */
	struct lt_buf data;     /* PDB_FILE, PDB_MDB: their bytes */
};

/* Bring the debug symbols of `img` up to date with its edits, before
 * img_layout: `f` is what was found for it (pdb_find_embedded, and a file
 * through pdb_found_file), its metadata edited here.  out starts zeroed
 * but for out->path.
 *  - a matching portable PDB file: rewritten with pdb_rewrite into
 *    out->data, for the caller to write to out->path;
 *  - a matching embedded PDB: rewritten, deflated (raw Deflate) and set as
 *    the new data of the Embedded Portable PDB entry ("MPDB", size, data);
 *  - a matching Mono .mdb (PDB_MDB): rewritten by mdb_update into out->data,
 *    with img's new Mvid as its GUID; no debug entry names it;
 *  and for a PDB then, through img_set_debug_data, the CodeView entry gets the new PDB
 *  id (GUID in its data, stamp as its TimeDateStamp when it is a portable
 *  entry, MinorVersion 0x504D), with `cv_name` (NULL: kept) as the file name
 *  in its path, and every PdbChecksum entry whose algorithm is SHA256,
 *  SHA384 or SHA512 the checksum of the new PDB.
 * Symbols that cannot be updated - PDB_STALE, or a PDB whose rewrite fails
 * (malformed, not this assembly's) - release out->path and set out->stale
 * and out->why for the caller's warning: debug symbols never fail a weave.
 * Then, and when none were found (PDB_NONE), a CodeView entry gets the new
 * Mvid as its GUID and PdbChecksum entries zeros (out->disowned), so that
 * a PDB that matched the input - elsewhere, or put back later - does not
 * match the woven assembly with lines for the input's IL.  An Embedded
 * Portable PDB entry that is not rewritten is kept.  Never opens a file.
 * Returns 0 (release *out with pdb_update_free), or -1 with LT_E_NOMEM. */
int pdb_update(struct pdb_update *out, struct img *img, struct pdb_found *f, const char *cv_name);

/* Mark u stale for a reason the caller found (msg): why names f's file
 * ("embedded PDB" for an embedded one) and msg. */
void pdb_update_stale(struct pdb_update *u, const struct pdb_found *f, const char *msg);

/* Release what pdb_update allocated.  NULL is a no-op. */
void pdb_update_free(struct pdb_update *u);

#endif
