/* rp_html.c - a report as one self-contained HTML page: rp_page.html (embedded at build time as
 * rp_page[]) with the report's data, as JSON, in place of its marker. */
#include "rp_output.h"
#include "lt_error.h"
#include "lt_mem.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* The page template (weaver/report/rp_page.html), generated into build/gen/rp_page.c. */
extern const uint8_t rp_page[];
extern const size_t rp_page_len;

static const char marker[] = "@LOCKTIME_DATA@";

/* Where the marker starts in the template, or NULL (memmem is not in every C library). */
static const char *find_marker(const char *page, size_t len)
{
	size_t n = sizeof marker - 1;
	for (size_t i = 0; i + n <= len; i++)
		if (page[i] == marker[0] && !memcmp(page + i, marker, n))
			return page + i;
	return NULL;
}

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

/* json_object_set_new that remembers a failure in *ok (jansson returns -1 on out of memory). */
static void put(json_t *obj, const char *key, json_t *v, int *ok)
{
	if (!v || json_object_set_new(obj, key, v))
		*ok = 0;
}

static void push(json_t *arr, json_t *v, int *ok)
{
	if (!v || json_array_append_new(arr, v))
		*ok = 0;
}

static json_t *text_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *durations(const struct rp_durations *d, int *ok)
{
	json_t *o = json_object();
	if (!o) {
		*ok = 0;
		return NULL;
	}
	put(o, "total", json_real(ms(d->total)), ok);
	put(o, "max", json_real(ms(d->max)), ok);
	put(o, "p50", json_real(ms(d->p50)), ok);
	put(o, "p90", json_real(ms(d->p90)), ok);
	put(o, "p99", json_real(ms(d->p99)), ok);
	if (!d->has_histogram) {
		put(o, "histogram", json_null(), ok);
		return o;
	}
	json_t *h = json_array();
	for (size_t i = 0; h && i < d->n_buckets; i++) {
		const struct rp_bucket *b = &d->buckets[i];
		push(h, json_pack("[ffI]", ms(rp_bucket_lower(b->upper_ns)), ms(b->upper_ns), (json_int_t)b->count), ok);
	}
	put(o, "histogram", h, ok);
	return o;
}

static json_t *end(const char *method, const char *location, int *ok)
{
	json_t *o = json_object();
	if (!o) {
		*ok = 0;
		return NULL;
	}
	put(o, "method", json_string(method), ok);
	put(o, "location", json_string(location), ok);
	return o;
}

/* A site's stacks for the page: {role, what, count, wait_ms, hold_ms, frames: [{method, file, line}]}, in rp_sort's order. */
static json_t *stacks(const struct rp_site *s, int *ok)
{
	static const char *const roles[] = { "waiter", "holder" }, *const whats[] = { "stack", "other", "not_captured" };
	json_t *list = json_array();
	for (size_t i = 0; list && i < s->n_stacks; i++) {
		const struct rp_stack *st = &s->stacks[i];
		json_t *frames = json_array();
		for (size_t k = 0; frames && k < st->n_frames; k++) {
			const struct rp_frame *f = &st->frames[k];
			push(frames, json_pack("{soso}", "method", json_string(f->method), "file", text_or_null(f->file)), ok);
			json_t *last = json_array_get(frames, json_array_size(frames) - 1);
			if (last)
				put(last, "line", f->line ? json_integer(f->line) : json_null(), ok);
		}
		push(list, json_pack("{sssssIsfsfso}", "role", roles[st->role], "what", whats[st->what], "count", (json_int_t)st->count,
				     "wait_ms", ms(st->wait_ns), "hold_ms", ms(st->hold_ns), "frames", frames ? frames : json_null()), ok);
	}
	if (!list)
		*ok = 0;
	return list;
}

static json_t *site(const struct rp_site *s, int *ok)
{
	json_t *o = json_object(), *behind = json_array();
	if (!o || !behind) {
		json_decref(o);
		json_decref(behind);
		*ok = 0;
		return NULL;
	}
	put(o, "assembly", json_string(s->assembly), ok);
	put(o, "method", json_string(s->method), ok);
	put(o, "location", json_string(s->location), ok);
	put(o, "file", text_or_null(s->file), ok);
	put(o, "line", s->line ? json_integer(s->line) : json_null(), ok);
	put(o, "kind", json_string(s->kind), ok);
	put(o, "acquisitions", json_integer(s->acquisitions), ok);
	put(o, "contended", json_integer(s->contended), ok);
	put(o, "failed", json_integer(s->failed), ok);
	put(o, "reentries", json_integer(s->reentries), ok);
	put(o, "wait", durations(&s->wait, ok), ok);
	put(o, "hold", durations(&s->hold, ok), ok);
	put(o, "hold_applies", json_boolean(!s->hold_na), ok);
	put(o, "blamed_wait_ms", s->has_blame ? json_real(ms(s->blamed_wait_ns)) : json_null(), ok);
	for (size_t i = 0; i < s->n_behind; i++) {
		const struct rp_blame *b = &s->behind[i];
		json_t *e = end(b->method, b->location, ok);
		if (e) {
			put(e, "wait_ms", json_real(ms(b->wait_ns)), ok);
			put(e, "count", json_integer(b->count), ok);
		}
		push(behind, e, ok);
	}
	put(o, "waited_behind", behind, ok);
	put(o, "stacks", stacks(s, ok), ok);
	put(o, "held_now", json_pack("{sIsf}", "count", (json_int_t)s->held_now, "longest_ms", ms(s->held_longest_ns)), ok);
	put(o, "waiting_now", json_pack("{sIsf}", "count", (json_int_t)s->waiting_now, "longest_ms", ms(s->waiting_longest_ns)), ok);
	return o;
}

/* The page's deadlocks: per deadlock its edges {thread, waits, holder_thread, held}. */
static json_t *deadlocks(const struct rp_report *r, int *ok)
{
	json_t *list = json_array();
	for (size_t i = 0; list && i < r->n_deadlocks; i++) {
		json_t *edges = json_array();
		for (size_t k = 0; edges && k < r->deadlocks[i].n_edges; k++) {
			const struct rp_wait *e = &r->deadlocks[i].edges[k];
			json_t *o = json_object();
			if (o) {
				put(o, "thread", json_integer(e->thread), ok);
				put(o, "waits", end(e->waits_method, e->waits_location, ok), ok);
				put(o, "holder_thread", json_integer(e->holder_thread), ok);
				put(o, "held", end(e->held_method, e->held_location, ok), ok);
			}
			push(edges, o, ok);
		}
		push(list, edges, ok);
	}
	return list;
}

/* The timelines for the page: per process {name, pid, events: [{thread, thread_name, method, location, from, acquired,
 * released (null: no hold), ok (acquired), behind: [[thread, hold_from]]}]}, times in ms since its start_utc. */
static json_t *timelines(const struct rp_report *r, int *ok)
{
	json_t *list = json_array();
	for (size_t i = 0; list && i < r->n_timelines; i++) {
		const struct rp_timeline *t = &r->timelines[i];
		json_t *events = json_array();
		for (size_t k = 0; events && k < t->n_events; k++) {
			const struct rp_event *e = &t->events[k];
			json_t *behind = json_array();
			for (size_t b = 0; behind && b < e->n_behind; b++)
				push(behind, json_pack("[If]", (json_int_t)e->behind[b].thread, ms(e->behind[b].hold_from_ns)), ok);
			push(events, json_pack("{sIsosssssfsfsosbso}", "thread", (json_int_t)e->thread, "thread_name",
					       text_or_null(e->thread_name), "method", e->method, "location", e->location, "from",
					       ms(e->wait_from_ns), "acquired", ms(e->acquired_ns), "released",
					       e->released_ns >= 0 ? json_real(ms(e->released_ns)) : json_null(), "ok", e->acquired,
					       "behind", behind ? behind : json_null()), ok);
		}
		push(list, json_pack("{sssIssso}", "name", t->name, "pid", (json_int_t)t->pid, "start_utc", t->start_utc,
				     "events", events ? events : json_null()), ok);
	}
	return list;
}

/* The page's data: processes, dropped_lines, unwritten_lines, sites (with held_now and waiting_now), cycles,
 * deadlocks, timelines (docs/report-format.md, "HTML"). */
static json_t *page_data(const struct rp_report *r, int *ok)
{
	json_t *root = json_object(), *procs = json_array(), *sites = json_array(), *cycles = json_array();
	if (!root) {
		json_decref(procs);
		json_decref(sites);
		json_decref(cycles);
		*ok = 0;
		return NULL;
	}
	put(root, "processes", procs, ok);
	put(root, "sites", sites, ok);
	put(root, "cycles", cycles, ok);
	put(root, "deadlocks", deadlocks(r, ok), ok);
	put(root, "timelines", timelines(r, ok), ok);
	put(root, "deadlocks_not_kept", json_integer(r->deadlocks_not_kept), ok);
	put(root, "dropped_lines", json_integer(r->dropped_lines), ok);
	put(root, "unwritten_lines", json_integer(r->unwritten_lines), ok);
	for (size_t i = 0; procs && i < r->n_processes; i++) {
		const struct rp_process *p = &r->processes[i];
		push(procs, json_pack("{sssIsssf}", "name", p->name, "pid", (json_int_t)p->pid, "start_utc", p->start_utc,
				      "duration_ms", ms(p->duration_ns)), ok);
	}
	for (size_t i = 0; sites && i < r->n_sites && *ok; i++)
		push(sites, site(&r->sites[i], ok), ok);
	for (size_t i = 0; cycles && i < r->n_cycles; i++) {
		json_t *edges = json_array();
		for (size_t k = 0; edges && k < r->cycles[i].n_edges; k++) {
			const struct rp_edge *e = &r->cycles[i].edges[k];
			json_t *o = json_object();
			if (o) {
				put(o, "held", end(e->held_method, e->held_location, ok), ok);
				put(o, "acquired", end(e->acquired_method, e->acquired_location, ok), ok);
				put(o, "thread", json_string(e->thread), ok);
			}
			push(edges, o, ok);
		}
		push(cycles, edges, ok);
	}
	return root;
}

/* JSON text placed inside <script>: every '<', '>' and '&' (which JSON has only inside strings)
 * as a \u escape, so no text can close the element or start a comment. */
static int put_script_json(struct lt_buf *out, const char *json)
{
	for (const char *p = json; *p; p++) {
		int rc = (*p == '<' || *p == '>' || *p == '&') ? lt_buf_printf(out, "\\u%04x", (unsigned char)*p)
							       : lt_buf_u8(out, (uint8_t)*p);
		if (rc)
			return -1;
	}
	return 0;
}

int rp_write_html(const struct rp_report *r, struct lt_buf *out)
{
	int ok = 1, rc = -1;
	json_t *data = page_data(r, &ok);
	char *json = ok ? json_dumps(data, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(12)) : NULL;
	const char *page = (const char *)rp_page;
	const char *at = find_marker(page, rp_page_len);

	json_decref(data);
	if (!json) {
		lt_nomem(NULL);
	} else if (!at) {
		lt_error_set(LT_E_REPORT, "the page template has no data marker");
	} else if (lt_buf_put(out, page, (size_t)(at - page)) == 0 && put_script_json(out, json) == 0) {
		size_t done = (size_t)(at - page) + sizeof marker - 1;
		rc = lt_buf_put(out, page + done, rp_page_len - done);
	}
	free(json);
	return rc;
}
