/* rp_timeline.c - the processes' timelines ("timeline", version 3): merged per process, freed (read in rp_read.c). */
#include "rp_report.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <stdlib.h>
#include <string.h>

static int cmp_i64(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

/* By wait start, then thread, acquisition, method and location: equal means the same event. */
static int by_start(const void *pa, const void *pb)
{
	const struct rp_event *a = pa, *b = pb;
	int c = cmp_i64(a->wait_from_ns, b->wait_from_ns);
	if (!c)
		c = cmp_i64(a->thread, b->thread);
	if (!c)
		c = cmp_i64(a->acquired_ns, b->acquired_ns);
	if (!c)
		c = strcmp(a->method, b->method);
	return c ? c : strcmp(a->location, b->location);
}

static void free_event(struct rp_event *e)
{
	free(e->thread_name);
	free(e->assembly);
	free(e->method);
	free(e->location);
}

static void free_timeline(struct rp_timeline *t)
{
	for (size_t i = 0; i < t->n_events; i++)
		free_event(&t->events[i]);
	free(t->events);
	free(t->name);
	free(t->start_utc);
}

/* Adds b's events to a's (b left without events), each once, in by_start order. */
static int add_events(struct rp_timeline *a, struct rp_timeline *b)
{
	size_t n = a->n_events + b->n_events, out = 0;
	struct rp_event *all = n ? lt_realloc(a->events, n * sizeof *all) : a->events;
	if (n && !all)
		return lt_nomem(NULL);
	if (b->n_events) /* an empty timeline has no array */
		memcpy(all + a->n_events, b->events, b->n_events * sizeof *all);
	a->events = all;
	b->n_events = 0;
	if (n > 1)
		qsort(all, n, sizeof *all, by_start);
	for (size_t i = 0; i < n; i++) {
		if (out > 0 && by_start(&all[out - 1], &all[i]) == 0)
			free_event(&all[i]);
		else
			all[out++] = all[i];
	}
	a->n_events = out;
	if (a->capacity < b->capacity)
		a->capacity = b->capacity;
	if (a->added < b->added)
		a->added = b->added;
	return 0;
}

int rp_timelines_merge(struct rp_report *r, struct rp_report *one)
{
	for (size_t i = 0; i < one->n_timelines; i++) {
		struct rp_timeline *t = &one->timelines[i], *same = NULL;
		for (size_t k = 0; k < r->n_timelines && !same; k++)
			if (r->timelines[k].pid == t->pid && !strcmp(r->timelines[k].start_utc, t->start_utc) &&
			    !strcmp(r->timelines[k].name, t->name))
				same = &r->timelines[k];
		if (!same) { /* a new process: its events go through add_events too (a report by hand may repeat one) */
			struct rp_timeline *all = lt_realloc(r->timelines, (r->n_timelines + 1) * sizeof *all);
			if (!all)
				return lt_nomem(NULL);
			r->timelines = all;
			same = &all[r->n_timelines++];
			memset(same, 0, sizeof *same);
			same->name = t->name;
			same->start_utc = t->start_utc;
			same->pid = t->pid;
			t->name = t->start_utc = NULL;
		}
		if (add_events(same, t))
			return -1;
	}
	return 0;
}

void rp_timelines_free(struct rp_report *r)
{
	for (size_t i = 0; i < r->n_timelines; i++)
		free_timeline(&r->timelines[i]);
	free(r->timelines);
	r->timelines = NULL;
	r->n_timelines = 0;
}
