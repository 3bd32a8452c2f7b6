/* weave_inputs.h - the files around a weave, at its edge: the reference
 * assemblies read once, the portable PDB found beside an assembly, where the
 * rewritten PDB goes, and the woven pair written.  The passes in between
 * (weave_image, pdb_update) take bytes and never open a file. */
#ifndef WEAVE_INPUTS_H
#define WEAVE_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "lt_file.h"
#include "pdb_find.h"
#include "pdb_update.h"
#include "weave_opts.h"

/* The reference assemblies paths[0..n), each read once (lt_file_read) into
 * *out (an array of n, release with weave_refs_free).  A file that cannot be
 * read is kept with its error, raised only when a weave needs the reference
 * (as the reference's parse errors are).  Returns 0, or -1 with LT_E_NOMEM. */
int weave_refs_read(struct weave_ref **out, const char *const *paths, size_t n);

/* Release what weave_refs_read made (n entries).  NULL is a no-op. */
void weave_refs_free(struct weave_ref *refs, size_t n);

/* The strong-name key pair of the .snk file at `path` (lt_file_read,
 * lt_rsa_from_snk) into *out (release with lt_rsa_free).  Returns 0, or -1
 * with LT_E_IO, LT_E_LIMIT, LT_E_KEY or LT_E_NOMEM. */
int weave_key_read(const char *path, struct lt_rsa_key **out);

/* The strong-name key pair to sign with, chosen as the C# compiler chooses
 * between -keycontainer and -keyfile: the key container `container` when
 * it exists (lt_keys_container_read, lt_rsa_from_snk), else the .snk file
 * at `file` (weave_key_read); either may be NULL, and with both NULL *out
 * is NULL.  *from is the container's name or the file's path, whichever was
 * used (or tried last): what an error names.  Returns 0 (release *out with
 * lt_rsa_free), or -1 with LT_E_KEY_CONTAINER (no such container, and no
 * file), LT_E_KEY, LT_E_IO, LT_E_LIMIT or LT_E_NOMEM. */
int weave_key_find(const char *file, const char *container, struct lt_rsa_key **out, const char **from);

/* The debug symbols of `img`, read from `assembly_path` (NULL: look only for
 * an embedded PDB), found once per weave.  In order:
 *  - an Embedded Portable PDB entry (pdb_find_embedded);
 *  - with a CodeView entry, the file named by its path's last part in the
 *    assembly's folder, else <assembly name without .dll/.exe>.pdb there,
 *    judged by pdb_found_file (PDB_FILE when it matches, else PDB_STALE);
 *  - without a CodeView entry, <name>.pdb there: PDB_STALE (nothing names it);
 *  - <assembly path>.mdb (Mono's symbols), judged by pdb_found_mdb (PDB_MDB
 *    when its GUID is the module's Mvid, else PDB_STALE).
 * Nothing found is PDB_NONE.  Debug symbols never fail a weave: the only
 * error is running out of memory.  Returns 0 (release *out with
 * pdb_found_free), or -1 with LT_E_NOMEM (*out is then released). */
int weave_pdb_find(struct pdb_found *out, const struct img *img, const char *assembly_path);

/* pdb_update for an assembly loaded from `in_path` and written to `out_path`
 * (the same path for an in-place weave), with `f` from weave_pdb_find: a
 * PDB file's rewrite goes to out_path's folder with the input PDB's file
 * name (u->path) - or, when that is the input's PDB file and out_path is not
 * in_path (an output beside the input keeps the input's symbols),
 * <output name>.pdb there, named in the CodeView entry's path; when that
 * too would replace the input's PDB, the symbols are stale.  A .mdb's
 * rewrite goes to <out_path>.mdb, where Mono looks for it.  Returns 0
 * (release *u with pdb_update_free), or -1 with LT_E_NOMEM. */
int weave_pdb_update(struct pdb_update *u, struct img *img, struct pdb_found *f, const char *in_path,
		     const char *out_path);

/* Write the woven assembly, the pieces asm_parts[0..nparts) (img_layout's
 * out->parts), to asm_path and the PDB of u (if any) to u->path, so that the
 * two always match: both are staged (lt_file_stage_v) before either replaces
 * its file, and a failure until then leaves both untouched; the assembly is
 * renamed into place, then the PDB.  Should the PDB's rename fail, asm_path
 * gets back orig[0..orig_len) (the input, for an in-place weave) or, with
 * orig NULL, is removed.  Returns 0, or -1 with LT_E_IO (the error of the
 * step that failed) or LT_E_NOMEM. */
int weave_write_pair(const struct pdb_update *u, const char *asm_path, const struct lt_iov *asm_parts,
		     size_t nparts, const uint8_t *orig, size_t orig_len);

/* Remove what a run killed while writing the symbols beside `out` left
 * (<name without .dll/.exe>.pdb.locktime-XXXXXX, <out>.mdb.locktime-XXXXXX;
 * lt_file_clean_temps): they are written under out's lock, which the caller
 * holds.  `woven`, the assembly at out as loaded (NULL: none), keeps the one
 * temporary that is its portable PDB: a run killed between the renames of
 * the pair (weave_write_pair) left the woven assembly beside the input's PDB,
 * and its own PDB staged; that PDB is put in place, and a later run, which
 * finds the assembly already woven, leaves a matching pair. */
void weave_clean_pdb_temps(const char *out, const struct img *woven);

#endif
