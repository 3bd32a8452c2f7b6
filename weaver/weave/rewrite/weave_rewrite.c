/* weave_rewrite.c - redirecting the lock calls of one method body to the stub type's wrappers. */
#include "weave_pass.h"
#include "il_body.h"
#include "image_body.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What rewriting one method's calls collects, to edit its body in one pass
 * (il_apply) once every call is checked: the edits in ascending index
 * order, the site ids they insert, and where the clause boundaries are. */
struct edits {
	struct il_edit *e;
	size_t n, cap;
	struct il_instr *ids;    /* ldc.i4 site, 1 per call (owned) */
	uint32_t nids;
	uint32_t *first_clause;  /* [index]: the first EH clause with a boundary there, UINT32_MAX none */
};

static void edits_free(struct edits *ed)
{
	free(ed->e);
	free(ed->ids);
	free(ed->first_clause);
}

static int edits_init(struct edits *ed, const struct il_body *b, size_t ncalls)
{
	uint32_t *map = NULL;

	memset(ed, 0, sizeof *ed);
	ed->ids = lt_calloc(ncalls + 1, sizeof *ed->ids);
	ed->first_clause = lt_malloc(((size_t)b->n + 1) * sizeof *ed->first_clause);
	if (!ed->ids || !ed->first_clause || il_id_map(b, &map) < 0)
		return ed->ids && ed->first_clause ? -1 : lt_nomem("lock call edits");
	memset(ed->first_clause, 0xFF, ((size_t)b->n + 1) * sizeof *ed->first_clause);
	for (uint32_t i = b->neh; i-- > 0;) {
		const struct il_eh *c = &b->eh[i];
		const uint32_t ids[5] = { c->try_start, c->try_end, c->handler_start, c->handler_end,
					  c->kind == IL_EH_FILTER ? c->filter_start : IL_ID_END };
		for (unsigned k = 0; k < 5; k++)
			if (ids[k] < b->next_id && map[ids[k]] != UINT32_MAX)
				ed->first_clause[map[ids[k]]] = i;
	}
	free(map);
	return 0;
}

static int edits_add(struct edits *ed, const struct il_edit *e)
{
	if (lt_grow(&ed->e, &ed->cap, ed->n + 1, sizeof *ed->e) < 0)
		return -1;
	ed->e[ed->n++] = *e;
	return 0;
}

/* The prefixes before the call at index idx: tail. is dropped (references
 * to it move onto the call: III.2.4, the call then returns normally), any
 * other prefix cannot precede a call to a static wrapper.  *start gets the
 * index of the first. */
static int drop_prefixes(const struct il_body *b, struct edits *ed, uint32_t idx, uint32_t offset, uint32_t *start)
{
	for (*start = idx; *start > 0 && il_op_info(b->ins[*start - 1].op)->flow == IL_FLOW_META; (*start)--)
		if (b->ins[*start - 1].op != IL_TAIL)
			return lt_error_set(LT_E_WEAVE, "IL_%04x: prefix %s before a lock call cannot be woven", offset,
					    il_op_info(b->ins[*start - 1].op)->name);
	for (uint32_t i = *start; i < idx; i++)
		if (edits_add(ed, &(struct il_edit){ .at = i, .drop = 1 }) < 0)
			return -1;
	return 0;
}

/* Fail when an EH clause boundary names the call at idx or a prefix it
 * takes over (from `start`): an acquiring call has its arguments on the
 * stack, so no block can start or end at it in valid IL (III.1.7.5,
 * I.12.4.2.8: blocks are entered and left with an empty stack), and the
 * site id inserted before it need not be placed. */
static int check_no_boundary(const struct edits *ed, uint32_t start, uint32_t idx, uint32_t offset)
{
	uint32_t first = UINT32_MAX;

	for (uint32_t i = start; i <= idx; i++)
		first = ed->first_clause[i] < first ? ed->first_clause[i] : first;
	if (first != UINT32_MAX)
		return lt_error_set(LT_E_WEAVE,
				    "IL_%04x: EH clause %u starts or ends at a lock call that has arguments on the stack (I.12.4.2.8)",
				    offset, first);
	return 0;
}

/* Redirect the call at index idx to its stub.  The body's instructions stay
 * where they are: the prefixes to drop and, for an acquiring call, the
 * `ldc.i4 site` to insert before it go into ed. */
static int rewrite_call(struct weave_stubs *h, struct il_body *b, struct edits *ed, uint32_t idx,
			const struct weave_call *c, int in_async)
{
	struct il_instr *id = &ed->ids[ed->nids];
	uint32_t wrapper, start;

	if (drop_prefixes(b, ed, idx, c->il_offset, &start) < 0 ||
	    weave_stubs_for_call(h, c->callee, c->kind, c->callvirt, in_async, &wrapper) < 0)
		return -1;
	if (weave_kind_acquires(c->kind)) {
		if (check_no_boundary(ed, start, idx, c->il_offset) < 0)
			return -1;
		id->op = IL_LDC_I4;
		id->arg.i = c->site;
		ed->nids++;
		/* Branches to the call run the ldc.i4: the call's own
		 * arguments are on the stack there already. */
		if (edits_add(ed, &(struct il_edit){ .at = idx, .ins = id, .n = 1, .retarget = IL_RT_BRANCH }) < 0)
			return -1;
	}
	b->ins[idx].op = IL_CALL;
	b->ins[idx].arg.token = wrapper;
	return 0;
}

int weave_rewrite_method(struct img *img, struct weave_stubs *h, const struct weave_names *names,
			 const struct weave_call *calls, size_t n)
{
	uint32_t row = calls[0].methoddef, *at = NULL, i;
	const struct weave_call *sync_site = calls[0].kind == WEAVE_SYNCHRONIZED ? &calls[0] : NULL;
	int sync = sync_site != NULL, rc = -1, in_async;
	struct edits ed = { 0 };
	struct il_body b;
	size_t k;

	if ((in_async = weave_names_in_async(names, row)) < 0 || img_decode_body(img, row, &b) < 0)
		return -1;
	calls += sync;
	n -= (size_t)sync;
	if (!(at = lt_malloc((n ? n : 1) * sizeof *at))) {
		lt_nomem("lock calls");
		goto done;
	}
	/* Indexes before any edit: calls[] and b.ins are both in IL order. */
	for (i = 0, k = 0; i < b.n && k < n; i++)
		if (b.ins[i].orig_offset == calls[k].il_offset)
			at[k++] = i;
	if (k < n) {
		lt_error_set(LT_E_WEAVE, "MethodDef row %u: no instruction at lock call IL_%04x", row, calls[k].il_offset);
		goto done;
	}
	if (edits_init(&ed, &b, n) < 0)
		goto done;
	for (k = 0; k < n; k++) {
		if (rewrite_call(h, &b, &ed, at[k], &calls[k], in_async) < 0) {
			lt_error_prefix("MethodDef row %u: ", row);
			goto done;
		}
	}
	if (il_apply(&b, ed.e, (uint32_t)ed.n) < 0) {
		lt_error_prefix("MethodDef row %u: ", row);
		goto done;
	}
	/* The synchronized method's site is the start of its body. */
	if (sync_site && weave_sync_wrap(img, h, names, &b, row, sync_site->site) < 0)
		goto done;
	rc = img_encode_body(img, row, &b);
done:
	edits_free(&ed);
	free(at);
	il_body_free(&b);
	return rc;
}
