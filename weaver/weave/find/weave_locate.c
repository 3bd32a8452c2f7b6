/* weave_locate.c - the source location a lock site reports: the sequence point covering its call, found from the source for C# 13 `lock` on a Lock. */
#include "weave_pass.h"
#include "il_body.h"
#include "image_body.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <stdio.h>
#include <stdlib.h>
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
	int ends = 0, stop = 0, failed = 0, pops, pushes;
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
			stop = failed = img_stack_effect((void *)img, in->arg.token, in->op, &pops, &pushes) < 0;
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
	/* Only a failure's own error counts: a branch stops the walk with none. */
	if (failed && lt_error_last()->code == LT_E_NOMEM)
		return -1;
	lt_error_clear();
	return ends && !stop;
}

/* A sequence point over one character: a `{` or `}` (Roslyn puts one on
 * each brace of a block in Debug builds, and on a method's `{` in Release). */
static int is_brace(const struct pdb_seq_point *p)
{
	return p->start_line == p->end_line && p->end_column == p->start_column + 1;
}

/* The `lock` statement of Lock.EnterScope call c, between visible points
 * prev (have_prev 0: none) and next: see weave_sites_locate.  Returns 0, or
 * -1 with LT_E_NOMEM. */
static int lock_statement(const struct img *img, const struct wlines *lines, struct weave_input_body *ib,
			   const struct weave_call *c, int have_prev, const struct pdb_seq_point *prev, const struct pdb_seq_point *next,
			   struct weave_call *out)
{
	const uint8_t *text;
	size_t len, from = 0;
	int same_doc = have_prev && prev->document == next->document, rc;
	int from_prev = same_doc && prev->start_line; /* else from the top of the file */
	uint32_t line = from_prev ? prev->start_line : 1, column = from_prev ? prev->start_column : 1;

	out->doc = next->document;
	if ((rc = wlines_source(lines, next->document, &text, &len)) < 0)
		return -1;
	/* Searched from the start of the line of the point before: lines counted from there. */
	if (rc && next->start_line >= line && wlines_line_start(lines, next->document, line, &from) &&
	    weave_csharp_last_lock(text + from, len - from, 1, column, next->start_line - line + 1, next->start_column,
				   &out->line, &out->column)) {
		out->line += line - 1;
		return 0;
	}
	if (have_prev && !is_brace(prev)) {
		if ((rc = statement_ends_between(img, ib, c->methoddef, prev->offset, c->il_offset)) < 0)
			return -1;
		if (!rc) {
			/* A compiler that gives the lock its own point. */
			out->doc = prev->document;
			out->line = prev->start_line;
			out->column = prev->start_column;
			return 0;
		}
	}
	/* Without the source: Debug builds put a point on the block's `{`,
	 * which mostly sits on the line after the lock's - unless that is the
	 * line of the statement before: then the `{` is on the lock's line;
	 * Release builds begin with the
	 * block's first statement, and the lock is taken to follow the
	 * statement before. */
	if (is_brace(next))
		out->line = !same_doc || prev->end_line + 1 < next->start_line ? next->start_line - 1 : next->start_line;
	else
		out->line = same_doc && prev->end_line < next->start_line ? prev->end_line + 1 : next->start_line;
	out->line = out->line ? out->line : 1;
	out->column = out->line == next->start_line ? next->start_column : 0;
	return 0;
}

/* Locate acquiring site c (see weave_sites_locate), reading its method's
 * input body through ib.  Returns 0, or -1 with LT_E_NOMEM. */
static int locate(const struct img *img, const struct wlines *lines, struct weave_input_body *ib,
		  struct weave_call *c)
{
	struct pdb_seq_point prev, next;
	int have_prev = wlines_point(lines, c->methoddef, c->il_offset, WLINES_AT_OR_BEFORE, &prev), have_next = 0;

	if (have_prev < 0)
		return -1;
	if (c->kind == WEAVE_LOCK_ENTERSCOPE &&
	    (have_next = wlines_point(lines, c->methoddef, c->il_offset, WLINES_AFTER, &next)) < 0)
		return -1;
	if (have_next)
		return lock_statement(img, lines, ib, c, have_prev, &prev, &next, c);
	if (have_prev) {
		c->doc = prev.document;
		c->line = prev.start_line;
		c->column = prev.start_column;
	}
	return 0;
}

static int by_line(const void *a, const void *b)
{
	const struct weave_call *x = *(const struct weave_call *const *)a, *y = *(const struct weave_call *const *)b;

	if (x->doc != y->doc)
		return x->doc < y->doc ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

int weave_sites_locate(const struct img *img, const struct wlines *lines, struct weave_sites *sites)
{
	struct weave_input_body ib = { 0 };
	struct weave_call **order;
	size_t n = 0, i;

	if (!lines->has_pdb || sites->n == 0)
		return 0;
	order = lt_malloc(sites->n * sizeof *order);
	if (!order)
		return lt_nomem(NULL);
	for (i = 0; i < sites->n; i++) {
		struct weave_call *c = &sites->calls[i];
		if (!weave_kind_acquires(c->kind))
			continue;
		/* Sites come in MethodDef order: ib decodes each method once. */
		if (locate(img, lines, &ib, c) < 0) {
			weave_input_body_free(&ib);
			free(order);
			return -1;
		}
		if (c->line)
			order[n++] = c;
	}
	weave_input_body_free(&ib);
	qsort(order, n, sizeof *order, by_line);
	for (i = 0; i + 1 < n; i++)
		if (by_line(&order[i], &order[i + 1]) == 0)
			order[i]->shared_line = order[i + 1]->shared_line = 1;
	free(order);
	return 0;
}

int weave_location(const struct wlines *lines, const struct weave_call *c, char *buf, size_t n)
{
	if (c->line && wlines_format(lines, c->doc, c->line, c->shared_line ? c->column : 0, buf, n))
		return 1;
	snprintf(buf, n, "IL_%04x", c->il_offset);
	return 0;
}

static int name_starts(const struct md_image *md, enum md_table_id t, uint32_t row, unsigned col, const char *prefix)
{
	const char *name;

	return md_string(md, md_get(md, t, row, col), &name) == 0 && strncmp(name, prefix, strlen(prefix)) == 0;
}

/* The method of TypeDef `type` (not a lambda itself) whose source lines,
 * in document `doc`, hold `line` most tightly: the method a VB lambda or an
 * F# closure was written in, into *best (0 when none does).  Returns 0, or
 * -1 with LT_E_NOMEM. */
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

/* Whether TypeDef `type` is a closure class that a lambda of the user's
 * type lives in: VB's "_Closure$__N-M", F#'s "X@line". */
static int closure_class(const struct md_image *md, uint32_t type)
{
	const char *name;

	return md_string(md, md_get(md, MD_TYPEDEF, type, MD_TYPEDEF_NAME), &name) == 0 &&
	       (strncmp(name, VB_CLOSURE, strlen(VB_CLOSURE)) == 0 || strchr(name, '@'));
}

int weave_site_method(const struct weave_names *names, const struct wlines *lines, uint32_t row, struct lt_buf *name,
		      struct weave_within *within)
{
	const struct md_image *md = &names->img->md;
	struct weave_within w;
	uint32_t type = weave_names_owner(names, row), doc, first, last, user = 0;
	int vb = type && name_starts(md, MD_METHODDEF, row, MD_METHODDEF_NAME, VB_LAMBDA), spans;

	if (weave_names_method(names, row, name, &w) < 0)
		return -1;
	if ((spans = wlines_span(lines, row, &doc, &first, &last)) < 0)
		return -1;
	if (spans && w.kind != WEAVE_WITHIN_NONE) {
		w.doc = doc;
		w.line = first;
	}
	if (spans && (vb || w.fsharp)) {
		/* Out of the closure classes, to the user's type. */
		for (int depth = 0; depth < WEAVE_MAX_NESTING && names->enclosing[type - 1] && closure_class(md, type); depth++)
			type = names->enclosing[type - 1];
		if (enclosing_method(names, lines, type, doc, first, &user) < 0)
			return -1;
		if (user && weave_names_method(names, user, name, NULL) < 0)
			return -1;
		if (user)
			w = (struct weave_within){ .kind = WEAVE_WITHIN_LAMBDA, .doc = doc, .line = first };
	}
	if (within)
		*within = w;
	return 0;
}

int weave_site_name(const struct weave_names *names, const struct wlines *lines, uint32_t row, struct lt_buf *out)
{
	struct weave_within w;

	return weave_site_method(names, lines, row, out, &w) < 0 ? -1 : weave_within_append(lines, &w, out);
}

const char *weave_within_parts(const struct wlines *lines, const struct weave_within *w, struct lt_buf *what)
{
	char at[sizeof ((struct weave_site *)0)->location];
	const char *kind = "";
	int rc = 0;

	what->len = 0;
	if (w->kind == WEAVE_WITHIN_LOCAL) {
		kind = "local function";
		rc = weave_escape(what, w->local, w->local_len);
	} else if (w->kind == WEAVE_WITHIN_LAMBDA) {
		kind = "lambda";
		if (w->line && wlines_format(lines, w->doc, w->line, 0, at, sizeof at))
			rc = lt_buf_put(what, at, strlen(at));
	}
	if (rc < 0 || lt_buf_reserve(what, 1) < 0)
		return NULL;
	what->data[what->len] = '\0';
	return kind;
}

int weave_within_append(const struct wlines *lines, const struct weave_within *w, struct lt_buf *out)
{
	struct lt_buf what = LT_BUF_INIT;
	const char *kind = weave_within_parts(lines, w, &what);
	int rc;

	if (!kind)
		rc = -1;
	else if (w->kind == WEAVE_WITHIN_LOCAL)
		rc = lt_buf_put(out, " > ", 3) < 0 || lt_buf_put(out, what.data, what.len) < 0 ? -1 : 0;
	else if (w->kind == WEAVE_WITHIN_LAMBDA && what.len)
		rc = lt_buf_printf(out, " (lambda at %.*s)", (int)what.len, (const char *)what.data);
	else if (w->kind == WEAVE_WITHIN_LAMBDA)
		rc = lt_buf_put(out, " (lambda)", 9);
	else
		rc = 0;
	lt_buf_free(&what);
	if (rc < 0 || lt_buf_reserve(out, 1) < 0)
		return -1;
	out->data[out->len] = '\0';
	return 0;
}
