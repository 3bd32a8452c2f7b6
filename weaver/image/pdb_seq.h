/* pdb_seq.h - the Sequence Points blob of a portable PDB's MethodDebugInformation
 * row (PortablePdb-Metadata.md "Sequence Points Blob"): decode, re-map to a
 * rewritten body's IL offsets, encode. */
#ifndef PDB_SEQ_H
#define PDB_SEQ_H

#include <stdint.h>

#include "lt_buf.h"
#include "pdb_map.h"

/* Lines and columns of a hidden sequence point (PortablePdb-Metadata.md). */
#define PDB_HIDDEN_LINE 0xFEEFEEu

struct pdb_seq_point {
	uint32_t offset;      /* IL offset, bytes */
	uint32_t document;    /* Document row (1-based) */
	uint32_t start_line, end_line;
	uint32_t start_column, end_column;
	int hidden;           /* 1: lines and columns are not used */
};

struct pdb_seq {
	uint32_t local_signature; /* StandAloneSig row of the method's locals, 0 for none */
	struct pdb_seq_point *points; /* owned, IL offsets strictly increasing */
	uint32_t n;
	size_t cap;
};

/* Decode blob[0..len).  `document` is the MethodDebugInformation row's
 * Document (0: the blob starts with an InitialDocument).  Checks the rules of
 * the spec: a record after the first with delta IL 0 is a document-record;
 * offsets below 0x20000000 and strictly increasing; lines below 0x20000000
 * and not 0xFEEFEE, columns below 0x10000, EndLine >= StartLine and, on one
 * line, EndColumn > StartColumn; the first record a sequence point; a
 * document row not 0.  Returns 0 (free *out with pdb_seq_free), or -1 with
 * LT_E_PDB naming the record and what is wrong (LT_E_NOMEM). */
int pdb_seq_decode(const uint8_t *blob, uint32_t len, uint32_t document, struct pdb_seq *out);

/* Encode s as a Sequence Points blob appended to out.  `document` is the
 * MethodDebugInformation row's Document: when not 0 no InitialDocument is
 * written; a document-record is written wherever a point's document differs
 * from the one before.  Deltas in the shortest compressed form (II.23.2), so
 * a blob decoded from a compiler's output encodes to the same bytes.
 * Returns 0, or -1 with LT_E_PDB (no points, offsets not strictly
 * increasing, a value out of range) or LT_E_NOMEM. */
int pdb_seq_encode(const struct pdb_seq *s, uint32_t document, struct lt_buf *out);

/* Re-map s to the new body described by m: every point moves to the new
 * offset of its instruction (pdb_map_offset); two points that land on one
 * offset (an instruction removed) keep the later one, and a point whose
 * instruction was the last and was removed is dropped.  Code inserted
 * before the first instruction - which no statement precedes - gets a
 * hidden sequence point at offset 0, so the debugger steps over it and no
 * line claims it.  Code inserted after a kept instruction stays in the span
 * of the point before it: inside a statement it is part of that statement
 * (arguments pushed for a call), after one it continues it (a `ret`
 * rewritten as a store and a `leave` to an epilogue stays in its return
 * statement, and so does the epilogue).  Stack traces name the same line
 * for such code as a hidden point would give it: they skip hidden points.
 * Returns 0, or -1 with LT_E_PDB (an offset past the input code, points no
 * longer in order because instructions were moved) or LT_E_NOMEM; s is
 * unchanged on failure. */
int pdb_seq_remap(struct pdb_seq *s, const struct pdb_map *m);

/* Append a copy of *p to s's points (growing them).  Returns 0, or -1 with
 * LT_E_NOMEM. */
int pdb_seq_push(struct pdb_seq *s, const struct pdb_seq_point *p);

/* Release what s owns; s is empty afterwards.  NULL is a no-op. */
void pdb_seq_free(struct pdb_seq *s);

#endif
