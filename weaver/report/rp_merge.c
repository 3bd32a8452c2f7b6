/* rp_merge.c - adding reports up (sites of the same assembly, method and location become one, their stacks too),
 * the histogram arithmetic the run-time uses (weaver/runtime/Recording/Histogram.cs), ordering, freeing. */
#include "rp_report.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* a += b for counts and nanoseconds: -1 with LT_E_LIMIT past `limit`. */
static int add(int64_t *a, int64_t b, int64_t limit, const char *what)
{
	int64_t s;
	if (__builtin_add_overflow(*a, b, &s) || s > limit)
		return lt_error_set(LT_E_LIMIT, "%s: the reports add up to more than a report can hold", what);
	*a = s;
	return 0;
}

#define NS_LIMIT ((int64_t)(RP_MAX_MS * 1e6))

/* The run-time's last bucket ends at 1000 s and also holds everything above. */
#define LAST_UPPER_NS INT64_C(1000000000000)

int64_t rp_bucket_lower(int64_t upper_ns)
{
	int64_t p = 1;
	if (upper_ns <= 100)
		return 0;
	while (p < upper_ns && p <= INT64_MAX / 10)
		p *= 10;
	return upper_ns - p / 100;
}

int64_t rp_percentile(const struct rp_durations *d, double fraction)
{
	int64_t n = 0, seen = 0, rank;
	for (size_t i = 0; i < d->n_buckets; i++)
		n += d->buckets[i].count;
	if (n == 0)
		return 0;
	rank = (int64_t)ceil(fraction * (double)n);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	for (size_t i = 0; i < d->n_buckets; i++) {
		const struct rp_bucket *b = &d->buckets[i];
		int64_t lower = rp_bucket_lower(b->upper_ns), middle;
		seen += b->count;
		if (rank > seen)
			continue;
		middle = lower == 0 ? 50 : lower + (b->upper_ns - lower) / 2;
		/* The run-time's last bucket (ending at 1000 s) is open-ended: its values are the maximum. */
		if (b->upper_ns >= LAST_UPPER_NS && d->max >= b->upper_ns)
			return d->max;
		return middle < d->max ? middle : d->max;
	}
	return d->max;
}

int rp_count_over(const struct rp_durations *d, int64_t limit_ns, int64_t *at_least, int64_t *at_most)
{
	*at_least = *at_most = 0;
	if (!d->has_histogram)
		return -1;
	for (size_t i = 0; i < d->n_buckets; i++) {
		const struct rp_bucket *b = &d->buckets[i];
		if (rp_bucket_lower(b->upper_ns) >= limit_ns)
			*at_least += b->count;
		else if (b->upper_ns > limit_ns || (b->upper_ns >= LAST_UPPER_NS && d->max >= limit_ns))
			*at_most += b->count; /* straddles the limit (the last bucket is open-ended) */
	}
	/* A value at or over the limit exists when the maximum is: the straddling bucket holds it. */
	*at_most += *at_least;
	return 0;
}

/* Two ascending bucket lists added into a new one in d (a's buckets replaced). */
static int add_buckets(struct rp_durations *a, const struct rp_durations *b)
{
	struct rp_bucket *out;
	size_t i = 0, k = 0, n = 0;
	if (!b->has_histogram || !a->has_histogram) {
		/* A sum of a histogram and none is no histogram: its percentiles would be wrong. */
		free(a->buckets);
		a->buckets = NULL;
		a->n_buckets = 0;
		a->has_histogram = 0;
		return 0;
	}
	if (b->n_buckets == 0)
		return 0;
	out = lt_calloc(a->n_buckets + b->n_buckets, sizeof *out);
	if (!out)
		return lt_nomem(NULL);
	while (i < a->n_buckets || k < b->n_buckets) {
		if (k == b->n_buckets || (i < a->n_buckets && a->buckets[i].upper_ns < b->buckets[k].upper_ns))
			out[n++] = a->buckets[i++];
		else if (i == a->n_buckets || b->buckets[k].upper_ns < a->buckets[i].upper_ns)
			out[n++] = b->buckets[k++];
		else {
			out[n] = a->buckets[i++];
			if (add(&out[n].count, b->buckets[k++].count, RP_MAX_COUNT, "histogram")) {
				free(out);
				return -1;
			}
			n++;
		}
	}
	free(a->buckets);
	a->buckets = out;
	a->n_buckets = n;
	return 0;
}

static int add_durations(struct rp_durations *a, const struct rp_durations *b)
{
	if (add(&a->total, b->total, NS_LIMIT, "total") || add_buckets(a, b))
		return -1;
	if (b->max > a->max)
		a->max = b->max;
	if (a->has_histogram) {
		a->p50 = rp_percentile(a, 0.50);
		a->p90 = rp_percentile(a, 0.90);
		a->p99 = rp_percentile(a, 0.99);
	} else {
		/* Without histograms the percentiles of a sum are unknown: the larger of the two bounds them. */
		a->p50 = a->p50 > b->p50 ? a->p50 : b->p50;
		a->p90 = a->p90 > b->p90 ? a->p90 : b->p90;
		a->p99 = a->p99 > b->p99 ? a->p99 : b->p99;
	}
	return 0;
}

static void free_blame(struct rp_blame *b)
{
	free(b->method);
	free(b->location);
}

/* Element e (`size` bytes) moved to the end of the array *arr of *n: *arr grown by one, e zeroed (what
 * it owned is the array's now).  -1 with LT_E_NOMEM (the array as before). */
static int append(void **arr, size_t *n, void *e, size_t size)
{
	char *grown = lt_realloc(*arr, (*n + 1) * size);
	if (!grown)
		return lt_nomem(NULL);
	*arr = grown;
	memcpy(grown + *n * size, e, size);
	(*n)++;
	memset(e, 0, size);
	return 0;
}

/* b's waited_behind entries added to a's (the same holder method and location adds up); b's
 * strings move into a. */
static int add_blame(struct rp_site *a, struct rp_site *b)
{
	if (b->has_blame) {
		if (add(&a->blamed_wait_ns, b->blamed_wait_ns, NS_LIMIT, "blamed_wait_ms"))
			return -1;
		a->has_blame = 1;
	}
	for (size_t k = 0; k < b->n_behind; k++) {
		struct rp_blame *e = &b->behind[k], *same = NULL;
		for (size_t i = 0; i < a->n_behind && !same; i++)
			if (!strcmp(a->behind[i].method, e->method) && !strcmp(a->behind[i].location, e->location))
				same = &a->behind[i];
		if (same) {
			if (add(&same->wait_ns, e->wait_ns, NS_LIMIT, "waited_behind") ||
			    add(&same->count, e->count, RP_MAX_COUNT, "waited_behind"))
				return -1;
			continue;
		}
		if (append((void **)&a->behind, &a->n_behind, e, sizeof *e))
			return -1;
	}
	return 0;
}

/* Two optional strings equal (NULL equals NULL only). */
static int same_text(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Whether a and b are the same stack of the same role: what they are, and every frame. */
static int same_stack(const struct rp_stack *a, const struct rp_stack *b)
{
	if (a->role != b->role || a->what != b->what || a->n_frames != b->n_frames)
		return 0;
	for (size_t i = 0; i < a->n_frames; i++)
		if (!same_text(a->frames[i].method, b->frames[i].method) || !same_text(a->frames[i].file, b->frames[i].file) ||
		    a->frames[i].line != b->frames[i].line)
			return 0;
	return 1;
}

/* b's stacks added to a's: the same role, kind and frames add up, others are appended; b's strings
 * move into a. */
static int add_stacks(struct rp_site *a, struct rp_site *b)
{
	for (size_t k = 0; k < b->n_stacks; k++) {
		struct rp_stack *e = &b->stacks[k], *same = NULL;
		for (size_t i = 0; i < a->n_stacks && !same; i++)
			if (same_stack(&a->stacks[i], e))
				same = &a->stacks[i];
		if (same) {
			if (add(&same->count, e->count, RP_MAX_COUNT, "stacks") || add(&same->wait_ns, e->wait_ns, NS_LIMIT, "stacks") ||
			    add(&same->hold_ns, e->hold_ns, NS_LIMIT, "stacks"))
				return -1;
			continue;
		}
		if (append((void **)&a->stacks, &a->n_stacks, e, sizeof *e))
			return -1;
	}
	return 0;
}

/* Site b added into a (same key). */
static int add_site(struct rp_site *a, struct rp_site *b)
{
	/* The hold is not measured only where no part measured it; a part with no acquisition says nothing of it. */
	int hold_na = !b->acquisitions ? a->hold_na : !a->acquisitions ? b->hold_na : a->hold_na && b->hold_na;
	if (add(&a->acquisitions, b->acquisitions, RP_MAX_COUNT, a->method) ||
	    add(&a->contended, b->contended, RP_MAX_COUNT, a->method) ||
	    add(&a->failed, b->failed, RP_MAX_COUNT, a->method) || add(&a->reentries, b->reentries, RP_MAX_COUNT, a->method) ||
	    add_durations(&a->wait, &b->wait) ||
	    add_durations(&a->hold, &b->hold) || add_blame(a, b) || add(&a->held_now, b->held_now, RP_MAX_COUNT, a->method) ||
	    add(&a->waiting_now, b->waiting_now, RP_MAX_COUNT, a->method) || add_stacks(a, b))
		return -1;
	if (b->held_longest_ns > a->held_longest_ns)
		a->held_longest_ns = b->held_longest_ns;
	if (b->waiting_longest_ns > a->waiting_longest_ns)
		a->waiting_longest_ns = b->waiting_longest_ns;
	a->hold_na = hold_na;
	if (!a->file && b->file) {
		a->file = b->file;
		a->line = b->line;
		b->file = NULL;
	}
	return 0;
}

static int by_key(const void *pa, const void *pb)
{
	const struct rp_site *a = pa, *b = pb;
	int c = strcmp(a->assembly, b->assembly);
	if (!c)
		c = strcmp(a->method, b->method);
	return c ? c : strcmp(a->location, b->location);
}

static void free_durations(struct rp_durations *d)
{
	free(d->buckets);
	d->buckets = NULL;
}

static void free_site(struct rp_site *s)
{
	free(s->assembly);
	free(s->method);
	free(s->location);
	free(s->file);
	free(s->kind);
	free_durations(&s->wait);
	free_durations(&s->hold);
	for (size_t i = 0; i < s->n_behind; i++)
		free_blame(&s->behind[i]);
	free(s->behind);
	rp_stacks_free(s);
}

static void free_cycle(struct rp_cycle *c)
{
	for (size_t i = 0; i < c->n_edges; i++) {
		struct rp_edge *e = &c->edges[i];
		free(e->held_method);
		free(e->held_location);
		free(e->acquired_method);
		free(e->acquired_location);
		free(e->thread);
	}
	free(c->edges);
}

static void free_deadlock(struct rp_deadlock *d)
{
	for (size_t i = 0; i < d->n_edges; i++) {
		struct rp_wait *e = &d->edges[i];
		free(e->waits_method);
		free(e->waits_location);
		free(e->held_method);
		free(e->held_location);
	}
	free(d->edges);
}

/* Site (m1, l1) is site (m2, l2): the same method and location. */
static int same_site(const char *m1, const char *l1, const char *m2, const char *l2)
{
	return !strcmp(m1, m2) && !strcmp(l1, l2);
}

/* The same cycle: the same edges in the same order (threads aside). */
static int same_cycle(const void *pa, const void *pb)
{
	const struct rp_cycle *a = pa, *b = pb;
	if (a->n_edges != b->n_edges)
		return 0;
	for (size_t i = 0; i < a->n_edges; i++) {
		const struct rp_edge *x = &a->edges[i], *y = &b->edges[i];
		if (!same_site(x->held_method, x->held_location, y->held_method, y->held_location) ||
		    !same_site(x->acquired_method, x->acquired_location, y->acquired_method, y->acquired_location))
			return 0;
	}
	return 1;
}

/* How many of d's edges wait at the site where e waits and are behind a lock taken at e's held site. */
static size_t pairs_like(const struct rp_deadlock *d, const struct rp_wait *e)
{
	size_t n = 0;
	for (size_t i = 0; i < d->n_edges; i++)
		n += same_site(d->edges[i].waits_method, d->edges[i].waits_location, e->waits_method, e->waits_location) &&
		     same_site(d->edges[i].held_method, d->edges[i].held_location, e->held_method, e->held_location);
	return n;
}

/* The same deadlock, as the run-time tells them apart (Deadlocks.Keep): the same (held, waits) site
 * pairs, as many times each, in any order; threads aside. */
static int same_deadlock(const void *pa, const void *pb)
{
	const struct rp_deadlock *a = pa, *b = pb;
	if (a->n_edges != b->n_edges)
		return 0;
	for (size_t i = 0; i < a->n_edges; i++)
		if (pairs_like(a, &a->edges[i]) != pairs_like(b, &a->edges[i]))
			return 0;
	return 1;
}

/* The `n_from` items of `from` (`size` bytes each) that `same` finds in none of the *n_to at *to appended
 * there (the others left in `from`, which its owner frees); each one moved is zeroed in `from`. */
static int add_new(void **to, size_t *n_to, void *from, size_t n_from, size_t size,
		   int (*same)(const void *, const void *))
{
	for (size_t k = 0; k < n_from; k++) {
		char *item = (char *)from + k * size;
		int known = 0;
		for (size_t i = 0; i < *n_to && !known; i++)
			known = same((const char *)*to + i * size, item);
		if (!known && append(to, n_to, item, size))
			return -1;
	}
	return 0;
}

/* one's cycles and deadlocks not yet in r into r; a deadlock names its process by its index in r
 * (`first`: where one's processes begin there). */
static int merge_rings(struct rp_report *r, struct rp_report *one, size_t first)
{
	void *cycles = r->cycles, *deadlocks = r->deadlocks;
	int rc;
	if (add(&r->deadlocks_not_kept, one->deadlocks_not_kept, RP_MAX_COUNT, "lock_order.deadlocks_not_kept"))
		return -1;
	for (size_t k = 0; k < one->n_deadlocks; k++)
		one->deadlocks[k].process += first;
	rc = add_new(&cycles, &r->n_cycles, one->cycles, one->n_cycles, sizeof *one->cycles, same_cycle);
	r->cycles = cycles;
	if (rc == 0)
		rc = add_new(&deadlocks, &r->n_deadlocks, one->deadlocks, one->n_deadlocks, sizeof *one->deadlocks,
			     same_deadlock);
	r->deadlocks = deadlocks;
	return rc;
}

int rp_merge(struct rp_report *r, struct rp_report *one)
{
	size_t n = r->n_sites + one->n_sites, out = 0, first = r->n_processes;
	struct rp_site *all;
	struct rp_process *procs;

	if (n > RP_MAX_SITES)
		return lt_error_set(LT_E_LIMIT, "sites: %zu sites in all, more than %d", n, RP_MAX_SITES);
	if (add(&r->dropped_lines, one->dropped_lines, RP_MAX_COUNT, "dropped_lines") ||
	    add(&r->unwritten_lines, one->unwritten_lines, RP_MAX_COUNT, "unwritten_lines"))
		return -1;
	procs = lt_realloc(r->processes, (r->n_processes + one->n_processes) * sizeof *procs);
	if (!procs)
		return lt_nomem(NULL);
	r->processes = procs;
	memcpy(procs + r->n_processes, one->processes, one->n_processes * sizeof *procs);
	r->n_processes += one->n_processes;
	one->n_processes = 0;
	if (n) {
		all = lt_realloc(r->sites, n * sizeof *all);
		if (!all)
			return lt_nomem(NULL);
		if (one->n_sites) /* a report without sites has no array */
			memcpy(all + r->n_sites, one->sites, one->n_sites * sizeof *all);
		r->sites = all;
		r->n_sites = n;
		one->n_sites = 0;
		qsort(all, n, sizeof *all, by_key);
		for (size_t i = 0; i < n; i++) {
			if (out > 0 && by_key(&all[out - 1], &all[i]) == 0) {
				int rc = add_site(&all[out - 1], &all[i]);
				free_site(&all[i]);
				if (rc) {
					/* keep r whole: close the gap left by the sites already combined */
					memmove(&all[out], &all[i + 1], (n - i - 1) * sizeof *all);
					r->n_sites = out + (n - i - 1);
					return -1;
				}
			} else {
				all[out++] = all[i];
			}
		}
		r->n_sites = out;
	}
	return merge_rings(r, one, first) || rp_timelines_merge(r, one) ? -1 : 0;
}

static int by_cost(const void *pa, const void *pb)
{
	const struct rp_site *a = pa, *b = pb;
	if (a->wait.total != b->wait.total)
		return a->wait.total > b->wait.total ? -1 : 1;
	if (a->hold.total != b->hold.total)
		return a->hold.total > b->hold.total ? -1 : 1;
	return by_key(a, b);
}

void rp_sort(struct rp_report *r)
{
	if (r->n_sites)
		qsort(r->sites, r->n_sites, sizeof *r->sites, by_cost);
	for (size_t i = 0; i < r->n_sites; i++)
		rp_stacks_sort(&r->sites[i]);
}

void rp_free(struct rp_report *r)
{
	for (size_t i = 0; i < r->n_processes; i++) {
		free(r->processes[i].name);
		free(r->processes[i].start_utc);
		free(r->processes[i].path);
	}
	free(r->processes);
	for (size_t i = 0; i < r->n_sites; i++)
		free_site(&r->sites[i]);
	free(r->sites);
	for (size_t i = 0; i < r->n_cycles; i++)
		free_cycle(&r->cycles[i]);
	free(r->cycles);
	for (size_t i = 0; i < r->n_deadlocks; i++)
		free_deadlock(&r->deadlocks[i]);
	free(r->deadlocks);
	rp_timelines_free(r);
	memset(r, 0, sizeof *r);
}
