/* weave_emit.c - a small CIL assembler for the bodies LockTime writes from scratch: instructions, labels, EH clauses. */
#include "weave_emit.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <stdlib.h>
#include <string.h>

#define NO_LABEL UINT32_MAX

void em_init(struct em *e)
{
	memset(e, 0, sizeof *e);
}

void em_free(struct em *e)
{
	free(e->ins);
	free(e->label_at);
	memset(e, 0, sizeof *e);
}

/* Make room for one more element of an array; sticky failure. */
static int room(struct em *e, void *arr, size_t *cap, uint32_t n, size_t size)
{
	if (e->failed)
		return -1;
	if (n >= IL_MAX_CODE || lt_grow(arr, cap, (size_t)n + 1, size) < 0) {
		e->failed = 1;
		return lt_nomem("emitting a body of %u instructions", n);
	}
	return 0;
}

uint32_t em_label(struct em *e)
{
	if (room(e, &e->label_at, &e->label_cap, e->nlabels, sizeof *e->label_at) < 0)
		return 0;
	e->label_at[e->nlabels] = NO_LABEL;
	return e->nlabels++;
}

void em_mark(struct em *e, uint32_t label)
{
	if (!e->failed)
		e->label_at[label] = e->n;
}

static struct il_instr *push(struct em *e, enum il_op op)
{
	struct il_instr *in;

	if (room(e, &e->ins, &e->cap, e->n, sizeof *e->ins) < 0)
		return NULL;
	in = &e->ins[e->n++];
	memset(in, 0, sizeof *in);
	in->op = op;
	return in;
}

void em_op(struct em *e, enum il_op op)
{
	push(e, op);
}

void em_tok(struct em *e, enum il_op op, uint32_t token)
{
	struct il_instr *in = push(e, op);
	if (in)
		in->arg.token = token;
}

void em_br(struct em *e, enum il_op op, uint32_t label)
{
	struct il_instr *in = push(e, op);
	if (in)
		in->arg.target = label;
}

static void op_i(struct em *e, enum il_op op, int64_t v)
{
	struct il_instr *in = push(e, op);
	if (in)
		in->arg.i = v;
}

void em_i4(struct em *e, int32_t v)
{
	if (v >= -1 && v <= 8)
		em_op(e, (enum il_op)(IL_LDC_I4_0 + v)); /* ldc.i4.m1 precedes ldc.i4.0 */
	else if (v >= -128 && v <= 127)
		op_i(e, IL_LDC_I4_S, v);
	else
		op_i(e, IL_LDC_I4, v);
}

void em_i8(struct em *e, int64_t v)
{
	op_i(e, IL_LDC_I8, v);
}

void em_r8(struct em *e, double v)
{
	struct il_instr *in = push(e, IL_LDC_R8);
	if (in)
		memcpy(&in->arg.bits, &v, sizeof v);
}

/* ldarg/ldloc/stloc family: the .0-.3 form, else the .s form, else the long one. */
static void var(struct em *e, uint32_t n, int has_short4, enum il_op op0, enum il_op op_s, enum il_op op_l)
{
	if (has_short4 && n <= 3)
		em_op(e, (enum il_op)(op0 + n));
	else if (n <= 0xFF)
		op_i(e, op_s, n);
	else
		op_i(e, op_l, n);
}

void em_ldarg(struct em *e, uint32_t n) { var(e, n, 1, IL_LDARG_0, IL_LDARG_S, IL_LDARG); }
void em_ldloc(struct em *e, uint32_t n) { var(e, n, 1, IL_LDLOC_0, IL_LDLOC_S, IL_LDLOC); }
void em_stloc(struct em *e, uint32_t n) { var(e, n, 1, IL_STLOC_0, IL_STLOC_S, IL_STLOC); }
void em_ldloca(struct em *e, uint32_t n) { var(e, n, 0, IL_NOP, IL_LDLOCA_S, IL_LDLOCA); }
void em_ldarga(struct em *e, uint32_t n) { var(e, n, 0, IL_NOP, IL_LDARGA_S, IL_LDARGA); }

void em_eh(struct em *e, const struct em_eh *c)
{
	if (e->failed)
		return;
	if (e->neh == EM_MAX_EH) {
		e->failed = 1;
		lt_error_set(LT_E_LIMIT, "emitted body: more than %d EH clauses", EM_MAX_EH);
		return;
	}
	e->eh[e->neh++] = *c;
}

/* The id of the instruction a label marks; a label at the end gives
 * IL_ID_END, allowed only for clause ends (at_end). */
static int resolve(const struct em *e, uint32_t base, uint32_t label, int at_end, uint32_t *out)
{
	uint32_t at = label < e->nlabels ? e->label_at[label] : NO_LABEL;

	if (at == NO_LABEL || (at == e->n && !at_end))
		return lt_error_set(LT_E_ENCODE, "emitted body: label %u is not placed before an instruction", label);
	*out = at == e->n ? IL_ID_END : base + at;
	return 0;
}

int em_finish(struct em *e, struct il_body *out)
{
	uint32_t base;

	memset(out, 0, sizeof *out);
	if (e->failed)
		return -1;
	/* il_insert gives the instructions the ids next_id, next_id + 1, ...
	 * in order, so a label's id is known before inserting. */
	base = out->next_id;
	for (uint32_t i = 0; i < e->n; i++)
		if (il_op_is_branch(e->ins[i].op) &&
		    resolve(e, base, e->ins[i].arg.target, 0, &e->ins[i].arg.target) < 0)
			return -1;
	if (il_insert(out, 0, e->ins, e->n) < 0)
		goto fail;
	for (uint32_t k = 0; k < e->neh; k++) {
		const struct em_eh *c = &e->eh[k];
		struct il_eh h = { .kind = c->kind, .class_token = c->class_token };
		if (resolve(e, base, c->try_start, 0, &h.try_start) < 0 ||
		    resolve(e, base, c->try_end, 1, &h.try_end) < 0 ||
		    resolve(e, base, c->handler_start, 0, &h.handler_start) < 0 ||
		    resolve(e, base, c->handler_end, 1, &h.handler_end) < 0 ||
		    (c->kind == IL_EH_FILTER && resolve(e, base, c->filter_start, 0, &h.filter_start) < 0) ||
		    il_add_eh(out, &h) < 0)
			goto fail;
	}
	return 0;
fail:
	il_body_free(out);
	return -1;
}
