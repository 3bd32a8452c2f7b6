/* mdb_lnt.c - the line number tables of a Mono .mdb: the state machine decoded and encoded (see mdb.h). */
#include "mdb.h"
#include "lt_cursor.h"
#include "lt_error.h"

#include <stdlib.h>
#include <string.h>

/* The line table's opcodes (MonoSymbolTable.cs LineNumberTable, after DWARF 2's). */
enum {
	MDB_LNS_COPY = 1,
	MDB_LNS_ADVANCE_PC = 2,
	MDB_LNS_ADVANCE_LINE = 3,
	MDB_LNS_SET_FILE = 4,
	MDB_LNS_CONST_ADD_PC = 8,
	MDB_LNE_END_SEQUENCE = 1,
	MDB_LNE_NEGATE_IS_HIDDEN = 0x40,
	MDB_LNE_EXTENSIONS_END = 0x7f,
};

#define MDB_LIMIT 0x20000000u  /* offsets and lines stay below, as in a portable PDB */
#define MDB_NO_END 0xFFFFFFu   /* end-line delta of an entry without an end */
#define MDB_COLUMN_LIMIT 0x10000u

int mdb_leb128(struct lt_cur *c, uint32_t *out)
{
	uint32_t v = 0;
	uint8_t b;

	/* BinaryWriter.Write7BitEncodedInt: 7 bits a byte, low first; the
	 * fifth byte holds the top 4 bits of 32. */
	for (unsigned shift = 0; shift < 35; shift += 7) {
		if (lt_cur_u8(c, &b) < 0)
			return -1;
		if (shift == 28 && (b & 0xf0))
			return lt_error_set(c->code, "%s: 7-bit encoded value past 32 bits at byte %zu", c->what, c->pos - 1);
		v |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1; /* not reached: the fifth byte has no continuation bit */
}

/* (255 - OpcodeBase) / LineRange: the offset step of DW_LNS_const_add_pc
 * and one more than the largest a special opcode takes.  mdb_read checked
 * LineRange is not 0 and the step is at least 1. */
static uint32_t max_address_step(const struct mdb_file *f)
{
	return (255 - f->opcode_base) / f->line_range;
}

/* Append the state (offset, line, file, hidden) as an entry of out.
 * Returns 0, or -1 with LT_E_PDB (out of range, offsets decreasing) or
 * LT_E_NOMEM. */
static int add_entry(const struct mdb_file *f, struct pdb_seq *out, int64_t offset, int64_t line, uint32_t file,
		     int hidden, size_t at)
{
	struct pdb_seq_point p = { 0 };

	if (offset < 0 || offset >= MDB_LIMIT || line < 0 || line >= MDB_LIMIT)
		return lt_error_set(LT_E_PDB, "line table: IL offset %lld or line %lld out of range at byte %zu",
				    (long long)offset, (long long)line, at);
	if (file == 0 || file > f->nsources)
		return lt_error_set(LT_E_PDB, "line table: source file %u not in the source table (%u) at byte %zu",
				    file, f->nsources, at);
	if (out->n > 0 && out->points[out->n - 1].offset > offset)
		return lt_error_set(LT_E_PDB, "line table: IL offset 0x%llx before the entry before it at byte %zu",
				    (unsigned long long)offset, at);
	p.offset = (uint32_t)offset;
	p.document = file;
	p.start_line = p.end_line = (uint32_t)line;
	p.end_column = MDB_NO_END_COLUMN;
	p.hidden = hidden;
	return pdb_seq_push(out, &p);
}

/* The state machine up to DW_LNE_end_sequence (see mdb_lnt_decode). */
static int decode_entries(const struct mdb_file *f, struct lt_cur *c, struct pdb_seq *out)
{
	int64_t offset = 0, line = 1;
	uint32_t file = 1, v;
	int hidden = 0, modified = 0;
	uint8_t op, size;
	size_t end;

	for (;;) {
		if (lt_cur_u8(c, &op) < 0)
			return -1;
		if (op == 0) {
			if (lt_cur_u8(c, &size) < 0)
				return -1;
			end = c->pos + size;
			if (lt_cur_u8(c, &op) < 0)
				return -1;
			if (op == MDB_LNE_END_SEQUENCE)
				return modified ? add_entry(f, out, offset, line, file, hidden, c->pos) : 0;
			if (op == MDB_LNE_NEGATE_IS_HIDDEN) {
				hidden = !hidden;
				modified = 1;
			} else if (op < MDB_LNE_NEGATE_IS_HIDDEN || op > MDB_LNE_EXTENSIONS_END) {
				return lt_error_set(LT_E_PDB, "line table: unknown extended opcode 0x%02x at byte %zu", op,
						    c->pos - 1);
			}
			/* As Mono reads it: on from the byte after the size byte plus size. */
			if (lt_cur_seek(c, end) < 0)
				return -1;
			continue;
		}
		if (op >= f->opcode_base) {
			op = (uint8_t)(op - f->opcode_base);
			offset += op / f->line_range;
			line += f->line_base + (int32_t)(op % f->line_range);
			if (add_entry(f, out, offset, line, file, hidden, c->pos - 1) < 0)
				return -1;
			modified = 0;
			continue;
		}
		switch (op) {
		case MDB_LNS_COPY:
			if (add_entry(f, out, offset, line, file, hidden, c->pos - 1) < 0)
				return -1;
			modified = 0;
			continue;
		case MDB_LNS_ADVANCE_PC:
		case MDB_LNS_ADVANCE_LINE:
		case MDB_LNS_SET_FILE:
			if (mdb_leb128(c, &v) < 0)
				return -1;
			if (op == MDB_LNS_ADVANCE_PC)
				offset += (int32_t)v;
			else if (op == MDB_LNS_ADVANCE_LINE)
				line += (int32_t)v;
			else
				file = v;
			break;
		case MDB_LNS_CONST_ADD_PC:
			offset += max_address_step(f);
			break;
		default:
			return lt_error_set(LT_E_PDB, "line table: unknown standard opcode 0x%02x at byte %zu", op, c->pos - 1);
		}
		/* Bounded here too, so that no run of steps overflows. */
		if (offset < 0 || offset >= MDB_LIMIT || line < 0 || line >= MDB_LIMIT)
			return lt_error_set(LT_E_PDB, "line table: IL offset %lld or line %lld out of range at byte %zu",
					    (long long)offset, (long long)line, c->pos - 1);
		modified = 1;
	}
}

/* One column (or end column) value below MDB_COLUMN_LIMIT into *out. */
static int read_column(struct lt_cur *c, uint32_t *out)
{
	if (mdb_leb128(c, out) < 0)
		return -1;
	if (*out >= MDB_COLUMN_LIMIT)
		return lt_error_set(LT_E_PDB, "line table: column %u out of range at byte %zu", *out, c->pos - 1);
	return 0;
}

/* The columns and end lines after the entries (see mdb_lnt_decode). */
static int decode_columns(struct lt_cur *c, uint32_t flags, struct pdb_seq *out)
{
	uint32_t v;

	for (uint32_t i = 0; (flags & MDB_COLUMNS) && i < out->n; i++)
		if (read_column(c, &out->points[i].start_column) < 0)
			return -1;
	for (uint32_t i = 0; (flags & MDB_ENDS) && i < out->n; i++) {
		struct pdb_seq_point *p = &out->points[i];
		if (mdb_leb128(c, &v) < 0)
			return -1;
		if (v == MDB_NO_END)
			continue;
		if (v >= MDB_LIMIT - p->start_line)
			return lt_error_set(LT_E_PDB, "line table: end line %u lines past line %u out of range at byte %zu", v,
					    p->start_line, c->pos - 1);
		p->end_line = p->start_line + v;
		if (read_column(c, &p->end_column) < 0)
			return -1;
	}
	return 0;
}

int mdb_lnt_decode(const struct mdb_file *f, uint32_t offset, uint32_t flags, struct pdb_seq *out)
{
	struct lt_cur c = lt_cur_init(f->data, f->size, LT_E_PDB, "line table");

	memset(out, 0, sizeof *out);
	if (lt_cur_seek(&c, offset) < 0 || decode_entries(f, &c, out) < 0 || decode_columns(&c, flags, out) < 0) {
		pdb_seq_free(out);
		return -1;
	}
	return 0;
}

static int put_leb(struct lt_buf *b, uint32_t v)
{
	while (v >= 0x80) {
		if (lt_buf_u8(b, (uint8_t)(v | 0x80)) < 0)
			return -1;
		v >>= 7;
	}
	return lt_buf_u8(b, (uint8_t)v);
}

/* One entry's opcodes after the entry before (*last_*). */
static int encode_entry(const struct mdb_file *f, const struct pdb_seq_point *p, uint32_t *last_offset,
			uint32_t *last_line, uint32_t *last_file, int *last_hidden, struct lt_buf *out)
{
	const uint32_t max = max_address_step(f);
	int64_t line_step = (int64_t)p->start_line - *last_line;
	uint32_t step;

	if (p->offset < *last_offset)
		return lt_error_set(LT_E_PDB, "line table: IL offset 0x%x before the entry before it", p->offset);
	if (p->document == 0 || p->document > f->nsources)
		return lt_error_set(LT_E_PDB, "line table: source file %u not in the source table", p->document);
	step = p->offset - *last_offset;
	if (p->document != *last_file && (lt_buf_u8(out, MDB_LNS_SET_FILE) < 0 || put_leb(out, p->document) < 0))
		return -1;
	if (!p->hidden != !*last_hidden &&
	    (lt_buf_u8(out, 0) < 0 || lt_buf_u8(out, 1) < 0 || lt_buf_u8(out, MDB_LNE_NEGATE_IS_HIDDEN) < 0))
		return -1;
	if (step >= max) {
		if (step < 2 * max) {
			if (lt_buf_u8(out, MDB_LNS_CONST_ADD_PC) < 0)
				return -1;
			step -= max;
		} else {
			if (lt_buf_u8(out, MDB_LNS_ADVANCE_PC) < 0 || put_leb(out, step) < 0)
				return -1;
			step = 0;
		}
	}
	if (line_step < f->line_base || line_step >= f->line_base + (int64_t)f->line_range) {
		if (lt_buf_u8(out, MDB_LNS_ADVANCE_LINE) < 0 || put_leb(out, (uint32_t)(int32_t)line_step) < 0 ||
		    (step && (lt_buf_u8(out, MDB_LNS_ADVANCE_PC) < 0 || put_leb(out, step) < 0)) ||
		    lt_buf_u8(out, MDB_LNS_COPY) < 0)
			return -1;
	} else if (lt_buf_u8(out, (uint8_t)(line_step - f->line_base + f->line_range * step + f->opcode_base)) < 0) {
		/* step < max here: the opcode is at most LineRange * max - 1 + OpcodeBase <= 254. */
		return -1;
	}
	*last_offset = p->offset;
	*last_line = p->start_line;
	*last_file = p->document;
	*last_hidden = p->hidden;
	return 0;
}

int mdb_lnt_encode(const struct mdb_file *f, const struct pdb_seq *s, uint32_t flags, struct lt_buf *out)
{
	uint32_t last_offset = 0, last_line = 1, last_file = 1;
	int last_hidden = 0;

	for (uint32_t i = 0; i < s->n; i++)
		if (encode_entry(f, &s->points[i], &last_offset, &last_line, &last_file, &last_hidden, out) < 0)
			return -1;
	if (lt_buf_u8(out, 0) < 0 || lt_buf_u8(out, 1) < 0 || lt_buf_u8(out, MDB_LNE_END_SEQUENCE) < 0)
		return -1;
	for (uint32_t i = 0; (flags & MDB_COLUMNS) && i < s->n; i++)
		if (put_leb(out, s->points[i].start_column) < 0)
			return -1;
	for (uint32_t i = 0; (flags & MDB_ENDS) && i < s->n; i++) {
		const struct pdb_seq_point *p = &s->points[i];
		if (p->end_column == MDB_NO_END_COLUMN || p->end_line < p->start_line) {
			if (put_leb(out, MDB_NO_END) < 0)
				return -1;
		} else if (put_leb(out, p->end_line - p->start_line) < 0 || put_leb(out, p->end_column) < 0) {
			return -1;
		}
	}
	return 0;
}
