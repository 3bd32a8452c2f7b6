/* pdb_seq.c - Sequence Points blobs of portable PDBs: decode, re-map, encode (PortablePdb-Metadata.md). */
#include "pdb_seq.h"
#include "lt_cursor.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "sig.h"

#include <stdlib.h>
#include <string.h>

/* Limits of the spec's "Sequence Points Blob" section. */
#define SEQ_MAX_OFFSET 0x20000000u
#define SEQ_MAX_LINE 0x20000000u
#define SEQ_MAX_COLUMN 0x10000u

void pdb_seq_free(struct pdb_seq *s)
{
	if (!s)
		return;
	free(s->points);
	memset(s, 0, sizeof *s);
}

int pdb_seq_push(struct pdb_seq *s, const struct pdb_seq_point *p)
{
	if (lt_grow(&s->points, &s->cap, (size_t)s->n + 1, sizeof *s->points) < 0)
		return -1;
	s->points[s->n++] = *p;
	return 0;
}

/* A signed delta added to an unsigned value, kept below `limit`. */
static int add_delta(uint32_t base, int32_t delta, uint32_t limit, uint32_t *out)
{
	int64_t v = (int64_t)base + delta;

	if (v < 0 || v >= limit)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* The line and column fields of a visible point (spec: "sequence-point-record")
 * after its delta lines and delta columns: the start line and column,
 * absolute for the first visible point, else relative to *prev. */
static int read_visible(struct lt_cur *c, uint32_t dlines, int32_t dcol, const struct pdb_seq_point *prev,
			struct pdb_seq_point *p, uint32_t rec)
{
	uint32_t line, col;
	int32_t sline, scol;

	if (!prev) {
		if (sig_uint_decode(c, &line) < 0 || sig_uint_decode(c, &col) < 0)
			return -1;
	} else {
		if (sig_int_decode(c, &sline) < 0 || sig_int_decode(c, &scol) < 0)
			return -1;
		if (add_delta(prev->start_line, sline, SEQ_MAX_LINE, &line) < 0 ||
		    add_delta(prev->start_column, scol, SEQ_MAX_COLUMN, &col) < 0)
			return lt_error_set(LT_E_PDB, "sequence point record %u: start line or column out of range", rec);
	}
	p->start_line = line;
	p->start_column = col;
	if (line >= SEQ_MAX_LINE || line == PDB_HIDDEN_LINE || col >= SEQ_MAX_COLUMN ||
	    dlines >= SEQ_MAX_LINE - line || line + dlines == PDB_HIDDEN_LINE ||
	    add_delta(col, dcol, SEQ_MAX_COLUMN, &p->end_column) < 0)
		return lt_error_set(LT_E_PDB, "sequence point record %u: line %u+%u or column %u%+d out of range",
				    rec, line, dlines, col, dcol);
	/* One line: delta columns was unsigned and not 0, so the end is after the start. */
	p->end_line = line + dlines;
	return 0;
}

int pdb_seq_decode(const uint8_t *blob, uint32_t len, uint32_t document, struct pdb_seq *out)
{
	struct lt_cur c = lt_cur_init(blob, len, LT_E_PDB, "SequencePoints blob");
	struct pdb_seq_point prev_visible = { 0 };
	uint32_t doc = document, rec = 0;
	int have_visible = 0;

	memset(out, 0, sizeof *out);
	if (sig_uint_decode(&c, &out->local_signature) < 0 || (doc == 0 && sig_uint_decode(&c, &doc) < 0))
		goto fail;
	if (doc == 0) {
		lt_error_set(LT_E_PDB, "SequencePoints blob: document row 0");
		goto fail;
	}
	while (lt_cur_left(&c) > 0) {
		struct pdb_seq_point p = { .document = doc };
		uint32_t dil, dlines, ucol = 0;
		int32_t dcol = 0;

		if (sig_uint_decode(&c, &dil) < 0)
			goto fail;
		if (out->n > 0 && dil == 0) { /* document-record */
			if (sig_uint_decode(&c, &doc) < 0)
				goto fail;
			if (doc == 0) {
				lt_error_set(LT_E_PDB, "SequencePoints blob: document-record %u names row 0", rec);
				goto fail;
			}
			rec++;
			continue;
		}
		p.offset = out->n > 0 ? out->points[out->n - 1].offset + dil : dil;
		if (p.offset >= SEQ_MAX_OFFSET || (out->n > 0 && p.offset < dil)) {
			lt_error_set(LT_E_PDB, "sequence point record %u: IL offset past 0x%x", rec, SEQ_MAX_OFFSET);
			goto fail;
		}
		/* Delta columns: unsigned on one line (0 with 0 lines: hidden), else signed. */
		if (sig_uint_decode(&c, &dlines) < 0 ||
		    (dlines == 0 ? sig_uint_decode(&c, &ucol) : sig_int_decode(&c, &dcol)) < 0)
			goto fail;
		if (dlines == 0)
			dcol = (int32_t)ucol;
		if (dlines == 0 && ucol == 0) {
			p.hidden = 1;
			p.start_line = p.end_line = PDB_HIDDEN_LINE;
		} else if (read_visible(&c, dlines, dcol, have_visible ? &prev_visible : NULL, &p, rec) < 0) {
			goto fail;
		}
		if (pdb_seq_push(out, &p) < 0)
			goto fail;
		if (!p.hidden) {
			prev_visible = p;
			have_visible = 1;
		}
		rec++;
	}
	if (out->n == 0) {
		lt_error_set(LT_E_PDB, "SequencePoints blob: no sequence point");
		goto fail;
	}
	return 0;
fail:
	pdb_seq_free(out);
	return -1;
}

int pdb_seq_encode(const struct pdb_seq *s, uint32_t document, struct lt_buf *out)
{
	const struct pdb_seq_point *prev_visible = NULL;
	uint32_t doc, i;

	if (s->n == 0)
		return lt_error_set(LT_E_PDB, "SequencePoints blob: no sequence point to write");
	doc = document ? document : s->points[0].document;
	if (s->points[0].document != doc || doc == 0)
		return lt_error_set(LT_E_PDB, "SequencePoints blob: first point in document %u, method in %u",
				    s->points[0].document, doc);
	if (sig_uint_encode(out, s->local_signature) < 0 || (document == 0 && sig_uint_encode(out, doc) < 0))
		return -1;
	for (i = 0; i < s->n; i++) {
		const struct pdb_seq_point *p = &s->points[i];

		if (p->offset >= SEQ_MAX_OFFSET || (i > 0 && p->offset <= s->points[i - 1].offset))
			return lt_error_set(LT_E_PDB, "sequence point %u: IL offset 0x%x not after 0x%x", i, p->offset,
					    i > 0 ? s->points[i - 1].offset : 0);
		if (p->document != doc) {
			if (p->document == 0 || sig_uint_encode(out, 0) < 0 || sig_uint_encode(out, p->document) < 0)
				return p->document ? -1 : lt_error_set(LT_E_PDB, "sequence point %u: document row 0", i);
			doc = p->document;
		}
		if (sig_uint_encode(out, i > 0 ? p->offset - s->points[i - 1].offset : p->offset) < 0)
			return -1;
		if (p->hidden) {
			if (sig_uint_encode(out, 0) < 0 || sig_uint_encode(out, 0) < 0)
				return -1;
			continue;
		}
		if (p->end_line < p->start_line || (p->end_line == p->start_line && p->end_column <= p->start_column))
			return lt_error_set(LT_E_PDB, "sequence point %u: end %u:%u not after start %u:%u", i, p->end_line,
					    p->end_column, p->start_line, p->start_column);
		if (sig_uint_encode(out, p->end_line - p->start_line) < 0)
			return -1;
		if (p->end_line == p->start_line ? sig_uint_encode(out, p->end_column - p->start_column) < 0
						 : sig_int_encode(out, (int32_t)p->end_column - (int32_t)p->start_column) < 0)
			return -1;
		if (!prev_visible ? sig_uint_encode(out, p->start_line) < 0 || sig_uint_encode(out, p->start_column) < 0
				  : sig_int_encode(out, (int32_t)(p->start_line - prev_visible->start_line)) < 0 ||
				    sig_int_encode(out, (int32_t)p->start_column - (int32_t)prev_visible->start_column) < 0)
			return -1;
		prev_visible = p;
	}
	return 0;
}

/* The hidden point for code inserted before the first instruction (see
 * pdb_seq_remap), if m has such code: 1 with *out set, else 0. */
static int prologue_point(const struct pdb_map *m, struct pdb_seq_point *out)
{
	if (m->n == 0 || m->old_off[0] != IL_NO_OFFSET)
		return 0;
	*out = (struct pdb_seq_point){ .offset = m->new_off[0], .hidden = 1,
				       .start_line = PDB_HIDDEN_LINE, .end_line = PDB_HIDDEN_LINE };
	return 1;
}

int pdb_seq_remap(struct pdb_seq *s, const struct pdb_map *m)
{
	struct pdb_seq mapped = { 0 };
	struct pdb_seq_point prologue;
	int rc = -1;

	mapped.local_signature = s->local_signature;
	if (prologue_point(m, &prologue) && s->n > 0) {
		prologue.document = s->points[0].document;
		if (pdb_seq_push(&mapped, &prologue) < 0)
			goto done;
	}
	for (uint32_t i = 0; i < s->n; i++) {
		struct pdb_seq_point p = s->points[i];

		if (pdb_map_offset(m, p.offset, &p.offset) < 0) {
			lt_error_prefix("sequence point %u: ", i);
			goto done;
		}
		if (p.offset >= m->new_size)
			continue; /* its instruction, the last one, was removed */
		if (mapped.n > 0 && mapped.points[mapped.n - 1].offset >= p.offset) {
			if (mapped.points[mapped.n - 1].offset > p.offset) {
				lt_error_set(LT_E_PDB, "sequence point %u: IL offset 0x%x now before the point before it "
					     "(instructions moved)", i, p.offset);
				goto done;
			}
			mapped.n--; /* the instruction of the earlier one was removed */
		}
		if (pdb_seq_push(&mapped, &p) < 0)
			goto done;
	}
	pdb_seq_free(s);
	*s = mapped;
	mapped.points = NULL;
	rc = 0;
done:
	pdb_seq_free(&mapped);
	return rc;
}
