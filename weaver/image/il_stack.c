/* il_stack.c - maximum evaluation stack depth of a CIL body by propagating depths over every path (III.1.7.5). */
#include "il_body.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <stdint.h>
#include <stdlib.h>

struct walk {
	const struct il_body *b;
	const uint32_t *map;  /* id -> index */
	int32_t *depth;       /* per instruction, -1 until reached */
	uint32_t *work, nwork;
	uint32_t max;
};

/* Depth d reaches instruction `id` (from index `from`, UINT32_MAX for an
 * entry point).  III.1.7.5: every path must arrive with the same depth. */
static int reach(struct walk *w, uint32_t id, int32_t d, uint32_t from)
{
	uint32_t i = id == IL_ID_END ? UINT32_MAX : w->map[id];

	if (i == UINT32_MAX)
		return lt_error_set(LT_E_ENCODE, "instruction %u: target id %u is not in the body", from, id);
	if (w->depth[i] < 0) {
		w->depth[i] = d;
		w->work[w->nwork++] = i;
		if ((uint32_t)d > w->max)
			w->max = (uint32_t)d;
		return 0;
	}
	if (w->depth[i] != d)
		return lt_error_set(LT_E_BODY, "IL offset 0x%x (instruction %u): stack depth %d from instruction %u, %d from another path (III.1.7.5)",
				    w->b->ins[i].orig_offset, i, d, from, w->depth[i]);
	return 0;
}

/* Items popped and pushed by instruction i (III.1.7.5 stack transitions). */
static int effect(const struct il_body *b, uint32_t i, il_stack_effect_fn fn, void *ctx,
		  int *pops, int *pushes)
{
	const struct il_instr *in = &b->ins[i];
	const struct il_opcode_info *info = il_op_info(in->op);

	*pops = info->pops;
	*pushes = info->pushes;
	if (in->op == IL_RET) {
		/* III.3.56: ret pops the return value, if the method has one. */
		*pops = b->returns_value ? 1 : 0;
	} else if (*pops == IL_STACK_VAR) {
		if (!fn)
			return lt_error_set(LT_E_ENCODE, "instruction %u: %s needs a stack-effect callback",
					    i, info->name);
		if (fn(ctx, in->arg.token, in->op, pops, pushes) < 0)
			return -1;
		if (*pops < 0 || *pops > 0xFFFF || *pushes < 0 || *pushes > 1)
			return lt_error_set(LT_E_ENCODE, "instruction %u: %s token 0x%08x: callback gave pops %d pushes %d",
					    i, info->name, in->arg.token, *pops, *pushes);
	}
	return 0;
}

/* Propagate from instruction i (depth already set) to its successors. */
static int step(struct walk *w, uint32_t i, il_stack_effect_fn fn, void *ctx)
{
	const struct il_instr *in = &w->b->ins[i];
	const struct il_opcode_info *info = il_op_info(in->op);
	int32_t d = w->depth[i], nd;
	int pops, pushes;

	if (effect(w->b, i, fn, ctx, &pops, &pushes) < 0)
		return -1;
	if (pops == IL_STACK_ALL) {
		nd = 0; /* III.3.46 leave, III.3.35 endfinally: the stack is emptied */
	} else if (d < pops) {
		return lt_error_set(LT_E_BODY, "IL offset 0x%x (instruction %u): %s pops %d items, the stack holds %d (III.1.7.5)",
				    in->orig_offset, i, info->name, pops, d);
	} else {
		nd = d - pops + pushes;
	}
	if ((uint32_t)nd > w->max)
		w->max = (uint32_t)nd;
	if (il_op_is_branch(in->op) && reach(w, in->arg.target, nd, i) < 0)
		return -1;
	for (uint32_t k = 0; k < in->ntargets; k++)
		if (reach(w, in->targets[k], nd, i) < 0)
			return -1;
	if (info->flow == IL_FLOW_NEXT || info->flow == IL_FLOW_COND || info->flow == IL_FLOW_META) {
		if (i + 1 == w->b->n)
			return lt_error_set(LT_E_BODY, "IL offset 0x%x (instruction %u): %s falls through the end of the code (III.1.7.4)",
					    in->orig_offset, i, info->name);
		if (reach(w, w->b->ins[i + 1].id, nd, i) < 0)
			return -1;
	}
	return 0;
}

/* II.25.4.6, III.1.7.5: entry points and their depths. */
static int seed(struct walk *w)
{
	if (w->b->n && reach(w, w->b->ins[0].id, 0, UINT32_MAX) < 0)
		return -1;
	for (uint32_t k = 0; k < w->b->neh; k++) {
		const struct il_eh *e = &w->b->eh[k];
		int32_t hd = e->kind == IL_EH_CATCH || e->kind == IL_EH_FILTER ? 1 : 0;
		if (reach(w, e->try_start, 0, UINT32_MAX) < 0 || reach(w, e->handler_start, hd, UINT32_MAX) < 0)
			return -1;
		if (e->kind == IL_EH_FILTER && reach(w, e->filter_start, 1, UINT32_MAX) < 0)
			return -1;
	}
	return 0;
}

int il_max_stack(const struct il_body *b, il_stack_effect_fn fn, void *ctx, uint32_t *out)
{
	struct walk w = { .b = b };
	uint32_t *map = NULL;
	int rc = -1;

	if (il_id_map(b, &map) < 0)
		return -1;
	w.map = map;
	w.depth = lt_malloc((size_t)(b->n ? b->n : 1) * sizeof *w.depth);
	w.work = lt_malloc((size_t)(b->n ? b->n : 1) * sizeof *w.work);
	if (!w.depth || !w.work) {
		lt_nomem("stack walk of %u instructions", b->n);
		goto done;
	}
	for (uint32_t i = 0; i < b->n; i++)
		w.depth[i] = -1;
	if (seed(&w) < 0)
		goto done;
	/* Each instruction enters the work list once, when first reached. */
	while (w.nwork > 0)
		if (step(&w, w.work[--w.nwork], fn, ctx) < 0)
			goto done;
	*out = w.max;
	rc = 0;
done:
	free(map);
	free(w.depth);
	free(w.work);
	return rc;
}
