/* rp_read.c - reading report files (docs/report-format.md) with jansson, and adding them up. */
#include "rp_report.h"
#include "lt_error.h"
#include "lt_mem.h"
#include "lt_file.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where in the document a value is ("sites[3].hold_ms"), for messages. */
struct where {
	char text[160];
};

static struct where at(const struct where *parent, const char *key, long index)
{
	struct where w;
	int n;
	if (index >= 0)
		n = snprintf(w.text, sizeof w.text, "%s%s%s[%ld]", parent ? parent->text : "", parent && key ? "." : "",
			     key ? key : "", index);
	else
		n = snprintf(w.text, sizeof w.text, "%s%s%s", parent ? parent->text : "", parent ? "." : "", key);
	if (n >= (int)sizeof w.text) /* a path this deep is cut; the message still names its start */
		memcpy(w.text + sizeof w.text - 4, "...", 4);
	return w;
}

static int bad(const struct where *w, const char *what)
{
	return lt_error_set(LT_E_REPORT, "%s: %s", w->text, what);
}

static char *dup_or_fail(const char *s)
{
	char *d = lt_strdup(s);
	if (!d)
		lt_nomem(NULL);
	return d;
}

/* obj[key] as a new string into *out; with `nullable`, null or absent gives NULL. */
static int get_string(json_t *obj, const char *key, const struct where *parent, int nullable, char **out)
{
	json_t *v = json_object_get(obj, key);
	struct where w = at(parent, key, -1);
	*out = NULL;
	if ((!v || json_is_null(v)) && nullable)
		return 0;
	if (!v)
		return bad(&w, "missing");
	if (!json_is_string(v))
		return bad(&w, "not a string");
	*out = dup_or_fail(json_string_value(v));
	return *out ? 0 : -1;
}

/* A count: an integer from 0 to RP_MAX_COUNT. */
static int as_count(json_t *v, const struct where *w, int64_t *out)
{
	if (!v)
		return bad(w, "missing");
	if (!json_is_integer(v))
		return bad(w, "not a whole number");
	json_int_t n = json_integer_value(v);
	if (n < 0 || n > RP_MAX_COUNT)
		return bad(w, "out of range (0 to 2^53)");
	*out = (int64_t)n;
	return 0;
}

static int get_count(json_t *obj, const char *key, const struct where *parent, int64_t *out)
{
	struct where w = at(parent, key, -1);
	return as_count(json_object_get(obj, key), &w, out);
}

/* Milliseconds (a number from 0 to RP_MAX_MS) into nanoseconds. */
static int as_ms(json_t *v, const struct where *w, int64_t *ns)
{
	if (!v)
		return bad(w, "missing");
	if (!json_is_number(v))
		return bad(w, "not a number");
	double ms = json_number_value(v);
	if (!(ms >= 0 && ms <= RP_MAX_MS))
		return bad(w, "out of range (0 to 10^12 ms)");
	*ns = (int64_t)llround(ms * 1e6);
	return 0;
}

static int get_ms(json_t *obj, const char *key, const struct where *parent, int64_t *ns)
{
	struct where w = at(parent, key, -1);
	return as_ms(json_object_get(obj, key), &w, ns);
}

static int get_durations(json_t *site, const char *key, const struct where *parent, struct rp_durations *d)
{
	json_t *v = json_object_get(site, key);
	struct where w = at(parent, key, -1);
	if (!v)
		return bad(&w, "missing");
	if (!json_is_object(v))
		return bad(&w, "not an object");
	if (get_ms(v, "total", &w, &d->total) || get_ms(v, "max", &w, &d->max) || get_ms(v, "p50", &w, &d->p50) ||
	    get_ms(v, "p90", &w, &d->p90) || get_ms(v, "p99", &w, &d->p99))
		return -1;
	return 0;
}

/* "wait_histogram"/"hold_histogram": [[upper_ms, count], ...], strictly ascending, when present. */
static int get_histogram(json_t *site, const char *key, const struct where *parent, struct rp_durations *d)
{
	json_t *v = json_object_get(site, key);
	struct where w = at(parent, key, -1);
	if (!v)
		return 0;
	if (!json_is_array(v))
		return bad(&w, "not an array");
	size_t n = json_array_size(v);
	d->has_histogram = 1;
	if (n == 0)
		return 0;
	d->buckets = lt_calloc(n, sizeof *d->buckets);
	if (!d->buckets)
		return lt_nomem(NULL);
	for (size_t i = 0; i < n; i++) {
		json_t *pair = json_array_get(v, i);
		struct where wi = at(parent, key, (long)i);
		struct rp_bucket *b = &d->buckets[i];
		if (!json_is_array(pair) || json_array_size(pair) != 2)
			return bad(&wi, "not an [upper_bound_ms, count] pair");
		struct where wu = at(&wi, "upper_bound_ms", -1), wc = at(&wi, "count", -1);
		if (as_ms(json_array_get(pair, 0), &wu, &b->upper_ns) || as_count(json_array_get(pair, 1), &wc, &b->count))
			return -1;
		if (b->upper_ns < 100)
			return bad(&wu, "below the first bucket's bound (0.0001 ms)");
		if (i > 0 && b->upper_ns <= d->buckets[i - 1].upper_ns)
			return bad(&wu, "not above the previous bucket's");
		d->n_buckets++;
	}
	return 0;
}

static int get_blame(json_t *site, const struct where *parent, struct rp_site *s)
{
	json_t *v = json_object_get(site, "blamed_wait_ms");
	if (v) {
		struct where w = at(parent, "blamed_wait_ms", -1);
		if (as_ms(v, &w, &s->blamed_wait_ns))
			return -1;
		s->has_blame = 1;
	}
	v = json_object_get(site, "waited_behind");
	if (!v)
		return 0;
	struct where w = at(parent, "waited_behind", -1);
	if (!json_is_array(v))
		return bad(&w, "not an array");
	size_t n = json_array_size(v);
	if (n == 0)
		return 0;
	s->behind = lt_calloc(n, sizeof *s->behind);
	if (!s->behind)
		return lt_nomem(NULL);
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_array_get(v, i);
		struct where wi = at(parent, "waited_behind", (long)i);
		struct rp_blame *b = &s->behind[s->n_behind];
		if (!json_is_object(e))
			return bad(&wi, "not an object");
		s->n_behind++;
		if (get_string(e, "method", &wi, 0, &b->method) || get_string(e, "location", &wi, 0, &b->location) ||
		    get_ms(e, "wait_ms", &wi, &b->wait_ns) || get_count(e, "count", &wi, &b->count))
			return -1;
	}
	return 0;
}

/* "hold_applies": present, false, only when the site's hold is not measured (docs/report-format.md). */
static int get_hold_applies(json_t *site, const struct where *parent, struct rp_site *s)
{
	json_t *v = json_object_get(site, "hold_applies");
	struct where w = at(parent, "hold_applies", -1);
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return bad(&w, "not true or false");
	s->hold_na = json_is_false(v);
	return 0;
}

/* "held_now" or "waiting_now": {"count", "longest_ms"}, when present (reports of older versions lack them). */
static int get_in_progress(json_t *site, const char *key, const struct where *parent, int64_t *count, int64_t *longest_ns)
{
	json_t *v = json_object_get(site, key);
	struct where w = at(parent, key, -1);
	if (!v)
		return 0;
	if (!json_is_object(v))
		return bad(&w, "not an object");
	return get_count(v, "count", &w, count) || get_ms(v, "longest_ms", &w, longest_ns) ? -1 : 0;
}

/* One frame of a stack: {"method", "file" (null: unknown), "line" (null: unknown)}. */
static int get_frame(json_t *v, const struct where *w, struct rp_frame *f)
{
	json_t *line;
	if (!json_is_object(v))
		return bad(w, "not an object");
	if (get_string(v, "method", w, 0, &f->method) || get_string(v, "file", w, 1, &f->file))
		return -1;
	line = json_object_get(v, "line");
	if (!line || json_is_null(line))
		return 0;
	struct where wl = at(w, "line", -1);
	if (as_count(line, &wl, &f->line))
		return -1;
	return f->line < 1 || f->line > INT32_MAX ? bad(&wl, "not a line number") : 0;
}

/* A name among `names` (NULL-terminated) as its index into *out. */
static int get_enum(json_t *obj, const char *key, const struct where *parent, const char *const *names, const char *what, int *out)
{
	json_t *v = json_object_get(obj, key);
	struct where w = at(parent, key, -1);
	if (!v)
		return bad(&w, "missing");
	for (int i = 0; names[i]; i++)
		if (json_is_string(v) && !strcmp(json_string_value(v), names[i])) {
			*out = i;
			return 0;
		}
	return bad(&w, what);
}

/* One entry of "stacks": role, what, count, wait and hold totals, frames (only for what "stack"). */
static int get_stack(json_t *v, const struct where *w, struct rp_stack *st)
{
	static const char *const roles[] = { "waiter", "holder", NULL };
	static const char *const whats[] = { "stack", "other", "not_captured", NULL };
	int role, what;
	if (!json_is_object(v))
		return bad(w, "not an object");
	if (get_enum(v, "role", w, roles, "not waiter or holder", &role) ||
	    get_enum(v, "what", w, whats, "not stack, other or not_captured", &what) || get_count(v, "count", w, &st->count) ||
	    get_ms(v, "wait_ms", w, &st->wait_ns) || get_ms(v, "hold_ms", w, &st->hold_ns))
		return -1;
	st->role = (enum rp_role)role;
	st->what = (enum rp_what)what;
	json_t *frames = json_object_get(v, "frames");
	struct where wf = at(w, "frames", -1);
	if (!frames || !json_is_array(frames))
		return bad(&wf, frames ? "not an array" : "missing");
	size_t n = json_array_size(frames);
	if (n > 0 && st->what != RP_STACK)
		return bad(&wf, "frames for a count of stacks not kept");
	if (n == 0)
		return st->what == RP_STACK ? bad(&wf, "no frames") : 0;
	if (!(st->frames = lt_calloc(n, sizeof *st->frames)))
		return lt_nomem(NULL);
	for (size_t i = 0; i < n; i++) {
		struct where wi = at(w, "frames", (long)i);
		st->n_frames++;
		if (get_frame(json_array_get(frames, i), &wi, &st->frames[i]))
			return -1;
	}
	return 0;
}

/* "stacks" (version 2; absent: none). */
static int get_stacks(json_t *site, const struct where *parent, struct rp_site *s)
{
	json_t *v = json_object_get(site, "stacks");
	struct where w = at(parent, "stacks", -1);
	if (!v)
		return 0;
	if (!json_is_array(v))
		return bad(&w, "not an array");
	size_t n = json_array_size(v);
	if (n == 0)
		return 0;
	if (!(s->stacks = lt_calloc(n, sizeof *s->stacks)))
		return lt_nomem(NULL);
	for (size_t i = 0; i < n; i++) {
		struct where wi = at(parent, "stacks", (long)i);
		s->n_stacks++;
		if (get_stack(json_array_get(v, i), &wi, &s->stacks[i]))
			return -1;
	}
	return 0;
}

static int get_site(json_t *v, const struct where *w, struct rp_site *s)
{
	json_t *line, *again;
	if (!json_is_object(v))
		return bad(w, "not an object");
	if (get_string(v, "assembly", w, 0, &s->assembly) || get_string(v, "method", w, 0, &s->method) ||
	    get_string(v, "location", w, 0, &s->location) || get_string(v, "file", w, 1, &s->file) ||
	    get_string(v, "kind", w, 0, &s->kind))
		return -1;
	line = json_object_get(v, "line");
	if (line && !json_is_null(line)) {
		struct where wl = at(w, "line", -1);
		if (as_count(line, &wl, &s->line))
			return -1;
		if (s->line < 1 || s->line > INT32_MAX)
			return bad(&wl, "not a line number");
	}
	again = json_object_get(v, "reentries"); /* added later in version 1: absent is 0 */
	if (again) {
		struct where wr = at(w, "reentries", -1);
		if (as_count(again, &wr, &s->reentries))
			return -1;
	}
	if (get_count(v, "acquisitions", w, &s->acquisitions) || get_count(v, "contended", w, &s->contended) ||
	    get_count(v, "failed", w, &s->failed) || get_durations(v, "wait_ms", w, &s->wait) ||
	    get_durations(v, "hold_ms", w, &s->hold) || get_histogram(v, "wait_histogram", w, &s->wait) ||
	    get_histogram(v, "hold_histogram", w, &s->hold) || get_blame(v, w, s) ||
	    get_in_progress(v, "held_now", w, &s->held_now, &s->held_longest_ns) ||
	    get_in_progress(v, "waiting_now", w, &s->waiting_now, &s->waiting_longest_ns) ||
	    get_hold_applies(v, w, s) || get_stacks(v, w, s))
		return -1;
	return 0;
}

/* An edge's end: {"method", "location"}. */
static int get_end(json_t *edge, const char *key, const struct where *parent, char **method, char **location)
{
	json_t *v = json_object_get(edge, key);
	struct where w = at(parent, key, -1);
	if (!v)
		return bad(&w, "missing");
	if (!json_is_object(v))
		return bad(&w, "not an object");
	return get_string(v, "method", &w, 0, method) || get_string(v, "location", &w, 0, location) ? -1 : 0;
}

/* A lock-order cycle's edge: {"held", "acquired", "thread"} into the struct rp_edge at `out`. */
static int get_edge(json_t *v, const struct where *w, void *out)
{
	struct rp_edge *e = out;
	json_t *t;
	char num[32];
	if (!json_is_object(v))
		return bad(w, "not an object");
	if (get_end(v, "held", w, &e->held_method, &e->held_location) ||
	    get_end(v, "acquired", w, &e->acquired_method, &e->acquired_location))
		return -1;
	t = json_object_get(v, "thread");
	if (t && json_is_integer(t))
		snprintf(num, sizeof num, "%lld", (long long)json_integer_value(t));
	else if (t && json_is_string(t))
		return (e->thread = dup_or_fail(json_string_value(t))) ? 0 : -1;
	else if (t && !json_is_null(t)) {
		struct where wt = at(w, "thread", -1);
		return bad(&wt, "not a string or a whole number");
	} else
		num[0] = 0;
	return (e->thread = dup_or_fail(num)) ? 0 : -1;
}

/* A deadlock's edge: {"thread", "waits", "holder_thread", "held"} into the struct rp_wait at `out`. */
static int get_wait(json_t *v, const struct where *w, void *out)
{
	struct rp_wait *e = out;
	if (!json_is_object(v))
		return bad(w, "not an object");
	if (get_count(v, "thread", w, &e->thread) || get_end(v, "waits", w, &e->waits_method, &e->waits_location) ||
	    get_count(v, "holder_thread", w, &e->holder_thread) ||
	    get_end(v, "held", w, &e->held_method, &e->held_location))
		return -1;
	return 0;
}

/* root[key]: an array into *list with its size in *n, or absent (*n = 0). */
static int get_list(json_t *root, const char *key, json_t **list, size_t *n)
{
	struct where w = at(NULL, key, -1);
	*list = json_object_get(root, key);
	*n = 0;
	if (!*list)
		return 0;
	if (!json_is_array(*list))
		return bad(&w, "not an array");
	*n = json_array_size(*list);
	return 0;
}

/* Item i of the list root[key], {"edges": [...]} (a ring of edges): its edges into *edges, a new array of
 * `size`-byte edges each read by `read`, *n counting those begun (so that a failure frees them all). */
static int get_ring(json_t *list, const char *key, size_t i, size_t size,
		    int (*read)(json_t *, const struct where *, void *), void **edges, size_t *n)
{
	json_t *ring = json_array_get(list, i), *v;
	struct where wi = at(NULL, key, (long)i), we = at(&wi, "edges", -1);
	if (!json_is_object(ring))
		return bad(&wi, "not an object");
	v = json_object_get(ring, "edges");
	if (!v)
		return bad(&we, "missing");
	if (!json_is_array(v) || json_array_size(v) == 0)
		return bad(&we, "not an array of edges");
	size_t m = json_array_size(v);
	if (!(*edges = lt_calloc(m, size)))
		return lt_nomem(NULL);
	for (size_t k = 0; k < m; k++) {
		struct where wk = at(&wi, "edges", (long)k);
		(*n)++;
		if (read(json_array_get(v, k), &wk, (char *)*edges + k * size))
			return -1;
	}
	return 0;
}

static int get_cycles(json_t *root, struct rp_report *one)
{
	json_t *list;
	size_t n;
	if (get_list(root, "lock_order_cycles", &list, &n))
		return -1;
	if (n && !(one->cycles = lt_calloc(n, sizeof *one->cycles)))
		return lt_nomem(NULL);
	for (size_t i = 0; i < n; i++) {
		struct rp_cycle *c = &one->cycles[one->n_cycles++];
		void *edges = NULL;
		int rc = get_ring(list, "lock_order_cycles", i, sizeof *c->edges, get_edge, &edges, &c->n_edges);
		c->edges = edges;
		if (rc)
			return -1;
	}
	return 0;
}

/* "deadlocks" (absent in reports of earlier versions: none) and "lock_order.deadlocks_not_kept". */
static int get_deadlocks(json_t *root, struct rp_report *one)
{
	json_t *list, *order = json_object_get(root, "lock_order"), *v;
	size_t n;
	struct where wo = at(NULL, "lock_order", -1);
	if (order && !json_is_object(order))
		return bad(&wo, "not an object");
	if (order && (v = json_object_get(order, "deadlocks_not_kept"))) {
		struct where wn = at(&wo, "deadlocks_not_kept", -1);
		if (as_count(v, &wn, &one->deadlocks_not_kept))
			return -1;
	}
	if (get_list(root, "deadlocks", &list, &n))
		return -1;
	if (n && !(one->deadlocks = lt_calloc(n, sizeof *one->deadlocks)))
		return lt_nomem(NULL);
	for (size_t i = 0; i < n; i++) {
		struct rp_deadlock *d = &one->deadlocks[one->n_deadlocks++];
		void *edges = NULL;
		int rc = get_ring(list, "deadlocks", i, sizeof *d->edges, get_wait, &edges, &d->n_edges);
		d->edges = edges;
		if (rc)
			return -1;
	}
	return 0;
}

/* One link of an event's "behind": {"thread", "hold_from_ms"}. */
static int get_link(json_t *v, const struct where *w, struct rp_link *l)
{
	if (!json_is_object(v))
		return bad(w, "not an object");
	return get_count(v, "thread", w, &l->thread) || get_ms(v, "hold_from_ms", w, &l->hold_from_ns) ? -1 : 0;
}

/* One event of "timeline.events" (docs/report-format.md): the wait's start at or before the acquisition, that at
 * or before the release; "released_ms" null: no hold; "acquired" false (absent: true) only without a hold. */
static int get_event(json_t *v, const struct where *w, struct rp_event *e)
{
	json_t *released, *acquired, *behind;
	if (!json_is_object(v))
		return bad(w, "not an object");
	if (get_count(v, "thread", w, &e->thread) || get_string(v, "thread_name", w, 1, &e->thread_name) ||
	    get_string(v, "assembly", w, 0, &e->assembly) || get_string(v, "method", w, 0, &e->method) ||
	    get_string(v, "location", w, 0, &e->location) || get_ms(v, "wait_from_ms", w, &e->wait_from_ns) ||
	    get_ms(v, "acquired_ms", w, &e->acquired_ns))
		return -1;
	struct where wa = at(w, "acquired_ms", -1), wr = at(w, "released_ms", -1), wq = at(w, "acquired", -1);
	if (e->acquired_ns < e->wait_from_ns)
		return bad(&wa, "before wait_from_ms");
	e->released_ns = -1;
	released = json_object_get(v, "released_ms");
	if (!released)
		return bad(&wr, "missing");
	if (!json_is_null(released) && as_ms(released, &wr, &e->released_ns))
		return -1;
	if (e->released_ns >= 0 && e->released_ns < e->acquired_ns)
		return bad(&wr, "before acquired_ms");
	acquired = json_object_get(v, "acquired");
	e->acquired = 1;
	if (acquired && !json_is_boolean(acquired))
		return bad(&wq, "not true or false");
	if (acquired && json_is_false(acquired)) {
		if (e->released_ns >= 0)
			return bad(&wq, "false for a lock released");
		e->acquired = 0;
	}
	behind = json_object_get(v, "behind");
	struct where wb = at(w, "behind", -1);
	if (!behind)
		return bad(&wb, "missing");
	if (!json_is_array(behind) || json_array_size(behind) > RP_LINKS)
		return bad(&wb, "not an array of at most 3 holds");
	for (size_t i = 0; i < json_array_size(behind); i++) {
		struct where wi = at(w, "behind", (long)i);
		if (get_link(json_array_get(behind, i), &wi, &e->behind[i]))
			return -1;
		e->n_behind++;
	}
	return 0;
}

/* "timeline" (version 3; absent: none) into one timeline of the report's process. */
static int get_timeline(json_t *root, struct rp_report *one)
{
	json_t *v = json_object_get(root, "timeline"), *events;
	struct where w = at(NULL, "timeline", -1), we = at(&w, "events", -1);
	struct rp_timeline *t;
	if (!v)
		return 0;
	if (!json_is_object(v))
		return bad(&w, "not an object");
	if (!(one->timelines = lt_calloc(1, sizeof *one->timelines)))
		return lt_nomem(NULL);
	one->n_timelines = 1;
	t = one->timelines;
	t->pid = one->processes->pid;
	if (!(t->name = dup_or_fail(one->processes->name)) || !(t->start_utc = dup_or_fail(one->processes->start_utc)))
		return -1;
	if (get_count(v, "capacity", &w, &t->capacity) || get_count(v, "added", &w, &t->added))
		return -1;
	events = json_object_get(v, "events");
	if (!events)
		return bad(&we, "missing");
	if (!json_is_array(events))
		return bad(&we, "not an array");
	size_t n = json_array_size(events);
	if (n > RP_MAX_EVENTS)
		return lt_error_set(LT_E_LIMIT, "timeline.events: %zu events, more than %d", n, RP_MAX_EVENTS);
	if (n && !(t->events = lt_calloc(n, sizeof *t->events)))
		return lt_nomem(NULL);
	for (size_t i = 0; i < n; i++) {
		struct where wi = at(&w, "events", (long)i);
		t->n_events++;
		if (get_event(json_array_get(events, i), &wi, &t->events[i]))
			return -1;
	}
	return 0;
}

/* The document's top level into `one` (a report of its own). */
static int get_report(json_t *root, struct rp_report *one)
{
	json_t *v, *sites, *proc;
	struct where top = at(NULL, "report", -1);
	if (!json_is_object(root))
		return bad(&top, "not a JSON object");
	v = json_object_get(root, "format");
	if (!v || !json_is_string(v) || strcmp(json_string_value(v), "locktime-report"))
		return lt_error_set(LT_E_REPORT, "format: not \"locktime-report\" (not a LockTime report)");
	v = json_object_get(root, "version");
	if (!v || !json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 3)
		return lt_error_set(LT_E_REPORT, "version: not 1, 2 or 3 (a report of another version)");
	proc = json_object_get(root, "process");
	struct where wp = at(NULL, "process", -1);
	if (!proc)
		return bad(&wp, "missing");
	if (!json_is_object(proc))
		return bad(&wp, "not an object");
	if (!(one->processes = lt_calloc(1, sizeof *one->processes)))
		return lt_nomem(NULL);
	one->n_processes = 1;
	if (get_string(proc, "name", &wp, 0, &one->processes->name) || get_count(proc, "pid", &wp, &one->processes->pid) ||
	    get_string(proc, "start_utc", &wp, 0, &one->processes->start_utc) ||
	    get_ms(proc, "duration_ms", &wp, &one->processes->duration_ns))
		return -1;
	struct where wd = at(NULL, "dropped_lines", -1);
	if (as_count(json_object_get(root, "dropped_lines"), &wd, &one->dropped_lines))
		return -1;
	json_t *unwritten = json_object_get(root, "unwritten_lines"); /* added later in version 1: absent is 0 */
	struct where wu = at(NULL, "unwritten_lines", -1);
	if (unwritten && as_count(unwritten, &wu, &one->unwritten_lines))
		return -1;
	sites = json_object_get(root, "sites");
	struct where ws = at(NULL, "sites", -1);
	if (!sites)
		return bad(&ws, "missing");
	if (!json_is_array(sites))
		return bad(&ws, "not an array");
	size_t n = json_array_size(sites);
	if (n > RP_MAX_SITES)
		return lt_error_set(LT_E_LIMIT, "sites: %zu sites, more than %d", n, RP_MAX_SITES);
	if (n && !(one->sites = lt_calloc(n, sizeof *one->sites)))
		return lt_nomem(NULL);
	for (size_t i = 0; i < n; i++) {
		struct where wi = at(NULL, "sites", (long)i);
		one->n_sites++;
		if (get_site(json_array_get(sites, i), &wi, &one->sites[i]))
			return -1;
	}
	return get_cycles(root, one) || get_deadlocks(root, one) || get_timeline(root, one) ? -1 : 0;
}

int rp_add_json(struct rp_report *r, const char *text, size_t len)
{
	struct rp_report one = RP_REPORT_INIT;
	json_error_t err;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
	int rc;

	if (!root)
		return lt_error_set(LT_E_REPORT, "line %d, column %d: %s", err.line, err.column, err.text);
	rc = get_report(root, &one);
	json_decref(root);
	if (rc == 0)
		rc = rp_merge(r, &one);
	rp_free(&one);
	return rc;
}

int rp_add_file(struct rp_report *r, const char *path)
{
	uint8_t *data;
	size_t size;
	int rc;

	if (lt_file_read(path, &data, &size))
		return -1;
	rc = rp_add_json(r, (const char *)data, size);
	free(data);
	/* the process just added (rp_merge appends one's) came from this file */
	if (rc == 0 && !(r->processes[r->n_processes - 1].path = lt_strdup(path)))
		return lt_nomem(NULL);
	return rc;
}
