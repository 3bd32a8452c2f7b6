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
#include "lt_file.h"
#include "pdb_find.h"

struct pdb_update {
	enum pdb_source source; /* what pdb_find found */
	int stale;              /* 1: symbols exist that were not updated; why says which and why */
	char why[400];
	char *path;             /* PDB_FILE: where the rewritten PDB goes (owned), else NULL */
	struct lt_buf data;     /* PDB_FILE: its bytes */
};

/* Bring the debug symbols of `img` up to date with its edits, before
 * img_write.  img was loaded from `in_path` and will be written to
 * `out_path` (the same path for an in-place weave).  Finds the symbols with
 * pdb_find (next to in_path) and:
 *  - a matching portable PDB file: rewritten with pdb_rewrite into
 *    out->data, to be written to out->path = out_path's folder + the PDB's
 *    file name (pdb_write_pair) - or, when that is the input's PDB file and
 *    out_path is not in_path (an output beside the input keeps the input's
 *    symbols), <output name>.pdb there, named in the CodeView entry's path;
 *  - a matching embedded PDB: rewritten, deflated (raw Deflate) and set as
 *    the new data of the Embedded Portable PDB entry ("MPDB", size, data);
 *  and then, through img_set_debug_data, the CodeView entry gets the new PDB
 *  id (GUID in its data, stamp as its TimeDateStamp when it is a portable
 *  entry, MinorVersion 0x504D) and every PdbChecksum entry whose algorithm
 *  is SHA256, SHA384 or SHA512 the checksum of the new PDB.
 * Symbols that cannot be updated - PDB_STALE, or a PDB whose rewrite fails
 * (malformed, not this assembly's) - leave img unchanged and set out->stale
 * and out->why for the caller's warning: debug symbols never fail a weave.
 * Returns 0 (release *out with pdb_update_free), or -1 with LT_E_NOMEM. */
int pdb_update(struct pdb_update *out, struct img *img, const char *in_path, const char *out_path);

/* Release what pdb_update allocated.  NULL is a no-op. */
void pdb_update_free(struct pdb_update *u);

/* Write the woven assembly, the pieces asm_parts[0..nparts) (img_layout's
 * out->parts), to asm_path and the PDB of u (if any) to u->path, so that the
 * two always match: both are staged (lt_file_stage_v) before either replaces
 * its file, and a failure until then leaves both untouched; the assembly is
 * renamed into place, then the PDB.  Should the PDB's rename fail, asm_path
 * gets back orig[0..orig_len) (the input, for an in-place weave) or, with
 * orig NULL, is removed.  Returns 0, or -1 with LT_E_IO (the error of the
 * step that failed) or LT_E_NOMEM. */
int pdb_write_pair(const struct pdb_update *u, const char *asm_path, const struct lt_iov *asm_parts,
		   size_t nparts, const uint8_t *orig, size_t orig_len);

#endif
