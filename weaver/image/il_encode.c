/* il_encode.c - encoding of CIL method bodies: branch forms, offsets, header and EH sections (II.25.4). */
#include "il_body.h"
#include "il_eh_sort.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <stdlib.h>
#include <string.h>

/* II.25.4.2-5: header and section bits written here. */
#define HDR_TINY 0x2
#define HDR_FAT_FLAGS 0x3003 /* CorILMethod_FatFormat, size 3 dwords in the top 4 bits */
#define HDR_MORE_SECTS 0x8
#define HDR_INIT_LOCALS 0x10
#define SECT_EH_TABLE 0x01
#define SECT_FAT 0x40
#define SMALL_CLAUSE 12
#define FAT_CLAUSE 24

static uint32_t instr_size(const struct il_instr *in)
{
	enum il_operand k = (enum il_operand)il_op_info(in->emit_op)->operand;
	uint32_t operand = k == IL_OPND_SWITCH ? 4 + 4 * in->ntargets : il_operand_size(k);

	return il_op_code_size(in->emit_op) + operand;
}

/* Index of the instruction `id` names, b->n for IL_ID_END when allow_end. */
static int index_of(const struct il_body *b, const uint32_t *map, uint32_t id, int allow_end,
		    const char *what, uint32_t *out)
{
	if (id == IL_ID_END && allow_end) {
		*out = b->n;
		return 0;
	}
	if (id == IL_ID_END || id >= b->next_id || map[id] == UINT32_MAX)
		return lt_error_set(LT_E_ENCODE, "%s: id %u is not an instruction of the body", what, id);
	*out = map[id];
	return 0;
}

/* Offset of index i (b->n: the end of the code), after offsets are set. */
static uint32_t offset_at(const struct il_body *b, uint32_t i)
{
	return i == b->n ? b->code_size : b->ins[i].offset;
}

/* III.1.7.2 targets counted from the next instruction. */
static int64_t branch_delta(const struct il_body *b, const uint32_t *map, const struct il_instr *in,
			    uint32_t target)
{
	return (int64_t)b->ins[map[target]].offset - ((int64_t)in->offset + instr_size(in));
}

/* Set offsets; widen short branches out of int8 range until none changes. */
static int layout(struct il_body *b, const uint32_t *map)
{
	int changed;

	for (uint32_t i = 0; i < b->n; i++) {
		struct il_instr *in = &b->ins[i];
		const struct il_opcode_info *info = il_op_info(in->op);
		uint32_t t;
		in->emit_op = in->op;
		if (il_op_is_branch(in->op)) {
			if (index_of(b, map, in->arg.target, 0, info->name, &t) < 0)
				return -1;
			if (info->operand == IL_OPND_BR32 && in->orig_offset == IL_NO_OFFSET)
				in->emit_op = (enum il_op)info->alt; /* new: start short */
		}
		for (uint32_t k = 0; k < in->ntargets; k++)
			if (index_of(b, map, in->targets[k], 0, "switch", &t) < 0)
				return -1;
	}
	do {
		uint64_t off = 0;
		for (uint32_t i = 0; i < b->n; i++) {
			b->ins[i].offset = (uint32_t)off;
			off += instr_size(&b->ins[i]);
			if (off > IL_MAX_CODE)
				return lt_error_set(LT_E_ENCODE, "IL code over %u bytes", IL_MAX_CODE);
		}
		b->code_size = (uint32_t)off;
		changed = 0;
		for (uint32_t i = 0; i < b->n; i++) {
			struct il_instr *in = &b->ins[i];
			const struct il_opcode_info *info = il_op_info(in->emit_op);
			int64_t d;
			if (info->operand != IL_OPND_BR8)
				continue;
			d = branch_delta(b, map, in, in->arg.target);
			if (d < INT8_MIN || d > INT8_MAX) {
				in->emit_op = (enum il_op)info->alt;
				changed = 1;
			}
		}
	} while (changed);
	return 0;
}

static int write_code(const struct il_body *b, const uint32_t *map, struct lt_buf *out)
{
	int rc = 0;

	for (uint32_t i = 0; i < b->n && rc == 0; i++) {
		const struct il_instr *in = &b->ins[i];
		const struct il_opcode_info *info = il_op_info(in->emit_op);
		if (info->code > 0xFF)
			rc = lt_buf_u8(out, 0xFE);
		if (rc == 0)
			rc = lt_buf_u8(out, (uint8_t)info->code);
		if (rc < 0)
			break;
		switch ((enum il_operand)info->operand) {
		case IL_OPND_NONE:
			break;
		case IL_OPND_INT8:
		case IL_OPND_VAR8:
			rc = lt_buf_u8(out, (uint8_t)in->arg.i);
			break;
		case IL_OPND_VAR16:
			rc = lt_buf_u16(out, (uint16_t)in->arg.i);
			break;
		case IL_OPND_INT32:
			rc = lt_buf_u32(out, (uint32_t)in->arg.i);
			break;
		case IL_OPND_INT64:
		case IL_OPND_FLOAT64:
			rc = lt_buf_u64(out, in->arg.bits);
			break;
		case IL_OPND_FLOAT32:
			rc = lt_buf_u32(out, (uint32_t)in->arg.bits);
			break;
		case IL_OPND_TOKEN:
			rc = lt_buf_u32(out, in->arg.token);
			break;
		case IL_OPND_BR8: /* in range: layout() widened every other */
			rc = lt_buf_u8(out, (uint8_t)branch_delta(b, map, in, in->arg.target));
			break;
		case IL_OPND_BR32: /* code <= IL_MAX_CODE: fits */
			rc = lt_buf_u32(out, (uint32_t)branch_delta(b, map, in, in->arg.target));
			break;
		case IL_OPND_SWITCH: /* III.3.66: offsets from the end of the table */
			rc = lt_buf_u32(out, in->ntargets);
			for (uint32_t k = 0; k < in->ntargets && rc == 0; k++)
				rc = lt_buf_u32(out, (uint32_t)branch_delta(b, map, in, in->targets[k]));
			break;
		}
	}
	return rc;
}

/* A clause as instruction index ranges [start, end). */
static int clause_span(const struct il_body *b, const uint32_t *map, uint32_t k, struct il_span *s)
{
	const struct il_eh *e = &b->eh[k];

	if (index_of(b, map, e->try_start, 0, "EH try start", &s->ts) < 0 ||
	    index_of(b, map, e->try_end, 1, "EH try end", &s->te) < 0 ||
	    index_of(b, map, e->handler_start, 0, "EH handler start", &s->hs) < 0 ||
	    index_of(b, map, e->handler_end, 1, "EH handler end", &s->he) < 0)
		return lt_error_prefix("EH clause %u: ", k);
	s->fs = s->hs;
	if (e->kind == IL_EH_FILTER &&
	    index_of(b, map, e->filter_start, 0, "EH filter start", &s->fs) < 0)
		return lt_error_prefix("EH clause %u: ", k);
	if (s->te <= s->ts || s->he <= s->hs || s->fs > s->hs)
		return lt_error_set(LT_E_ENCODE, "EH clause %u: a block ends before it starts (II.25.4.6)", k);
	return 0;
}

/* Order the clauses inner-first (il_eh_sort), otherwise keeping their order. */
static int sort_clauses(struct il_body *b, struct il_span *sp)
{
	uint32_t n = b->neh, *order = lt_malloc((size_t)n * sizeof *order);
	struct il_eh *eh = lt_malloc((size_t)n * sizeof *eh);
	struct il_span *sp2 = lt_malloc((size_t)n * sizeof *sp2);
	int rc = -1;

	if (!order || !eh || !sp2) {
		lt_nomem("sorting %u EH clauses", n);
		goto done;
	}
	if (il_eh_sort(sp, n, order) < 0)
		goto done;
	for (uint32_t k = 0; k < n; k++) {
		eh[k] = b->eh[order[k]];
		sp2[k] = sp[order[k]];
	}
	memcpy(b->eh, eh, (size_t)n * sizeof *eh);
	memcpy(sp, sp2, (size_t)n * sizeof *sp);
	rc = 0;
done:
	free(order);
	free(eh);
	free(sp2);
	return rc;
}

/* II.25.4.5-6: one EH section holding every clause, small when all fit. */
static int write_eh(const struct il_body *b, const struct il_span *sp, size_t body_start, struct lt_buf *out)
{
	int small = b->neh <= (255 - 4) / SMALL_CLAUSE;
	int rc;

	for (uint32_t k = 0; k < b->neh && small; k++) {
		uint32_t ts = offset_at(b, sp[k].ts), hs = offset_at(b, sp[k].hs);
		small = ts <= 0xFFFF && hs <= 0xFFFF && offset_at(b, sp[k].te) - ts <= 0xFF &&
			offset_at(b, sp[k].he) - hs <= 0xFF;
	}
	/* Fat DataSize is 24 bits: IL_MAX_CLAUSES * 24 + 4 fits. */
	uint32_t size = 4 + b->neh * (small ? SMALL_CLAUSE : FAT_CLAUSE);
	rc = lt_buf_zero(out, (4 - (out->len - body_start) % 4) % 4);
	if (rc == 0 && small)
		rc = lt_buf_u32(out, SECT_EH_TABLE | size << 8);
	else if (rc == 0)
		rc = lt_buf_u32(out, SECT_EH_TABLE | SECT_FAT | size << 8);
	for (uint32_t k = 0; k < b->neh && rc == 0; k++) {
		const struct il_eh *e = &b->eh[k];
		uint32_t ts = offset_at(b, sp[k].ts), tl = offset_at(b, sp[k].te) - ts;
		uint32_t hs = offset_at(b, sp[k].hs), hl = offset_at(b, sp[k].he) - hs;
		uint32_t last = e->kind == IL_EH_FILTER ? offset_at(b, sp[k].fs) : e->class_token;
		if (small) {
			rc = lt_buf_u16(out, (uint16_t)e->kind);
			if (rc == 0) rc = lt_buf_u16(out, (uint16_t)ts);
			if (rc == 0) rc = lt_buf_u8(out, (uint8_t)tl);
			if (rc == 0) rc = lt_buf_u16(out, (uint16_t)hs);
			if (rc == 0) rc = lt_buf_u8(out, (uint8_t)hl);
		} else {
			uint32_t v[5] = { e->kind, ts, tl, hs, hl };
			for (int j = 0; j < 5 && rc == 0; j++)
				rc = lt_buf_u32(out, v[j]);
		}
		if (rc == 0)
			rc = lt_buf_u32(out, last);
	}
	return rc;
}

/* II.25.4.2-3: tiny only for small code, no locals, no EH, stack <= 8. */
static int write_header(struct il_body *b, struct lt_buf *out)
{
	int rc;

	b->fat = !(b->code_size < 64 && b->local_var_sig_tok == 0 && b->neh == 0 &&
		   !b->init_locals && b->max_stack <= 8);
	if (!b->fat)
		return lt_buf_u8(out, (uint8_t)(b->code_size << 2 | HDR_TINY));
	rc = lt_buf_u16(out, (uint16_t)(HDR_FAT_FLAGS | (b->neh ? HDR_MORE_SECTS : 0) |
					(b->init_locals ? HDR_INIT_LOCALS : 0)));
	if (rc == 0)
		rc = lt_buf_u16(out, b->max_stack);
	if (rc == 0)
		rc = lt_buf_u32(out, b->code_size);
	if (rc == 0)
		rc = lt_buf_u32(out, b->local_var_sig_tok);
	return rc;
}

int il_encode(struct il_body *b, il_stack_effect_fn fn, void *ctx, struct lt_buf *out)
{
	size_t start = out->len;
	uint32_t *map = NULL, stack;
	struct il_span *sp = NULL;
	int rc = -1;

	if (il_id_map(b, &map) < 0)
		return -1;
	if (b->n == 0) {
		lt_error_set(LT_E_ENCODE, "a method body needs at least one instruction (II.25.4.1)");
		goto done;
	}
	if (layout(b, map) < 0)
		goto done;
	sp = lt_malloc((size_t)(b->neh ? b->neh : 1) * sizeof *sp);
	if (!sp) {
		lt_nomem("%u EH clauses", b->neh);
		goto done;
	}
	for (uint32_t k = 0; k < b->neh; k++)
		if (clause_span(b, map, k, &sp[k]) < 0)
			goto done;
	if (b->neh > 1 && sort_clauses(b, sp) < 0)
		goto done;
	if (il_max_stack(b, fn, ctx, &stack) < 0)
		goto done;
	if (stack > 0xFFFF) {
		lt_error_set(LT_E_ENCODE, "max stack %u does not fit the fat header (II.25.4.3)", stack);
		goto done;
	}
	if (stack > b->max_stack)
		b->max_stack = (uint16_t)stack;
	if (write_header(b, out) < 0 || write_code(b, map, out) < 0)
		goto done;
	if (b->neh && write_eh(b, sp, start, out) < 0)
		goto done;
	rc = 0;
done:
	free(map);
	free(sp);
	return rc;
}
