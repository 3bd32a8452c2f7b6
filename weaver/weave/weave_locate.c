/* weave_locate.c - the source location a lock site reports: the sequence point covering its call, corrected for C# 13 `lock` on a Lock. */
#include "weave_pass.h"
#include "il_body.h"
#include "image_body.h"
#include "lt_error.h"

#include <stdio.h>
#include <string.h>

/* VB names a lambda "_Lambda$__<method ordinal>-<lambda ordinal>" (Roslyn
 * GeneratedNames.vb) and puts it in a closure class "_Closure$__..." nested
 * in the user's type, or in that type itself: no part of the name says
 * which method it was written in. */
#define VB_LAMBDA "_Lambda$__"
#define VB_CLOSURE "_Closure$__"

void weave_input_body_free(struct weave_input_body *ib)
{
	if (ib->row)
		il_body_free(&ib->b);
	memset(ib, 0, sizeof *ib);
}

/* Whether an instruction of `row`'s input body (decoded into ib unless it
 * holds it) at an offset in [from, to) ends a statement: a store (of a
 * local, argument, field, element or through a pointer), pop, nop, a call
 * whose result is void (a void call is a whole statement), leave (the end of
 * a try block: `}` of a using or lock), ret, endfinally, throw.  1 yes, 0 no
 * - also when a branch comes first (it may sit inside an expression:
 * `c ? a : b`) or the body cannot be read: the caller then keeps the
 * sequence point it has. */
static int statement_ends_between(const struct img *img, struct weave_input_body *ib, uint32_t row, uint32_t from,
				  uint32_t to)
{
	int ends = 0, stop = 0, pops, pushes;
	uint32_t i, lo = 0, hi;

	if (ib->row != row) {
		weave_input_body_free(ib);
		if (img_decode_body(img, row, &ib->b) < 0)
			return lt_error_last()->code == LT_E_NOMEM ? -1 : 0;
		ib->row = row;
	}
	/* The first instruction at or after `from`: an input body is in IL order. */
	for (hi = ib->b.n; lo < hi;) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (ib->b.ins[mid].orig_offset < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < ib->b.n && ib->b.ins[i].orig_offset < to && !ends && !stop; i++) {
		const struct il_instr *in = &ib->b.ins[i];
		const struct il_opcode_info *info = il_op_info(in->op);
		if (in->op == IL_CALL || in->op == IL_CALLVIRT) {
			stop = img_stack_effect((void *)img, in->arg.token, in->op, &pops, &pushes) < 0;
			ends = !stop && pushes == 0;
		} else if (in->op == IL_LEAVE || in->op == IL_LEAVE_S || info->flow == IL_FLOW_RETURN ||
			   info->flow == IL_FLOW_THROW) {
			ends = 1;
		} else if (info->flow == IL_FLOW_BRANCH || info->flow == IL_FLOW_COND) {
			stop = 1;
		} else {
			/* Stores push nothing (they pop what they store); pop and nop neither. */
			ends = info->pushes == 0;
		}
	}
	if (stop && lt_error_last()->code == LT_E_NOMEM)
		return -1;
	return ends && !stop;
}

/* Roslyn lowers `lock (x)` on a System.Threading.Lock to `using
 * (x.EnterScope())` and emits no sequence point for it: the point before
 * the EnterScope call is then the statement before the lock (or the block's
 * `{`), which a statement end between that point and the call gives away.
 * The lock's own block is then the nearest line: its `{` (Debug builds) or
 * its first statement (Release builds), the next visible point. */
int weave_site_line(const struct img *img, const struct wlines *lines, const struct weave_call *c,
		    struct weave_input_body *ib, char *buf, size_t n)
{
	uint32_t point;
	int rc = wlines_point(lines, c->methoddef, c->il_offset, WLINES_AT_OR_BEFORE, buf, n, &point);

	if (rc <= 0 || c->kind != WEAVE_LOCK_ENTERSCOPE)
		return rc;
	if ((rc = statement_ends_between(img, ib, c->methoddef, point, c->il_offset)) <= 0)
		return rc < 0 ? -1 : 1;
	return wlines_point(lines, c->methoddef, c->il_offset, WLINES_AFTER, buf, n, NULL) < 0 ? -1 : 1;
}

int weave_location(const struct img *img, const struct wlines *lines, const struct weave_call *c,
		   struct weave_input_body *ib, char *buf, size_t n)
{
	int rc = weave_site_line(img, lines, c, ib, buf, n);

	if (rc == 0)
		snprintf(buf, n, "IL_%04x", c->il_offset);
	return rc < 0 ? -1 : 0;
}

static int name_starts(const struct md_image *md, enum md_table_id t, uint32_t row, unsigned col, const char *prefix)
{
	const char *name;

	return md_string(md, md_get(md, t, row, col), &name) == 0 && strncmp(name, prefix, strlen(prefix)) == 0;
}

/* The method of TypeDef `type` (not a lambda itself) whose source lines,
 * in document `doc`, hold `line` most tightly: the VB method a lambda was
 * written in, into *best (0 when none does).  Returns 0, or -1 with
 * LT_E_NOMEM. */
static int enclosing_method(const struct weave_names *names, const struct wlines *lines, uint32_t type,
			    uint32_t doc, uint32_t line, uint32_t *best)
{
	const struct md_image *md = &names->img->md;
	uint32_t best_span = UINT32_MAX, d, first, last;
	int rc;

	*best = 0;
	for (uint32_t m = 1; m <= names->nmethods; m++) {
		if (weave_names_owner(names, m) != type || name_starts(md, MD_METHODDEF, m, MD_METHODDEF_NAME, VB_LAMBDA))
			continue;
		if ((rc = wlines_span(lines, m, &d, &first, &last)) < 0)
			return -1;
		if (!rc || d != doc || line < first || line > last)
			continue;
		if (last - first < best_span) {
			*best = m;
			best_span = last - first;
		}
	}
	return 0;
}

int weave_site_method(const struct weave_names *names, const struct wlines *lines, uint32_t row, char *buf,
		      size_t n)
{
	const struct md_image *md = &names->img->md;
	uint32_t type = weave_names_owner(names, row), doc, first, last, user;
	int spans = type && name_starts(md, MD_METHODDEF, row, MD_METHODDEF_NAME, VB_LAMBDA) ?
		    wlines_span(lines, row, &doc, &first, &last) : 0;

	if (spans < 0)
		return -1;
	if (spans) {
		/* Out of the closure classes, to the user's type. */
		for (int depth = 0; depth < WEAVE_MAX_NESTING && names->enclosing[type - 1] &&
				    name_starts(md, MD_TYPEDEF, type, MD_TYPEDEF_NAME, VB_CLOSURE); depth++)
			type = names->enclosing[type - 1];
		if (enclosing_method(names, lines, type, doc, first, &user) < 0)
			return -1;
		if (user)
			row = user;
	}
	return weave_names_method(names, row, buf, n);
}
