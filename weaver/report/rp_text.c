/* rp_text.c - the summary table of a report (`locktime report --format text`), then its holds in
 * progress, potential deadlocks and deadlocks, each as the run-time's summary gives it
 * (weaver/runtime/Lines/Summary.cs). */
#include "rp_output.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COLUMNS 13
#define TEXT_COLUMNS 3 /* method, location, kind: left-aligned; the rest are numbers */

static const char *const heads[COLUMNS] = { "method", "location", "kind", "acquired", "contended", "failed",
	"wait total", "wait max", "wait p99", "hold total", "hold max", "hold p99", "made others wait" };

/* Width in characters of UTF-8 text (continuation bytes do not count). */
static size_t width_of(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* ns as milliseconds to the microsecond, half away from zero, as the run-time's summary writes them
 * (LineText.Ms): in integers, so that a figure the report keeps to the nanosecond (28,488,500 ns) prints as
 * the summary printed it (28.489), not as a double's "%.3f" rounds it (28.488). */
static void ms(char *cell, size_t size, int64_t ns)
{
	uint64_t n = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns, us = n / 1000 + (n % 1000 >= 500);

	snprintf(cell, size, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", us / 1000, us % 1000);
}

static int pad(struct lt_buf *out, size_t n)
{
	for (; n; n--)
		if (lt_buf_u8(out, ' '))
			return -1;
	return 0;
}

static const char *plural(int64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* The numbers of site s as cells (28 bytes each are plenty for an int64 or ms). */
static void number_cells(const struct rp_site *s, char cells[COLUMNS][32])
{
	snprintf(cells[3], 32, "%" PRId64, s->acquisitions);
	snprintf(cells[4], 32, "%" PRId64, s->contended);
	snprintf(cells[5], 32, "%" PRId64, s->failed);
	ms(cells[6], 32, s->wait.total);
	ms(cells[7], 32, s->wait.max);
	ms(cells[8], 32, s->wait.p99);
	ms(cells[9], 32, s->hold.total);
	ms(cells[10], 32, s->hold.max);
	ms(cells[11], 32, s->hold.p99);
	if (s->hold_na) /* as Summary.cs: a counting semaphore's hold is not measured */
		for (int k = 9; k < 12; k++)
			snprintf(cells[k], 32, "n/a");
	ms(cells[12], 32, s->blamed_wait_ns); /* 0 in a report without blame, as the summary shows it */
}

static int row(struct lt_buf *out, const char *const text[COLUMNS], const size_t width[COLUMNS])
{
	for (int k = 0; k < COLUMNS; k++) {
		size_t w = width_of(text[k]);
		if (k && pad(out, 2))
			return -1;
		if (k >= TEXT_COLUMNS && pad(out, width[k] - w))
			return -1;
		if (lt_buf_put(out, text[k], strlen(text[k])))
			return -1;
		if (k < TEXT_COLUMNS && pad(out, width[k] - w))
			return -1;
	}
	return lt_buf_u8(out, '\n');
}

/* The totals line, then (when there are sites) the table. */
static int table(const struct rp_report *r, struct lt_buf *out)
{
	int64_t acq = 0, cont = 0, failed = 0, again = 0, wait = 0, hold = 0;
	char wait_ms[32], hold_ms[32];
	size_t assemblies = 0, width[COLUMNS];
	char cells[COLUMNS][32];

	for (size_t i = 0; i < r->n_sites; i++) {
		const struct rp_site *s = &r->sites[i];
		int seen = 0;
		acq += s->acquisitions;
		cont += s->contended;
		failed += s->failed;
		again += s->reentries;
		wait += s->wait.total;
		hold += s->hold.total;
		for (size_t k = 0; k < i && !seen; k++)
			seen = !strcmp(r->sites[k].assembly, s->assembly);
		assemblies += !seen;
	}
	ms(wait_ms, sizeof wait_ms, wait);
	ms(hold_ms, sizeof hold_ms, hold);
	if (lt_buf_printf(out, "summary: %zu %s in %zu %s from %zu %s; %" PRId64 " %s, %" PRId64 " contended, %" PRId64
			  " failed %s", r->n_sites, plural((int64_t)r->n_sites, "site", "sites"), assemblies,
			  plural((int64_t)assemblies, "assembly", "assemblies"), r->n_processes,
			  plural((int64_t)r->n_processes, "process", "processes"), acq,
			  plural(acq, "acquisition", "acquisitions"), cont, failed, plural(failed, "try", "tries")) ||
	    /* as Summary.cs: re-entries, when there were any, are counted apart */
	    (again && lt_buf_printf(out, ", %" PRId64 " %s", again, plural(again, "re-entry", "re-entries"))) ||
	    lt_buf_printf(out, "; wait %s ms, hold %s ms", wait_ms, hold_ms))
		return -1;
	if (r->dropped_lines && lt_buf_printf(out, "; %" PRId64 " %s dropped (queue full)", r->dropped_lines,
					      plural(r->dropped_lines, "line", "lines")))
		return -1;
	if (r->unwritten_lines && lt_buf_printf(out, "; %" PRId64 " %s could not be written (the sink took nothing)",
						r->unwritten_lines, plural(r->unwritten_lines, "line", "lines")))
		return -1;
	if (lt_buf_u8(out, '\n'))
		return -1;
	if (r->n_sites == 0)
		return 0;
	for (int k = 0; k < COLUMNS; k++)
		width[k] = width_of(heads[k]);
	for (size_t i = 0; i < r->n_sites; i++) {
		const struct rp_site *s = &r->sites[i];
		const char *text[TEXT_COLUMNS] = { s->method, s->location, s->kind };
		number_cells(s, cells);
		for (int k = 0; k < COLUMNS; k++) {
			size_t w = width_of(k < TEXT_COLUMNS ? text[k] : cells[k]);
			if (w > width[k])
				width[k] = w;
		}
	}
	if (lt_buf_printf(out, "%zu %s by total wait, then total hold (times in ms):\n", r->n_sites,
			  plural((int64_t)r->n_sites, "site", "sites")) ||
	    row(out, heads, width))
		return -1;
	for (size_t i = 0; i < r->n_sites; i++) {
		const struct rp_site *s = &r->sites[i];
		const char *text[COLUMNS] = { s->method, s->location, s->kind };
		number_cells(s, cells);
		for (int k = TEXT_COLUMNS; k < COLUMNS; k++)
			text[k] = cells[k];
		if (row(out, text, width))
			return -1;
	}
	return 0;
}

/* A cycle as LockOrder.Describe gives it: "A.cs:1 then B.cs:2 (M), and in the other order at B.cs:3 then
 * A.cs:4 (M)", the methods "(M1 then M2)" when they differ; longer cycles list every edge, the last
 * after "and". */
static int describe_cycle(const struct rp_cycle *c, struct lt_buf *out)
{
	for (size_t i = 0; i < c->n_edges; i++) {
		const struct rp_edge *e = &c->edges[i];
		const char *sep = i == 0 ? "" : i < c->n_edges - 1 ? ", " : c->n_edges == 2 ? ", and in the other order at " : ", and ";
		int same = !strcmp(e->held_method, e->acquired_method);
		if (lt_buf_printf(out, "%s%s then %s (%s%s%s)", sep, e->held_location, e->acquired_location, e->held_method,
				  same ? "" : " then ", same ? "" : e->acquired_method))
			return -1;
	}
	return 0;
}

int rp_describe_deadlock(const struct rp_deadlock *d, struct lt_buf *out)
{
	for (size_t i = 0; i < d->n_edges; i++) {
		const struct rp_wait *e = &d->edges[i];
		if (lt_buf_printf(out, "%sthread %" PRId64 " waits at %s (%s) for the lock thread %" PRId64 " took at %s (%s)",
				  i ? "; " : "", e->thread, e->waits_location, e->waits_method, e->holder_thread,
				  e->held_location, e->held_method))
			return -1;
	}
	return 0;
}

/* Sites whose top stacks are shown at most, stacks per role, callers per stack (Summary.StackSites, StacksPerRole, StackCallers). */
#define STACK_SITES 3
#define STACKS_PER_ROLE 2
#define STACK_CALLERS 4

/* A file's name without its folders ('/' or '\\'). */
static const char *base_name(const char *path)
{
	const char *b = path;
	for (const char *p = path; *p; p++)
		if (*p == '/' || *p == '\\')
			b = p + 1;
	return b;
}

/* As Summary.StackLine: "M at L: 3 slow waits, 276.541 ms, from A (Program.cs:21) < B (Program.cs:30) < ...". */
static int stack_line(const struct rp_site *s, const struct rp_stack *st, struct lt_buf *out)
{
	int waits = st->role == RP_WAITER;
	char cost[32];

	ms(cost, sizeof cost, rp_stack_cost(st));
	if (lt_buf_printf(out, "  %s at %s: %" PRId64 " %s, %s ms,", s->method, s->location, st->count,
			  plural(st->count, waits ? "slow wait" : "slow hold", waits ? "slow waits" : "slow holds"), cost))
		return -1;
	if (st->n_frames < 2)
		return lt_buf_printf(out, " no caller seen\n");
	for (size_t k = 1; k < st->n_frames && k <= STACK_CALLERS; k++) {
		const struct rp_frame *f = &st->frames[k];
		if (lt_buf_printf(out, "%s%s", k == 1 ? " from " : " < ", f->method))
			return -1;
		if (f->line > 0 && lt_buf_printf(out, " (%s:%" PRId64 ")", base_name(f->file ? f->file : ""), f->line))
			return -1;
	}
	return lt_buf_printf(out, "%s\n", st->n_frames > STACK_CALLERS + 1 ? " < ..." : "");
}

/* After the table, as Summary.TopStacks: for the first STACK_SITES sites with stacks, the STACKS_PER_ROLE
 * costliest stacks of the waits, then of the holds (the order rp_sort gave them). */
static int top_stacks(const struct rp_report *r, struct lt_buf *out)
{
	size_t told = 0;
	for (size_t i = 0; i < r->n_sites && told < STACK_SITES; i++) {
		int per_role[2] = { 0, 0 };
		for (size_t k = 0; k < r->sites[i].n_stacks; k++) {
			const struct rp_stack *st = &r->sites[i].stacks[k];
			if (st->what != RP_STACK || per_role[st->role]++ >= STACKS_PER_ROLE)
				continue;
			if (told == 0 && lt_buf_printf(out, "top stacks (of each top site, the stacks of the longest waits, then of the "
							   "longest holds; callers innermost first):\n"))
				return -1;
			if (per_role[0] + per_role[1] == 1)
				told++;
			if (stack_line(&r->sites[i], st, out))
				return -1;
		}
	}
	return 0;
}

/* A site's holds or waits in progress as the report was written: how many, and the longest so far. */
struct in_progress {
	const char *heading; /* "held now" */
	const char *one, *many; /* "hold", "holds" */
	int64_t (*count)(const struct rp_site *);
	int64_t (*longest_ns)(const struct rp_site *);
};

static int64_t held_count(const struct rp_site *s) { return s->held_now; }
static int64_t held_longest(const struct rp_site *s) { return s->held_longest_ns; }
static int64_t waiting_count(const struct rp_site *s) { return s->waiting_now; }
static int64_t waiting_longest(const struct rp_site *s) { return s->waiting_longest_ns; }

static const struct in_progress held_kind = { "held now", "hold", "holds", held_count, held_longest };
static const struct in_progress waiting_kind = { "waiting now", "thread", "threads", waiting_count, waiting_longest };

static const struct in_progress *sorting; /* the kind longest_first compares (qsort has no context) */

static int longest_first(const void *pa, const void *pb)
{
	const struct rp_site *a = *(const struct rp_site *const *)pa, *b = *(const struct rp_site *const *)pb;
	int64_t la = sorting->longest_ns(a), lb = sorting->longest_ns(b);
	if (la != lb)
		return la > lb ? -1 : 1;
	return a < b ? -1 : a > b; /* then in the table's order */
}

/* After the table, as Summary.HeldNow and Summary.WaitingNow: the sites with holds (or waits: the threads
 * blocked as the report was written, how a deadlock or a lock never released looks) in progress, longest first. */
static int in_progress(const struct rp_report *r, const struct in_progress *kind, struct lt_buf *out)
{
	const struct rp_site **at;
	size_t n = 0;
	int rc = 0;

	for (size_t i = 0; i < r->n_sites; i++)
		n += kind->count(&r->sites[i]) > 0;
	if (n == 0)
		return 0;
	if (!(at = lt_calloc(n, sizeof *at)))
		return lt_nomem(NULL);
	n = 0;
	for (size_t i = 0; i < r->n_sites; i++)
		if (kind->count(&r->sites[i]) > 0)
			at[n++] = &r->sites[i];
	sorting = kind;
	qsort(at, n, sizeof *at, longest_first);
	rc = lt_buf_printf(out, "%s, as the %s written (longest first):\n", kind->heading,
			   r->n_processes == 1 ? "report was" : "reports were");
	for (size_t i = 0; i < n && rc == 0; i++) {
		int64_t count = kind->count(at[i]);
		char longest[32];

		ms(longest, sizeof longest, kind->longest_ns(at[i]));
		rc = lt_buf_printf(out, "  %s at %s: %" PRId64 " %s, the longest %s ms so far\n", at[i]->method,
				   at[i]->location, count, plural(count, kind->one, kind->many), longest);
	}
	free(at);
	return rc;
}

/* After the table, as Summary.Cycles: the potential deadlocks, the deadlocks, those not kept. */
static int rings(const struct rp_report *r, struct lt_buf *out)
{
	if (r->n_cycles && lt_buf_printf(out, "%zu %s (locks taken in opposite orders; sites that held, then sites that acquired):\n",
					 r->n_cycles, plural((int64_t)r->n_cycles, "potential deadlock", "potential deadlocks")))
		return -1;
	for (size_t i = 0; i < r->n_cycles; i++)
		if (lt_buf_printf(out, "  ") || describe_cycle(&r->cycles[i], out) || lt_buf_u8(out, '\n'))
			return -1;
	if (r->n_deadlocks && lt_buf_printf(out, "%zu %s (threads that waited for each other):\n", r->n_deadlocks,
					    plural((int64_t)r->n_deadlocks, "deadlock", "deadlocks")))
		return -1;
	for (size_t i = 0; i < r->n_deadlocks; i++)
		if (lt_buf_printf(out, "  ") || rp_describe_deadlock(&r->deadlocks[i], out) || lt_buf_u8(out, '\n'))
			return -1;
	if (r->deadlocks_not_kept &&
	    lt_buf_printf(out, "%" PRId64 " %s not kept (at most %d per process)\n", r->deadlocks_not_kept,
			  plural(r->deadlocks_not_kept, "more deadlock", "more deadlocks"), RP_DEADLOCKS_KEPT))
		return -1;
	return 0;
}

int rp_write_text(const struct rp_report *r, struct lt_buf *out)
{
	return table(r, out) || top_stacks(r, out) || in_progress(r, &held_kind, out) || in_progress(r, &waiting_kind, out) ||
			       rings(r, out) ? -1 : 0;
}
