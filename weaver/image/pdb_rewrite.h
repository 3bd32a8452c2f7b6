/* pdb_rewrite.h - bringing a portable PDB up to date with the method bodies
 * an edit replaced (PortablePdb-Metadata.md): IL offsets re-mapped, rows for
 * added methods, the #Pdb row counts and a content-derived PDB id. */
#ifndef PDB_REWRITE_H
#define PDB_REWRITE_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "lt_buf.h"
#include "md_image.h"

/* Custom debug information kinds with IL offsets (PortablePdb-Metadata.md;
 * the GUIDs as stored in #GUID, Data1-3 little-endian). */
extern const uint8_t pdb_kind_hoisted_scopes[16]; /* 6DA9A61E-F8C7-4874-BE62-68BC5630DF71 */
extern const uint8_t pdb_kind_async_stepping[16]; /* 54FD2AC5-E925-401A-9C2A-F94F171072F8 */

/* The offset map of MethodDef `row` (1-based) of img into *out: NULL when its
 * body is the input's (or the row is not an input method).  Returns 0, or -1
 * with LT_E_PDB when the body was replaced without a map (img_set_method_body
 * with bytes). */
int pdb_method_map(const struct img *img, uint32_t row, const struct pdb_map **out);

/* Update `pdb` (a portable PDB read with md_read whose id matched img's
 * CodeView entry; edited in place) for the edits of `img`, and write it to
 * `out` with its new PDB id:
 *  - every MethodDef of the input whose body img_encode_body replaced: its
 *    sequence points re-mapped (pdb_seq_remap) with the LocalSignature of
 *    the new body's header; its LocalScope rows' StartOffset and Length
 *    re-mapped (a scope from offset 0 still starts at 0; one to the end of
 *    the code still ends there); its State Machine Hoisted Local Scopes and
 *    Async Method Stepping Information (catch handler, yield offsets, and
 *    resume offsets in the resume method) re-mapped; other custom debug
 *    information kept;
 *  - MethodDebugInformation rows (Document 0, SequencePoints 0) for every
 *    MethodDef img added, so the table keeps one row per MethodDef;
 *  - the #Pdb type-system row counts set to img's tables (column widths
 *    follow: a MethodDef count past 2^11 widens HasCustomDebugInformation);
 *  - the PDB id: the SHA-256 of the written PDB with the id zeroed, bytes
 *    0-19 with the GUID's version and variant bits set (version 4, RFC 4122
 *    variant) and the stamp's top bit set, as a deterministic compiler does.
 * *id gets the id (GUID then stamp, as #Pdb holds it), *id_offset its byte
 * offset in out, and sha256 the hash it came from (the PDB's SHA256
 * PdbChecksum, which hashes the same bytes).  Returns 0, or -1 with LT_E_PDB when the PDB does not
 * describe img (more rows in a type-system table than img has, a
 * MethodDebugInformation table not one row per MethodDef) or a changed
 * method's debug data cannot be re-mapped (body set without an offset map,
 * malformed blobs, a scope that no longer holds an instruction, scopes out
 * of order), or LT_E_NOMEM, LT_E_LIMIT (md_write). */
int pdb_rewrite(struct md_image *pdb, const struct img *img, struct lt_buf *out, uint8_t id[20],
		size_t *id_offset, uint8_t sha256[32]);

/* The checksum of a portable PDB for a PdbChecksum debug entry (PE-COFF.md
 * "Portable PDB Checksum"): hash `alg` ("SHA256", "SHA384" or "SHA512") of
 * pdb[0..len) with the 20 id bytes at id_offset taken as zero.  *out_len
 * gets the hash size (32, 48, 64); out must hold 64 bytes.  Returns 0, or -1
 * with LT_E_PDB for another algorithm name or an id past the end. */
int pdb_checksum(const uint8_t *pdb, size_t len, size_t id_offset, const char *alg, uint8_t out[64],
		 size_t *out_len);

#endif
