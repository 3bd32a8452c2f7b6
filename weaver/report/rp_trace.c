/* rp_trace.c - the timelines as a Chrome Trace Event Format file (`locktime report --format trace`), with jansson. */
#include "rp_output.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A process group of the trace: a timeline's process, or a process of the reports without one. */
struct group {
	const char *name, *start_utc;
	int64_t pid;     /* the process's */
	int64_t tpid;    /* the trace's pid: the process's, made unique */
	double base_us;  /* its start_utc after the earliest one's, in microseconds */
	int64_t end_ns;  /* the longest report's duration */
	const struct rp_timeline *timeline; /* NULL: none */
};

/* Days from 1970-01-01 to the proleptic Gregorian date y-m-d (m 1-12, d 1-31), by whole 400-year eras of
 * 146,097 days counted from March (so that the leap day ends a year); no time zone, no C library call
 * (timegm is not everywhere: MinGW lacks it). */
static int64_t days_since_1970(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t year_of_era = y - era * 400;                      /* 0-399 */
	int64_t day_of_year = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1; /* 0-365, from March 1 */
	int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
	return era * 146097 + day_of_era - 719468; /* 719,468: days from 0000-03-01 to 1970-01-01 */
}

/* start_utc ("2026-12-06T09:30:00.005Z") as microseconds since 1970; 0 when it is not of that form. */
static double utc_us(const char *s)
{
	int y, mo, d, h, mi, sec, ms;

	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &y, &mo, &d, &h, &mi, &sec, &ms) != 7 || mo < 1 || mo > 12 ||
	    d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 60 || ms < 0)
		return 0;
	return ((double)days_since_1970(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec) * 1e6 + ms * 1e3;
}

static int same_process(const struct group *g, const char *name, const char *start_utc, int64_t pid)
{
	return g->pid == pid && !strcmp(g->name, name) && !strcmp(g->start_utc, start_utc);
}

/* The trace's pid for a process of pid `pid`, group k of g: its own, unless an earlier group (another process
 * that had the pid before) took it. */
static int64_t unique_pid(const struct group *g, size_t k, int64_t pid)
{
	for (size_t j = 0; j < k; j++)
		if (g[j].tpid == pid)
			return unique_pid(g, k, pid + (INT64_C(1) << 32));
	return pid;
}

/* One group per process of r (the same pid, start_utc and name: one), in the order read; *n their number. */
static struct group *groups_of(const struct rp_report *r, size_t *n)
{
	struct group *g = lt_calloc(r->n_processes + r->n_timelines + 1, sizeof *g);
	double earliest = 0;
	*n = 0;
	if (!g) {
		lt_nomem(NULL);
		return NULL;
	}
	for (size_t i = 0; i < r->n_processes + r->n_timelines; i++) {
		const struct rp_process *p = i < r->n_processes ? &r->processes[i] : NULL;
		const struct rp_timeline *t = p ? NULL : &r->timelines[i - r->n_processes];
		const char *name = p ? p->name : t->name, *start = p ? p->start_utc : t->start_utc;
		int64_t pid = p ? p->pid : t->pid;
		size_t k = 0;
		while (k < *n && !same_process(&g[k], name, start, pid))
			k++;
		if (k == *n) {
			g[k].name = name;
			g[k].start_utc = start;
			g[k].pid = pid;
			g[k].tpid = unique_pid(g, k, pid);
			(*n)++;
		}
		if (p && p->duration_ns > g[k].end_ns)
			g[k].end_ns = p->duration_ns;
		if (t)
			g[k].timeline = t;
	}
	for (size_t k = 0; k < *n; k++)
		if (utc_us(g[k].start_utc) > 0 && (earliest == 0 || utc_us(g[k].start_utc) < earliest))
			earliest = utc_us(g[k].start_utc);
	for (size_t k = 0; k < *n; k++)
		g[k].base_us = utc_us(g[k].start_utc) > 0 ? utc_us(g[k].start_utc) - earliest : 0;
	return g;
}

/* Events by thread, then by acquisition: the order of the thread tracks and of the holds looked up. */
static int by_thread(const void *pa, const void *pb)
{
	const struct rp_event *a = *(const struct rp_event *const *)pa, *b = *(const struct rp_event *const *)pb;
	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	return a->acquired_ns < b->acquired_ns ? -1 : a->acquired_ns > b->acquired_ns;
}

/* t's events as pointers in by_thread order (NULL with LT_E_NOMEM; an empty timeline gives a free-able pointer). */
static const struct rp_event **by_threads(const struct rp_timeline *t)
{
	const struct rp_event **x = lt_calloc(t->n_events + 1, sizeof *x);
	if (!x) {
		lt_nomem(NULL);
		return NULL;
	}
	for (size_t i = 0; i < t->n_events; i++)
		x[i] = &t->events[i];
	if (t->n_events > 1)
		qsort(x, t->n_events, sizeof *x, by_thread);
	return x;
}

/* Appends `e` to `events` (taking its reference); -1 with LT_E_NOMEM when either is NULL or it fails. */
static int add(json_t *events, json_t *e)
{
	if (!e || json_array_append_new(events, e))
		return lt_nomem(NULL);
	return 0;
}

static json_t *metadata(const char *what, int64_t pid, int64_t tid, const char *name)
{
	return json_pack("{s:s, s:s, s:I, s:I, s:{s:s}}", "ph", "M", "name", what, "pid", (json_int_t)pid, "tid",
			 (json_int_t)tid, "args", "name", name);
}

/* The process's name (the viewers add its pid) and one thread_name per thread of its timeline, `x` its events
 * by_thread (its name, else "thread N"). */
static int name_tracks(json_t *events, const struct group *g, const struct rp_event *const *x)
{
	char text[32];
	size_t n = g->timeline ? g->timeline->n_events : 0;
	if (add(events, metadata("process_name", g->tpid, 0, g->name)))
		return -1;
	for (size_t i = 0, next; i < n; i = next) {
		const char *name = NULL;
		for (next = i; next < n && x[next]->thread == x[i]->thread; next++)
			if (!name)
				name = x[next]->thread_name;
		snprintf(text, sizeof text, "thread %lld", (long long)x[i]->thread);
		if (add(events, metadata("thread_name", g->tpid, x[i]->thread, name ? name : text)))
			return -1;
	}
	return 0;
}

/* A complete event ("ph": "X") of `e`'s wait or hold, named "wait M (L)" / "hold M (L)"; no args (speedscope
 * shows them in every frame's name, and the name says it all).  A wait followed by its hold ends 1 ns before the
 * hold begins: speedscope turns complete events into begin and end, and an end at the next begin's time (or, by
 * the rounding of ts + dur, a hair after it) ends up after that begin - the two then overlap, and it warns. */
static json_t *slice(const struct group *g, const struct rp_event *e, int hold)
{
	char name[512];
	int64_t from = hold ? e->acquired_ns : e->wait_from_ns, to = hold ? e->released_ns : e->acquired_ns;
	if (!hold && e->released_ns >= 0 && to - from > 1)
		to--;
	snprintf(name, sizeof name, "%s%s %s (%s)", hold ? "hold" : "wait", e->acquired ? "" : ", not acquired", e->method,
		 e->location);
	return json_pack("{s:s, s:s, s:s, s:f, s:f, s:I, s:I}", "ph", "X", "name", name, "cat", hold ? "hold" : "wait", "ts",
			 g->base_us + from / 1e3, "dur", (to - from) / 1e3, "pid", (json_int_t)g->tpid, "tid", (json_int_t)e->thread);
}

/* The event of thread `thread`'s hold that began at `from_ns` among the n events x (by_thread), or NULL. */
static const struct rp_event *hold_of(const struct rp_event *const *x, size_t n, int64_t thread, int64_t from_ns)
{
	struct rp_event key;
	const struct rp_event *k = &key;
	key.thread = thread;
	key.acquired_ns = from_ns;
	const struct rp_event *const *at = bsearch(&k, x, n, sizeof *x, by_thread);
	if (!at)
		return NULL;
	while (at > x && by_thread(at - 1, &k) == 0) /* the first of the equal ones, then the one that held */
		at--;
	for (; at < x + n && by_thread(at, &k) == 0; at++)
		if ((*at)->released_ns >= 0)
			return *at;
	return NULL;
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* The flow (an arrow) from `hold`, inside its slice just before the wait ended, to the end of wait `w` ("bp": "e"). */
static int flow(json_t *events, const struct group *g, const struct rp_event *hold, const struct rp_event *w, int64_t id)
{
	int64_t to = w->acquired_ns - 1000 > w->wait_from_ns ? w->acquired_ns - 1000 : w->wait_from_ns;
	int64_t from = clamp(to, hold->acquired_ns, hold->released_ns);
	if (add(events, json_pack("{s:s, s:s, s:s, s:I, s:f, s:I, s:I}", "ph", "s", "name", "waited behind", "cat", "blame",
				  "id", (json_int_t)id, "ts", g->base_us + from / 1e3, "pid", (json_int_t)g->tpid, "tid",
				  (json_int_t)hold->thread)))
		return -1;
	return add(events, json_pack("{s:s, s:s, s:s, s:I, s:f, s:I, s:I, s:s}", "ph", "f", "name", "waited behind", "cat",
				     "blame", "id", (json_int_t)id, "ts", g->base_us + to / 1e3, "pid", (json_int_t)g->tpid,
				     "tid", (json_int_t)w->thread, "bp", "e"));
}

/* Every slice of g's timeline, and an arrow from each hold a wait waited behind that the timeline has (x: by_thread). */
static int timeline_events(json_t *events, const struct group *g, const struct rp_event *const *x, int64_t *flows)
{
	const struct rp_timeline *t = g->timeline;
	for (size_t i = 0; t && i < t->n_events; i++) {
		const struct rp_event *e = &t->events[i];
		if (e->acquired_ns > e->wait_from_ns && add(events, slice(g, e, 0)))
			return -1;
		if (e->released_ns >= 0 && add(events, slice(g, e, 1)))
			return -1;
		for (size_t k = 0; k < e->n_behind && e->acquired_ns > e->wait_from_ns; k++) {
			const struct rp_event *h = hold_of(x, t->n_events, e->behind[k].thread, e->behind[k].hold_from_ns);
			if (h && h != e && flow(events, g, h, e, ++*flows))
				return -1;
		}
	}
	return 0;
}

/* An instant event ("ph": "i") at the end of group g (its longest report), of scope "p" (the process) or "g". */
static int instant(json_t *events, const struct group *g, const char *scope, const char *name, const char *what)
{
	return add(events, json_pack("{s:s, s:s, s:s, s:f, s:I, s:I, s:s, s:{s:s}}", "ph", "i", "name", name, "cat",
				     "deadlock", "ts", g->base_us + g->end_ns / 1e3, "pid", (json_int_t)g->tpid, "tid",
				     (json_int_t)0, "s", scope, "args", "what", what));
}

/* Each deadlock in its process's group, each potential deadlock (a cycle: no process known) in the first. */
static int deadlock_events(json_t *events, const struct rp_report *r, const struct group *g, size_t n_groups)
{
	struct lt_buf text = LT_BUF_INIT;
	int rc = 0;
	for (size_t i = 0; i < r->n_deadlocks && !rc; i++) {
		const struct rp_process *p = &r->processes[r->deadlocks[i].process];
		size_t k = 0;
		while (k + 1 < n_groups && !same_process(&g[k], p->name, p->start_utc, p->pid))
			k++;
		text.len = 0;
		rc = rp_describe_deadlock(&r->deadlocks[i], &text) || lt_buf_put(&text, "", 1) ||
		     instant(events, &g[k], "p", "deadlock", (const char *)text.data);
	}
	for (size_t i = 0; i < r->n_cycles && !rc && n_groups; i++) {
		const struct rp_cycle *c = &r->cycles[i];
		text.len = 0;
		for (size_t e = 0; e < c->n_edges && !rc; e++)
			rc = lt_buf_printf(&text, "%sthread %s: holding %s @ %s -> acquires %s @ %s", e ? "; " : "",
					   c->edges[e].thread, c->edges[e].held_method, c->edges[e].held_location,
					   c->edges[e].acquired_method, c->edges[e].acquired_location);
		rc = rc || lt_buf_put(&text, "", 1) || instant(events, &g[0], "g", "potential deadlock", (const char *)text.data);
	}
	lt_buf_free(&text);
	return rc ? -1 : 0;
}

int rp_write_trace(const struct rp_report *r, struct lt_buf *out)
{
	size_t n_groups;
	int64_t flows = 0;
	struct group *g = groups_of(r, &n_groups);
	json_t *events = json_array(), *doc = NULL;
	char *text = NULL;
	int rc = -1;

	if (!g || !events)
		goto done;
	for (size_t k = 0; k < n_groups; k++) {
		static const struct rp_timeline none;
		const struct rp_event **x = by_threads(g[k].timeline ? g[k].timeline : &none);
		int bad = !x || name_tracks(events, &g[k], x) || timeline_events(events, &g[k], x, &flows);
		free(x);
		if (bad)
			goto done;
	}
	if (deadlock_events(events, r, g, n_groups))
		goto done;
	doc = json_pack("{s:O, s:s}", "traceEvents", events, "displayTimeUnit", "ms");
	if (!doc || !(text = json_dumps(doc, JSON_COMPACT)) || lt_buf_put(out, text, strlen(text)) || lt_buf_put(out, "\n", 1)) {
		lt_nomem(NULL);
		goto done;
	}
	rc = 0;
done:
	free(text);
	json_decref(doc);
	json_decref(events);
	free(g);
	return rc;
}
