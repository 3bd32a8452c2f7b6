/* rp_check.c - `locktime check`: a canonical error line per site over a limit and per deadlock. */
#include "rp_output.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* One LT200/LT201 line for site s if d's maximum is at or over limit_ns; `counts` names what
 * d's histogram counts ("acquisitions" for holds, "waits" for waits: failed tries' too). */
static int check_one(const struct rp_site *s, const struct rp_durations *d, int64_t limit_ns, int code,
		     const char *verb, const char *counts, struct lt_buf *out, size_t *over)
{
	int64_t least, most, total = 0;
	char counted[96];

	if (limit_ns < 0 || d->max < limit_ns)
		return 0;
	if (rp_count_over(d, limit_ns, &least, &most) == 0) {
		for (size_t i = 0; i < d->n_buckets; i++)
			total += d->buckets[i].count;
		if (least == most)
			snprintf(counted, sizeof counted, ", %" PRId64 " of %" PRId64 " %s over", least, total, counts);
		else
			snprintf(counted, sizeof counted, ", %" PRId64 " to %" PRId64 " of %" PRId64 " %s over",
				 least, most, total, counts);
	} else {
		snprintf(counted, sizeof counted, ", %" PRId64 " acquisitions", s->acquisitions);
	}
	if (s->file ? lt_buf_printf(out, "%s(%" PRId64 "): ", s->file, s->line) : lt_buf_printf(out, "%s: ", s->assembly))
		return -1;
	if (lt_buf_printf(out, "error LT%03d: lock %s %.1f ms, limit %g ms (%s%s%s%s)\n", code, verb, (double)d->max / 1e6,
			  (double)limit_ns / 1e6, s->method, s->file ? "" : " at ", s->file ? "" : s->location, counted))
		return -1;
	(*over)++;
	return 0;
}

/* One LT201 line for site s when threads were still waiting there as the report was written, the longest at or
 * over limit_ns, and no finished wait was (check_one said nothing): a deadlock's waiters, those behind a lock never
 * released. */
static int check_waiting(const struct rp_site *s, int64_t limit_ns, struct lt_buf *out, size_t *over)
{
	if (limit_ns < 0 || s->waiting_now <= 0 || s->waiting_longest_ns < limit_ns || s->wait.max >= limit_ns)
		return 0;
	if (s->file ? lt_buf_printf(out, "%s(%" PRId64 "): ", s->file, s->line) : lt_buf_printf(out, "%s: ", s->assembly))
		return -1;
	if (lt_buf_printf(out, "error LT%03d: lock waited %.1f ms so far, limit %g ms (%s%s%s, %" PRId64 " %s waiting as the report was written)\n",
			  RP_LT_WAIT, (double)s->waiting_longest_ns / 1e6, (double)limit_ns / 1e6, s->method, s->file ? "" : " at ",
			  s->file ? "" : s->location, s->waiting_now, s->waiting_now == 1 ? "thread" : "threads"))
		return -1;
	(*over)++;
	return 0;
}

/* The report's site of this method and location that has a source file, or NULL. */
static const struct rp_site *site_with_file(const struct rp_report *r, const char *method, const char *location)
{
	for (size_t i = 0; i < r->n_sites; i++) {
		const struct rp_site *s = &r->sites[i];
		if (s->file && !strcmp(s->method, method) && !strcmp(s->location, location))
			return s;
	}
	return NULL;
}

/* The LT202 line of deadlock d, on a source line: where its first thread waits, or - a site that never
 * acquired is not among the report's sites - where the lock it waits for was taken; else on the report
 * file it came from. */
static int check_deadlock(const struct rp_report *r, const struct rp_deadlock *d, struct lt_buf *out, size_t *over)
{
	const struct rp_wait *first = &d->edges[0];
	const struct rp_site *at = site_with_file(r, first->waits_method, first->waits_location);
	const struct rp_process *p = &r->processes[d->process];

	if (!at)
		at = site_with_file(r, first->held_method, first->held_location);
	if (at ? lt_buf_printf(out, "%s(%" PRId64 "): ", at->file, at->line) : lt_buf_printf(out, "%s: ", p->path ? p->path : p->name))
		return -1;
	if (lt_buf_printf(out, "error LT%03d: deadlock: ", RP_LT_DEADLOCK) || rp_describe_deadlock(d, out) || lt_buf_u8(out, '\n'))
		return -1;
	(*over)++;
	return 0;
}

int rp_write_check(const struct rp_report *r, const struct rp_limits *limits, struct lt_buf *out, size_t *over)
{
	*over = 0;
	for (size_t i = 0; i < r->n_sites; i++) {
		const struct rp_site *s = &r->sites[i];
		/* no hold to be over a limit: none released (a failed try's site, a lock never released so far),
		 * or not measured (a counting semaphore: hold_applies false) */
		if ((s->acquisitions > 0 && !s->hold_na && check_one(s, &s->hold, limits->max_hold_ns, RP_LT_HOLD, "held", "acquisitions", out, over)) ||
		    check_one(s, &s->wait, limits->max_wait_ns, RP_LT_WAIT, "waited", "waits", out, over) ||
		    check_waiting(s, limits->max_wait_ns, out, over))
			return -1;
	}
	for (size_t i = 0; limits->deadlocks && i < r->n_deadlocks; i++)
		if (check_deadlock(r, &r->deadlocks[i], out, over))
			return -1;
	return 0;
}
