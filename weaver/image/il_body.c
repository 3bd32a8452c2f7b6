/* il_body.c - CIL method bodies: decoding of headers, instructions and EH sections (II.25.4), and editing. */
#include "il_body.h"
#include "lt_cursor.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <stdlib.h>
#include <string.h>

/* II.25.4.1-4: header kinds and flags. */
#define HDR_TINY 0x2
#define HDR_FAT 0x3
#define HDR_MORE_SECTS 0x8
#define HDR_INIT_LOCALS 0x10
#define HDR_FAT_DWORDS 3
/* II.25.4.5: EH section kinds. */
#define SECT_EH_TABLE 0x01
#define SECT_FAT 0x40
#define SECT_MORE 0x80

struct il_hdr {
	uint32_t hdr_size, code_size;
	int fat, more_sects, init_locals;
	uint16_t max_stack;
	uint32_t locals;
};

/* II.25.4.2 (tiny) and II.25.4.3 (fat). */
static int read_header(const uint8_t *bytes, size_t avail, struct il_hdr *h)
{
	struct lt_cur c = lt_cur_init(bytes, avail, LT_E_BODY, "method header");
	uint16_t flags;
	uint8_t b0;

	memset(h, 0, sizeof *h);
	if (lt_cur_u8(&c, &b0) < 0)
		return -1;
	if ((b0 & 3) == HDR_TINY) {
		h->hdr_size = 1;
		h->code_size = b0 >> 2;
		h->max_stack = 8;
	} else if ((b0 & 3) == HDR_FAT) {
		c.pos = 0;
		if (lt_cur_u16(&c, &flags) < 0 || lt_cur_u16(&c, &h->max_stack) < 0 ||
		    lt_cur_u32(&c, &h->code_size) < 0 || lt_cur_u32(&c, &h->locals) < 0)
			return -1;
		if (flags >> 12 != HDR_FAT_DWORDS)
			return lt_error_set(LT_E_BODY, "fat header: size %u dwords, not 3 (II.25.4.3)",
					    flags >> 12);
		if (flags & 0xFFF & ~(HDR_FAT | HDR_MORE_SECTS | HDR_INIT_LOCALS))
			return lt_error_set(LT_E_BODY, "fat header: unknown flags 0x%x (II.25.4.4)",
					    flags & 0xFFF);
		h->fat = 1;
		h->hdr_size = 4 * HDR_FAT_DWORDS;
		h->more_sects = !!(flags & HDR_MORE_SECTS);
		h->init_locals = !!(flags & HDR_INIT_LOCALS);
	} else {
		return lt_error_set(LT_E_BODY, "method header kind %u is neither tiny (2) nor fat (3) (II.25.4.1)",
				    b0 & 3);
	}
	if (h->code_size == 0)
		return lt_error_set(LT_E_BODY, "method header: code size 0 (II.25.4.1)");
	if (h->code_size > IL_MAX_CODE)
		return lt_error_set(LT_E_LIMIT, "method header: code size %u over %u bytes",
				    h->code_size, IL_MAX_CODE);
	if (h->code_size > avail - h->hdr_size)
		return lt_error_set(LT_E_BODY, "method header: code size %u passes the end (%zu bytes left)",
				    h->code_size, avail - h->hdr_size);
	return 0;
}

/* One clause of either form (II.25.4.6), kept with offsets: starts as
 * offsets, ends as offset + length (checked <= code_size); c reads the
 * section that starts at body offset `section`. */
static int read_clause(struct lt_cur *c, size_t section, int fat, uint32_t code_size, struct il_body *b)
{
	uint32_t v[6];
	uint16_t s16;
	uint8_t s8;
	struct il_eh e;

	if (fat) {
		for (int k = 0; k < 6; k++)
			if (lt_cur_u32(c, &v[k]) < 0)
				return -1;
	} else {
		/* Flags u16, TryOffset u16, TryLength u8, HandlerOffset u16, HandlerLength u8, u32 */
		if (lt_cur_u16(c, &s16) < 0) return -1;
		v[0] = s16;
		if (lt_cur_u16(c, &s16) < 0) return -1;
		v[1] = s16;
		if (lt_cur_u8(c, &s8) < 0) return -1;
		v[2] = s8;
		if (lt_cur_u16(c, &s16) < 0) return -1;
		v[3] = s16;
		if (lt_cur_u8(c, &s8) < 0) return -1;
		v[4] = s8;
		if (lt_cur_u32(c, &v[5]) < 0) return -1;
	}
	if (v[0] != IL_EH_CATCH && v[0] != IL_EH_FILTER && v[0] != IL_EH_FINALLY && v[0] != IL_EH_FAULT)
		return lt_error_set(LT_E_BODY, "EH clause %u: unknown flags 0x%x (II.25.4.6)", b->neh, v[0]);
	if ((uint64_t)v[1] + v[2] > code_size || (uint64_t)v[3] + v[4] > code_size ||
	    (v[0] == IL_EH_FILTER && v[5] >= code_size))
		return lt_error_set(LT_E_BODY, "EH clause %u: try 0x%x+0x%x or handler 0x%x+0x%x passes the code (0x%x bytes, II.25.4.6)",
				    b->neh, v[1], v[2], v[3], v[4], code_size);
	if (v[2] == 0 || v[4] == 0)
		return lt_error_set(LT_E_BODY, "EH clause %u: empty try or handler block (II.25.4.6)", b->neh);
	if (b->neh >= IL_MAX_CLAUSES)
		return lt_error_set(LT_E_LIMIT, "more than %u EH clauses", IL_MAX_CLAUSES);
	e = (struct il_eh){ .kind = (enum il_eh_kind)v[0], .try_start = v[1], .try_end = v[1] + v[2],
			    .handler_start = v[3], .handler_end = v[3] + v[4],
			    .class_at = (uint32_t)(section + c->pos - 4) };
	if (e.kind == IL_EH_FILTER)
		e.filter_start = v[5];
	else
		e.class_token = v[5];
	return il_add_eh(b, &e);
}

/* II.25.4.5: the sections after the code, from pos (the end of the code);
 * each starts 4-byte aligned relative to the body.  Clauses go to b (raw
 * offsets, see read_clause) when b is not NULL.  *end = end of the last. */
static int read_sections(const uint8_t *bytes, size_t avail, size_t pos, uint32_t code_size,
			 struct il_body *b, uint32_t *end)
{
	struct lt_cur all = lt_cur_init(bytes, avail, LT_E_BODY, "EH section"), c;
	uint8_t kind, b1;
	uint16_t reserved;
	uint32_t size;
	int more;

	do {
		pos = (pos + 3) & ~(size_t)3;
		if (lt_cur_seek(&all, pos) < 0 || lt_cur_u8(&all, &kind) < 0)
			return -1;
		if (!(kind & SECT_EH_TABLE) || (kind & ~(SECT_EH_TABLE | SECT_FAT | SECT_MORE)))
			return lt_error_set(LT_E_BODY, "section at body offset 0x%zx: kind 0x%x is not an EH table (II.25.4.5)",
					    pos, kind);
		if (kind & SECT_FAT) {
			uint8_t s[3];
			for (int k = 0; k < 3; k++)
				if (lt_cur_u8(&all, &s[k]) < 0)
					return -1;
			size = (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16;
		} else {
			if (lt_cur_u8(&all, &b1) < 0 || lt_cur_u16(&all, &reserved) < 0)
				return -1;
			size = b1;
		}
		uint32_t csize = kind & SECT_FAT ? 24 : 12;
		if (size < 4 || (size - 4) % csize)
			return lt_error_set(LT_E_BODY, "EH section at body offset 0x%zx: DataSize %u is not 4 + %u * n (II.25.4.5)",
					    pos, size, csize);
		if (lt_cur_sub(&all, pos, size, &c) < 0 || lt_cur_skip(&c, 4) < 0)
			return -1;
		for (uint32_t k = 0; b && k < (size - 4) / csize; k++)
			if (read_clause(&c, pos, kind & SECT_FAT, code_size, b) < 0)
				return -1;
		more = kind & SECT_MORE;
		pos += size;
	} while (more);
	*end = (uint32_t)pos;
	return 0;
}

int il_body_size(const uint8_t *bytes, size_t avail, uint32_t *out)
{
	struct il_hdr h;

	if (read_header(bytes, avail, &h) < 0)
		return -1;
	*out = h.hdr_size + h.code_size;
	if (!h.more_sects)
		return 0;
	return read_sections(bytes, avail, *out, h.code_size, NULL, out);
}

/* III.1.2: one instruction at c's position; branch targets are left as
 * code offsets (checked to lie inside the code), resolved by the caller. */
static int decode_instr(struct lt_cur *c, struct il_instr *in)
{
	const struct il_opcode_info *info;
	uint8_t b, b2;
	uint16_t u16;
	uint32_t u32, count;
	uint64_t u64;
	int64_t base;

	if (lt_cur_u8(c, &b) < 0)
		return -1;
	if (b == 0xFE) {
		if (lt_cur_u8(c, &b2) < 0)
			return -1;
		if (il_op_from_code((uint16_t)(0xFE00 | b2), &in->op) < 0)
			return -1;
	} else if (il_op_from_code(b, &in->op) < 0) {
		return -1;
	}
	in->emit_op = in->op;
	info = il_op_info(in->op);
	switch ((enum il_operand)info->operand) {
	case IL_OPND_NONE:
		return 0;
	case IL_OPND_INT8:
	case IL_OPND_BR8:
		if (lt_cur_u8(c, &b) < 0)
			return -1;
		in->arg.i = (int8_t)b;
		break;
	case IL_OPND_VAR8:
		if (lt_cur_u8(c, &b) < 0)
			return -1;
		in->arg.i = b;
		return 0;
	case IL_OPND_VAR16:
		if (lt_cur_u16(c, &u16) < 0)
			return -1;
		in->arg.i = u16;
		return 0;
	case IL_OPND_INT32:
	case IL_OPND_BR32:
		if (lt_cur_u32(c, &u32) < 0)
			return -1;
		in->arg.i = (int32_t)u32;
		break;
	case IL_OPND_TOKEN:
		return lt_cur_u32(c, &in->arg.token);
	case IL_OPND_FLOAT32:
		if (lt_cur_u32(c, &u32) < 0)
			return -1;
		in->arg.bits = u32;
		return 0;
	case IL_OPND_INT64:
	case IL_OPND_FLOAT64:
		if (lt_cur_u64(c, &u64) < 0)
			return -1;
		in->arg.bits = u64;
		return 0;
	case IL_OPND_SWITCH:
		/* III.3.66: N, then N int32 offsets from the end of the table. */
		if (lt_cur_u32(c, &count) < 0)
			return -1;
		if (count > lt_cur_left(c) / 4)
			return lt_error_set(LT_E_BODY, "switch table of %u targets passes the end of the code", count);
		base = (int64_t)c->pos + 4 * (int64_t)count;
		in->targets = lt_malloc((size_t)(count ? count : 1) * sizeof *in->targets);
		if (!in->targets)
			return lt_nomem("switch of %u targets", count);
		in->ntargets = count;
		for (uint32_t k = 0; k < count; k++) {
			/* in range: checked above */
			int64_t t = base + (int32_t)lt_le32(c->data + c->pos + 4 * (size_t)k);
			if (t < 0 || t >= (int64_t)c->len)
				return lt_error_set(LT_E_BODY, "switch target %u at 0x%llx is outside the code", k,
						    (unsigned long long)t);
			in->targets[k] = (uint32_t)t;
		}
		c->pos += 4 * (size_t)count;
		return 0;
	}
	if (info->operand == IL_OPND_BR8 || info->operand == IL_OPND_BR32) {
		/* III.1.7.2: the offset counts from the start of the next instruction. */
		int64_t t = (int64_t)c->pos + in->arg.i;
		if (t < 0 || t >= (int64_t)c->len)
			return lt_error_set(LT_E_BODY, "branch target 0x%llx is outside the code (0x%zx bytes)",
					    (long long)t, c->len);
		in->arg.target = (uint32_t)t;
	}
	return 0;
}

/* A code offset -> instruction id (= decode index), or IL_ID_END at the end
 * when allow_end; -1 when the offset is not an instruction start. */
static int resolve(const uint32_t *start, uint32_t code_size, uint32_t off, int allow_end, uint32_t *id)
{
	if (off == code_size && allow_end) {
		*id = IL_ID_END;
		return 0;
	}
	if (off >= code_size || start[off] == 0)
		return -1;
	*id = start[off] - 1;
	return 0;
}

static int resolve_targets(struct il_body *b, const uint32_t *start)
{
	for (uint32_t i = 0; i < b->n; i++) {
		struct il_instr *in = &b->ins[i];
		if (il_op_is_branch(in->op) &&
		    resolve(start, b->code_size, in->arg.target, 0, &in->arg.target) < 0)
			return lt_error_set(LT_E_BODY, "IL offset 0x%x: %s target 0x%x is inside an instruction (III.1.7.2)",
					    in->orig_offset, il_op_info(in->op)->name, in->arg.target);
		for (uint32_t k = 0; k < in->ntargets; k++)
			if (resolve(start, b->code_size, in->targets[k], 0, &in->targets[k]) < 0)
				return lt_error_set(LT_E_BODY, "IL offset 0x%x: switch target 0x%x is inside an instruction (III.3.66)",
						    in->orig_offset, in->targets[k]);
	}
	for (uint32_t k = 0; k < b->neh; k++) {
		struct il_eh *e = &b->eh[k];
		if (resolve(start, b->code_size, e->try_start, 0, &e->try_start) < 0 ||
		    resolve(start, b->code_size, e->try_end, 1, &e->try_end) < 0 ||
		    resolve(start, b->code_size, e->handler_start, 0, &e->handler_start) < 0 ||
		    resolve(start, b->code_size, e->handler_end, 1, &e->handler_end) < 0 ||
		    (e->kind == IL_EH_FILTER && resolve(start, b->code_size, e->filter_start, 0, &e->filter_start) < 0))
			return lt_error_set(LT_E_BODY, "EH clause %u: a bound is not at an instruction start (II.25.4.6)", k);
	}
	return 0;
}

static int decode_code(const uint8_t *code, struct il_body *b)
{
	struct lt_cur c = lt_cur_init(code, b->code_size, LT_E_BODY, "IL code");
	uint32_t *start;
	int rc = -1;

	while (lt_cur_left(&c) > 0) {
		uint32_t at = (uint32_t)c.pos;
		struct il_instr *in;
		if (lt_grow(&b->ins, &b->cap, (size_t)b->n + 1, sizeof *b->ins) < 0)
			return -1;
		in = &b->ins[b->n++];
		memset(in, 0, sizeof *in);
		in->id = b->n - 1;
		in->orig_offset = in->offset = at;
		if (decode_instr(&c, in) < 0)
			return lt_error_prefix("IL offset 0x%x: ", at);
	}
	b->next_id = b->n;
	/* start[off] = index + 1 of the instruction at off, 0 inside one. */
	start = lt_calloc(b->code_size, sizeof *start);
	if (!start)
		return lt_nomem("IL offset map of %u bytes", b->code_size);
	for (uint32_t i = 0; i < b->n; i++)
		start[b->ins[i].orig_offset] = i + 1;
	rc = resolve_targets(b, start);
	free(start);
	return rc;
}

int il_decode(const uint8_t *bytes, size_t avail, struct il_body *out)
{
	struct il_hdr h;
	uint32_t end;

	memset(out, 0, sizeof *out);
	if (read_header(bytes, avail, &h) < 0)
		return -1;
	out->fat = h.fat;
	out->max_stack = h.max_stack;
	out->local_var_sig_tok = h.locals;
	out->init_locals = h.init_locals;
	out->code_size = out->orig_code_size = h.code_size;
	if (h.more_sects &&
	    read_sections(bytes, avail, h.hdr_size + h.code_size, h.code_size, out, &end) < 0)
		goto fail;
	if (decode_code(bytes + h.hdr_size, out) < 0)
		goto fail;
	return 0;
fail:
	il_body_free(out);
	return -1;
}

/* What il_scan_calls reads of a one-byte opcode (III.1.2): how to step over
 * it.  SCAN_SLOW for what decode_instr reads itself: 0xFE (two-byte
 * opcodes), switch, a byte no opcode has. */
enum scan_kind { SCAN_SLOW, SCAN_STEP, SCAN_BR8, SCAN_BR32, SCAN_CALL };
struct scan_op {
	uint8_t kind;         /* enum scan_kind */
	uint8_t operand_size; /* bytes after the opcode */
	uint16_t op;          /* enum il_op, for SCAN_CALL */
};

/* scan_ops[b]: one entry per first byte, filled from the opcode table on first use. */
static struct scan_op scan_ops[256];

static void fill_scan_ops(void)
{
	for (unsigned op = 0; op < IL_OP_COUNT; op++) {
		const struct il_opcode_info *info = il_op_info((enum il_op)op);
		struct scan_op *s = &scan_ops[info->code & 0xFF];

		if (info->code > 0xFF || info->operand == IL_OPND_SWITCH)
			continue;
		s->operand_size = (uint8_t)il_operand_size((enum il_operand)info->operand);
		s->op = (uint16_t)op;
		s->kind = op == IL_CALL || op == IL_CALLVIRT ? SCAN_CALL
			: info->operand == IL_OPND_BR8	    ? SCAN_BR8
			: info->operand == IL_OPND_BR32	    ? SCAN_BR32
							    : SCAN_STEP;
	}
}

int il_scan_calls(const uint8_t *bytes, size_t avail, il_call_fn fn, void *ctx)
{
	static int filled;
	struct il_hdr h;
	struct lt_cur c;
	const uint8_t *code;
	uint32_t end;

	if (read_header(bytes, avail, &h) < 0 ||
	    (h.more_sects && read_sections(bytes, avail, h.hdr_size + h.code_size, h.code_size, NULL, &end) < 0))
		return -1;
	if (!filled) {
		fill_scan_ops();
		filled = 1;
	}
	code = bytes + h.hdr_size;
	c = lt_cur_init(code, h.code_size, LT_E_BODY, "IL code");
	/* Only the opcode and its operand's size, but for what may not read
	 * (an operand past the code, a branch out of it) or needs more
	 * (two-byte opcodes, switch): those decode_instr reads, with its checks
	 * and messages. */
	while (c.pos < c.len) {
		const struct scan_op *s = &scan_ops[code[c.pos]];
		size_t at = c.pos, next = at + 1 + s->operand_size;
		struct il_instr in;
		int rc;

		if (s->kind != SCAN_SLOW && next <= c.len) {
			int64_t t = 0; /* a branch's target (III.1.7.2: from the next instruction) */

			if (s->kind == SCAN_BR8)
				t = (int64_t)next + (int8_t)code[at + 1];
			else if (s->kind == SCAN_BR32)
				t = (int64_t)next + (int32_t)lt_le32(code + at + 1);
			if (t >= 0 && t < (int64_t)c.len) {
				if (s->kind == SCAN_CALL &&
				    fn(ctx, (uint32_t)at, (enum il_op)s->op, lt_le32(code + at + 1)) < 0)
					return -1;
				c.pos = next;
				continue;
			}
		}
		in.targets = NULL; /* the one field decode_instr allocates (switch) */
		rc = decode_instr(&c, &in);
		free(in.targets);
		if (rc < 0)
			return lt_error_prefix("IL offset 0x%zx: ", at);
		if ((in.op == IL_CALL || in.op == IL_CALLVIRT) && fn(ctx, (uint32_t)at, in.op, in.arg.token) < 0)
			return -1;
	}
	return 0;
}

void il_body_free(struct il_body *b)
{
	if (!b)
		return;
	for (uint32_t i = 0; i < b->n; i++)
		free(b->ins[i].targets);
	free(b->ins);
	free(b->eh);
	memset(b, 0, sizeof *b);
}

int il_index_of(const struct il_body *b, uint32_t id, uint32_t *out)
{
	for (uint32_t i = 0; i < b->n; i++)
		if (b->ins[i].id == id) {
			*out = i;
			return 0;
		}
	return lt_error_set(LT_E_ENCODE, "no instruction with id %u", id);
}

int il_id_map(const struct il_body *b, uint32_t **out)
{
	uint32_t *map = lt_malloc((size_t)(b->next_id ? b->next_id : 1) * sizeof *map);

	if (!map)
		return lt_nomem("id map of %u", b->next_id);
	memset(map, 0xFF, (size_t)b->next_id * sizeof *map);
	for (uint32_t i = 0; i < b->n; i++)
		map[b->ins[i].id] = i;
	*out = map;
	return 0;
}

int il_insert(struct il_body *b, uint32_t at, const struct il_instr *ins, uint32_t n)
{
	if (at > b->n)
		return lt_error_set(LT_E_ENCODE, "insert at %u past %u instructions", at, b->n);
	if (n > IL_MAX_CODE - b->n || b->next_id > UINT32_MAX - 1 - n)
		return lt_error_set(LT_E_LIMIT, "more than %u instructions", IL_MAX_CODE);
	for (uint32_t k = 0; k < n; k++)
		if ((unsigned)ins[k].op >= IL_OP_COUNT)
			return lt_error_set(LT_E_ENCODE, "insert: op %d is not an opcode", (int)ins[k].op);
	if (lt_grow(&b->ins, &b->cap, (size_t)b->n + n, sizeof *b->ins) < 0)
		return -1;
	memmove(&b->ins[at + n], &b->ins[at], (size_t)(b->n - at) * sizeof *b->ins);
	for (uint32_t k = 0; k < n; k++) {
		struct il_instr *in = &b->ins[at + k];
		*in = ins[k];
		in->targets = NULL;
		in->ntargets = 0;
		in->id = b->next_id + k;
		in->orig_offset = IL_NO_OFFSET;
		in->emit_op = in->op;
		if (ins[k].ntargets) {
			in->targets = lt_malloc((size_t)ins[k].ntargets * sizeof *in->targets);
			if (!in->targets) {
				/* Undo: free the copies made so far and close the gap. */
				for (uint32_t j = 0; j < k; j++)
					free(b->ins[at + j].targets);
				memmove(&b->ins[at], &b->ins[at + n], (size_t)(b->n - at) * sizeof *b->ins);
				return lt_nomem("switch of %u targets", ins[k].ntargets);
			}
			memcpy(in->targets, ins[k].targets, (size_t)ins[k].ntargets * sizeof *in->targets);
			in->ntargets = ins[k].ntargets;
		}
	}
	b->n += n;
	b->next_id += n;
	return 0;
}

int il_remove(struct il_body *b, uint32_t at, uint32_t n)
{
	if (at > b->n || n > b->n - at)
		return lt_error_set(LT_E_ENCODE, "remove %u at %u: past %u instructions", n, at, b->n);
	for (uint32_t k = 0; k < n; k++)
		free(b->ins[at + k].targets);
	memmove(&b->ins[at], &b->ins[at + n], (size_t)(b->n - at - n) * sizeof *b->ins);
	b->n -= n;
	return 0;
}

static uint32_t swap_id(uint32_t *ref, uint32_t from, uint32_t to, int on)
{
	if (!on || *ref != from)
		return 0;
	*ref = to;
	return 1;
}

uint32_t il_retarget(struct il_body *b, uint32_t from_id, uint32_t to_id, unsigned which)
{
	uint32_t changed = 0;
	int br = !!(which & IL_RT_BRANCH);

	for (uint32_t i = 0; i < b->n; i++) {
		struct il_instr *in = &b->ins[i];
		if (il_op_is_branch(in->op))
			changed += swap_id(&in->arg.target, from_id, to_id, br);
		for (uint32_t k = 0; k < in->ntargets; k++)
			changed += swap_id(&in->targets[k], from_id, to_id, br);
	}
	for (uint32_t k = 0; k < b->neh; k++) {
		struct il_eh *e = &b->eh[k];
		changed += swap_id(&e->try_start, from_id, to_id, which & IL_RT_TRY_START);
		changed += swap_id(&e->try_end, from_id, to_id, which & IL_RT_TRY_END);
		changed += swap_id(&e->handler_start, from_id, to_id, which & IL_RT_HANDLER_START);
		changed += swap_id(&e->handler_end, from_id, to_id, which & IL_RT_HANDLER_END);
		if (e->kind == IL_EH_FILTER)
			changed += swap_id(&e->filter_start, from_id, to_id, which & IL_RT_FILTER_START);
	}
	return changed;
}

int il_add_eh(struct il_body *b, const struct il_eh *c)
{
	if (b->neh >= IL_MAX_CLAUSES)
		return lt_error_set(LT_E_LIMIT, "more than %u EH clauses", IL_MAX_CLAUSES);
	if (lt_grow(&b->eh, &b->eh_cap, (size_t)b->neh + 1, sizeof *b->eh) < 0)
		return -1;
	b->eh[b->neh++] = *c;
	return 0;
}

int il_map_offset(const struct il_body *b, uint32_t old_offset, uint32_t *out)
{
	if (old_offset == b->orig_code_size) {
		*out = b->code_size;
		return 0;
	}
	for (uint32_t i = 0; i < b->n; i++)
		if (b->ins[i].orig_offset == old_offset) {
			*out = b->ins[i].offset;
			return 0;
		}
	return lt_error_set(LT_E_BODY, "IL offset 0x%x: no kept instruction was decoded there", old_offset);
}

/* il_apply's checks and counts: 0 with *add and *drop, or -1. */
static int edits_check(const struct il_body *b, const struct il_edit *e, uint32_t ne, uint32_t *add, uint32_t *drop)
{
	uint64_t a = 0, d = 0;

	for (uint32_t k = 0; k < ne; k++) {
		if (e[k].at > b->n || (e[k].drop && (e[k].at == b->n || e[k].n)) || (k && e[k].at <= e[k - 1].at))
			return lt_error_set(LT_E_ENCODE, "edit %u at %u: out of order, past %u instructions, or a drop "
					    "that inserts", k, e[k].at, b->n);
		for (uint32_t j = 0; j < e[k].n; j++)
			if ((unsigned)e[k].ins[j].op >= IL_OP_COUNT)
				return lt_error_set(LT_E_ENCODE, "insert: op %d is not an opcode", (int)e[k].ins[j].op);
		a += e[k].n;
		d += !!e[k].drop;
	}
	if (b->n - d + a > IL_MAX_CODE || b->next_id > UINT32_MAX - 1 - a)
		return lt_error_set(LT_E_LIMIT, "more than %u instructions", IL_MAX_CODE);
	*add = (uint32_t)a;
	*drop = (uint32_t)d;
	return 0;
}

/* Where a reference of kind `which` to id goes after il_apply's edits. */
struct remap {
	uint32_t old_next;  /* ids below it are the body's before the batch */
	uint32_t *kept;     /* kept[id]: id, or for a dropped one the next kept (IL_ID_END) */
	uint32_t *first;    /* first[id]: the first inserted before it */
	uint8_t *which;     /* which[id]: the kinds that move onto first[id] */
};

static void remap(const struct remap *m, uint32_t *id, unsigned which)
{
	if (*id >= m->old_next)
		return;
	*id = m->kept[*id];
	if (*id < m->old_next && (m->which[*id] & which))
		*id = m->first[*id];
}

/* Copy inserted instruction `from` into *to with id `id` (switch targets copied). */
static int copy_inserted(struct il_instr *to, const struct il_instr *from, uint32_t id)
{
	*to = *from;
	to->targets = NULL;
	to->ntargets = 0;
	to->id = id;
	to->orig_offset = IL_NO_OFFSET;
	to->emit_op = to->op;
	if (from->ntargets) {
		if (!(to->targets = lt_malloc((size_t)from->ntargets * sizeof *to->targets)))
			return lt_nomem("switch of %u targets", from->ntargets);
		memcpy(to->targets, from->targets, (size_t)from->ntargets * sizeof *to->targets);
		to->ntargets = from->ntargets;
	}
	return 0;
}

/* Build ins[] (room for the result) from b and the edits, filling m. */
static int apply_build(const struct il_body *b, const struct il_edit *e, uint32_t ne, struct il_instr *ins,
		       uint32_t *len, struct remap *m)
{
	uint32_t k = 0, n = 0, id = b->next_id, pending = 0;

	for (uint32_t i = 0; i <= b->n; i++) {
		int dropped = 0;
		for (; k < ne && e[k].at == i; k++) {
			dropped = e[k].drop;
			for (uint32_t j = 0; j < e[k].n; j++, n++)
				if (copy_inserted(&ins[n], &e[k].ins[j], id++) < 0) {
					*len = n;
					return -1;
				}
			if (e[k].n && i < b->n) {
				m->first[b->ins[i].id] = id - e[k].n;
				m->which[b->ins[i].id] = (uint8_t)e[k].retarget;
			}
		}
		if (i == b->n)
			break;
		if (dropped) {
			/* Dropped ids wait for the next kept instruction: chained in kept[]. */
			m->kept[b->ins[i].id] = pending;
			pending = b->ins[i].id + 1;
			continue;
		}
		for (uint32_t p = pending; p; ) {
			uint32_t next = m->kept[p - 1];
			m->kept[p - 1] = b->ins[i].id;
			p = next;
		}
		pending = 0;
		ins[n++] = b->ins[i];
	}
	for (uint32_t p = pending; p; ) {
		uint32_t next = m->kept[p - 1];
		m->kept[p - 1] = IL_ID_END;
		p = next;
	}
	*len = n;
	return 0;
}

int il_apply(struct il_body *b, const struct il_edit *e, uint32_t ne)
{
	struct remap m = { .old_next = b->next_id };
	struct il_instr *ins;
	uint32_t add = 0, drop = 0, len = 0;
	int rc = -1;

	if (ne == 0)
		return 0;
	if (edits_check(b, e, ne, &add, &drop) < 0)
		return -1;
	ins = lt_malloc((size_t)(b->n - drop + add + 1) * sizeof *ins);
	m.kept = lt_malloc((size_t)(m.old_next + 1) * sizeof *m.kept);
	m.first = lt_malloc((size_t)(m.old_next + 1) * sizeof *m.first);
	m.which = lt_calloc((size_t)m.old_next + 1, 1);
	if (!ins || !m.kept || !m.first || !m.which) {
		lt_nomem("editing %u IL instructions", b->n);
		goto done;
	}
	for (uint32_t id = 0; id < m.old_next; id++)
		m.kept[id] = id;
	if (apply_build(b, e, ne, ins, &len, &m) < 0) {
		for (uint32_t i = 0; i < len; i++)
			if (ins[i].id >= m.old_next) /* a copy made here; the others are b's */
				free(ins[i].targets);
		goto done;
	}
	for (uint32_t i = 0; i < len; i++) {
		if (il_op_is_branch(ins[i].op))
			remap(&m, &ins[i].arg.target, IL_RT_BRANCH);
		for (uint32_t t = 0; t < ins[i].ntargets; t++)
			remap(&m, &ins[i].targets[t], IL_RT_BRANCH);
	}
	for (uint32_t k = 0; k < b->neh; k++) {
		struct il_eh *c = &b->eh[k];
		remap(&m, &c->try_start, IL_RT_TRY_START);
		remap(&m, &c->try_end, IL_RT_TRY_END);
		remap(&m, &c->handler_start, IL_RT_HANDLER_START);
		remap(&m, &c->handler_end, IL_RT_HANDLER_END);
		if (c->kind == IL_EH_FILTER)
			remap(&m, &c->filter_start, IL_RT_FILTER_START);
	}
	for (uint32_t k = 0; k < ne; k++)
		if (e[k].drop)
			free(b->ins[e[k].at].targets);
	free(b->ins);
	b->ins = ins;
	ins = NULL;
	b->cap = b->n - drop + add + 1;
	b->n = len;
	b->next_id += add;
	rc = 0;
done:
	free(ins);
	free(m.kept);
	free(m.first);
	free(m.which);
	return rc;
}
