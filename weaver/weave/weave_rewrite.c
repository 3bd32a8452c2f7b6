/* weave_rewrite.c - redirecting the lock calls of one method body to the helper type's wrappers. */
#include "weave_pass.h"
#include "il_body.h"
#include "image_body.h"
#include "lt_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fail unless no EH clause boundary names instruction `id`: an acquiring
 * call has its arguments on the stack, so no block can start or end at it
 * in valid IL (III.1.7.5, I.12.4.2.8: blocks are entered and left with an
 * empty stack), and the ldstr pair inserted before it need not be placed. */
static int check_no_boundary(const struct il_body *b, uint32_t id, uint32_t offset)
{
	for (uint32_t i = 0; i < b->neh; i++) {
		const struct il_eh *c = &b->eh[i];
		if (c->try_start == id || c->try_end == id || c->handler_start == id || c->handler_end == id ||
		    (c->kind == IL_EH_FILTER && c->filter_start == id))
			return lt_error_set(LT_E_WEAVE,
					    "IL_%04x: EH clause %u starts or ends at a lock call that has arguments on the stack (I.12.4.2.8)",
					    offset, i);
	}
	return 0;
}

/* Drop the prefixes before the call at *idx: tail. is removed (references
 * to it move onto the call: III.2.4, the call then returns normally), any
 * other prefix cannot precede a call to a static wrapper. */
static int drop_prefixes(struct il_body *b, uint32_t *idx, uint32_t offset)
{
	while (*idx > 0 && il_op_info(b->ins[*idx - 1].op)->flow == IL_FLOW_META) {
		enum il_op op = b->ins[*idx - 1].op;
		if (op != IL_TAIL)
			return lt_error_set(LT_E_WEAVE, "IL_%04x: prefix %s before a lock call cannot be woven", offset,
					    il_op_info(op)->name);
		il_retarget(b, b->ins[*idx - 1].id, b->ins[*idx].id, IL_RT_ALL);
		if (il_remove(b, *idx - 1, 1) < 0)
			return -1;
		(*idx)--;
	}
	return 0;
}

/* Redirect one call (instruction `id`) to its wrapper; method_tok is the
 * ldstr token of the method's name. */
static int rewrite_call(struct img *img, struct weave_helper *h, const struct wlines *lines, struct il_body *b,
			uint32_t id, const struct weave_call *c, uint32_t method_tok)
{
	struct il_instr strs[2];
	char location[sizeof ((struct weave_site *)0)->location];
	uint32_t idx, wrapper, first;

	if (il_index_of(b, id, &idx) < 0 || drop_prefixes(b, &idx, c->il_offset) < 0 ||
	    weave_helper_wrapper(h, c->callee, c->kind, c->callvirt, &wrapper) < 0)
		return -1;
	if (weave_kind_acquires(c->kind)) {
		weave_location(img, lines, c, location, sizeof location);
		memset(strs, 0, sizeof strs);
		strs[0].op = strs[1].op = IL_LDSTR;
		strs[0].arg.token = method_tok;
		if (check_no_boundary(b, id, c->il_offset) < 0 || img_string_token(img, location, &strs[1].arg.token) < 0)
			return -1;
		first = b->next_id;
		if (il_insert(b, idx, strs, 2) < 0)
			return -1;
		/* Branches to the call now run the ldstr pair: the call's own
		 * arguments are on the stack there already. */
		il_retarget(b, id, first, IL_RT_BRANCH);
		idx += 2;
	}
	b->ins[idx].op = IL_CALL;
	b->ins[idx].arg.token = wrapper;
	return 0;
}

/* The ldstr token of MethodDef row's user-facing name into *tok, made on
 * first use (*tok 0 until then). */
static int method_token(struct img *img, const struct weave_names *names, const struct wlines *lines, uint32_t row,
			uint32_t *tok)
{
	char method[sizeof ((struct weave_site *)0)->method];

	if (*tok)
		return 0;
	return weave_site_method(names, lines, row, method, sizeof method) < 0 ? -1 : img_string_token(img, method, tok);
}

int weave_rewrite_method(struct img *img, struct weave_helper *h, const struct weave_names *names,
			 const struct wlines *lines, const struct weave_call *calls, size_t n)
{
	uint32_t row = calls[0].methoddef, method_tok = 0, location_tok, *ids = NULL, i;
	const struct weave_call *sync_site = calls[0].kind == WEAVE_SYNCHRONIZED ? &calls[0] : NULL;
	int sync = sync_site != NULL, rc = -1;
	char location[sizeof ((struct weave_site *)0)->location];
	struct il_body b;
	size_t k;

	if (img_decode_body(img, row, &b) < 0)
		return -1;
	calls += sync;
	n -= (size_t)sync;
	/* Each call below costs passes over the body (find, insert, retarget). */
	if ((uint64_t)n * b.n > WEAVE_MAX_METHOD_WORK) {
		lt_error_set(LT_E_LIMIT, "MethodDef row %u: %zu lock calls in %u instructions: past LockTime's limit",
			     row, n, b.n);
		goto done;
	}
	ids = malloc((n ? n : 1) * sizeof *ids);
	if (!ids) {
		lt_error_set(LT_E_NOMEM, "out of memory");
		goto done;
	}
	/* Ids before any edit: calls[] and b.ins are both in IL order. */
	for (i = 0, k = 0; i < b.n && k < n; i++)
		if (b.ins[i].orig_offset == calls[k].il_offset)
			ids[k++] = b.ins[i].id;
	if (k < n) {
		lt_error_set(LT_E_WEAVE, "MethodDef row %u: no instruction at lock call IL_%04x", row, calls[k].il_offset);
		goto done;
	}
	for (k = 0; k < n; k++) {
		if (weave_kind_acquires(calls[k].kind) && method_token(img, names, lines, row, &method_tok) < 0)
			goto done;
		if (rewrite_call(img, h, lines, &b, ids[k], &calls[k], method_tok) < 0) {
			lt_error_prefix("MethodDef row %u: ", row);
			goto done;
		}
	}
	/* The synchronized method's site is the start of its body. */
	if (sync_site) {
		weave_location(img, lines, sync_site, location, sizeof location);
		if (method_token(img, names, lines, row, &method_tok) < 0 || img_string_token(img, location, &location_tok) < 0 ||
		    weave_sync_wrap(img, h, names, &b, row, method_tok, location_tok) < 0)
			goto done;
	}
	rc = img_encode_body(img, row, &b);
done:
	free(ids);
	il_body_free(&b);
	return rc;
}
