/* test_report.c - weaver/report: reading report JSON (and refusing hostile JSON with LT019 naming
 * where), adding reports up, the histogram arithmetic, and what the HTML, pprof, text and check
 * writers make of a report (the timeline and its Chrome trace too).  The reports are built here from parts (site_json) so every expected
 * figure is computed from the same inputs; tests/integration/report.sh reads real reports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include <zlib.h>

#include "lt_buf.h"
#include "lt_error.h"
#include "rp_output.h"
#include "rp_profile.pb-c.h"
#include "rp_report.h"

/* One site's JSON: hold histogram buckets given as "[ub, n], ..." (NULL: none). */
static char *site_json(const char *method, const char *location, long acq, double hold_total, double hold_max,
		       const char *hold_hist)
{
	char *s = NULL;
	int n = asprintf(&s,
			 "{\"assembly\": \"App\", \"method\": \"%s\", \"location\": \"%s\", \"file\": \"/src/App/P.cs\", "
			 "\"line\": 12, \"kind\": \"Monitor.Enter\", \"acquisitions\": %ld, \"contended\": 1, \"failed\": 0, "
			 "\"wait_ms\": {\"total\": 2.5, \"max\": 2.5, \"p50\": 0.00005, \"p90\": 2.5, \"p99\": 2.5}, "
			 "\"hold_ms\": {\"total\": %g, \"max\": %g, \"p50\": 1, \"p90\": 1, \"p99\": 1}%s%s%s}",
			 method, location, acq, hold_total, hold_max, hold_hist ? ", \"hold_histogram\": [" : "",
			 hold_hist ? hold_hist : "", hold_hist ? "]" : "");
	assert_true(n > 0);
	return s;
}

static char *report_json(const char *sites, const char *extra)
{
	char *s = NULL;
	int n = asprintf(&s,
			 "{\"format\": \"locktime-report\", \"version\": 1, \"process\": {\"name\": \"App\", \"pid\": 7, "
			 "\"start_utc\": \"2026-12-01T09:45:05.366Z\", \"duration_ms\": 101.5}, \"dropped_lines\": 0, "
			 "\"sites\": [%s]%s}",
			 sites, extra ? extra : "");
	assert_true(n > 0);
	return s;
}

static int add_text(struct rp_report *r, const char *text)
{
	lt_error_clear();
	return rp_add_json(r, text, strlen(text));
}

/* A report of one site with the given hold histogram. */
static void one_site(struct rp_report *r, const char *method, long acq, double total, double max, const char *hist)
{
	char *site = site_json(method, "P.cs:12", acq, total, max, hist);
	char *json = report_json(site, NULL);
	assert_int_equal(add_text(r, json), 0);
	free(site);
	free(json);
}

static void test_reads_fields(void **state)
{
	struct rp_report r = RP_REPORT_INIT;
	(void)state;
	one_site(&r, "App.P::Run", 41, 152.5, 150.25, "[0.0001, 1], [110, 40]");
	assert_int_equal(r.n_sites, 1);
	assert_int_equal(r.n_processes, 1);
	assert_string_equal(r.processes[0].name, "App");
	assert_int_equal(r.processes[0].duration_ns, 101500000);
	const struct rp_site *s = &r.sites[0];
	assert_string_equal(s->method, "App.P::Run");
	assert_string_equal(s->file, "/src/App/P.cs");
	assert_int_equal(s->line, 12);
	assert_int_equal(s->acquisitions, 41);
	assert_int_equal(s->hold.total, 152500000);
	assert_int_equal(s->hold.max, 150250000);
	assert_int_equal(s->wait.p50, 50);
	assert_true(s->hold.has_histogram);
	assert_false(s->wait.has_histogram);
	assert_int_equal(s->hold.n_buckets, 2);
	assert_int_equal(s->hold.buckets[1].upper_ns, 110000000);
	assert_int_equal(s->hold.buckets[1].count, 40);
	rp_free(&r);
}

/* Bucket bounds as the run-time's Histogram.cs makes them: [lo, hi) with hi = (k + 11) * unit. */
static void test_bucket_arithmetic(void **state)
{
	(void)state;
	for (int64_t unit = 10; unit <= INT64_C(10000000000); unit *= 10)
		for (int64_t k = 0; k < 90; k++)
			assert_int_equal(rp_bucket_lower((k + 11) * unit), (k + 10) * unit);
	assert_int_equal(rp_bucket_lower(100), 0);

	struct rp_bucket b[] = { { 100, 2 }, { 110000000, 3 }, { 120000000, 5 } };
	struct rp_durations d = { .max = 112000000, .buckets = b, .n_buckets = 3, .has_histogram = 1 };
	int64_t least, most;
	/* 110 ms is a boundary: exactly the 5 values in [110, 120). */
	assert_int_equal(rp_count_over(&d, 110000000, &least, &most), 0);
	assert_int_equal(least, b[2].count);
	assert_int_equal(most, b[2].count);
	/* 115 ms falls inside [110, 120): none surely, up to 5. */
	assert_int_equal(rp_count_over(&d, 115000000, &least, &most), 0);
	assert_int_equal(least, 0);
	assert_int_equal(most, b[2].count);
	/* p50 of 10 values is rank 5: the middle of [100, 110) ms; p99 capped at the maximum. */
	assert_int_equal(rp_percentile(&d, 0.5), 105000000);
	assert_int_equal(rp_percentile(&d, 0.99), d.max);
	assert_int_equal(rp_percentile(&d, 0.1), 50);
	d.has_histogram = 0;
	assert_int_equal(rp_count_over(&d, 1, &least, &most), -1);
}

/* Two files with the same site add up; percentiles are taken again from the added histogram. */
static void test_merge(void **state)
{
	struct rp_report r = RP_REPORT_INIT;
	(void)state;
	one_site(&r, "App.P::Run", 3, 30, 12, "[11, 3]");
	one_site(&r, "App.P::Run", 4, 400, 150, "[11, 1], [150, 3]");
	one_site(&r, "App.P::Other", 1, 1, 1, "[1.1, 1]");
	assert_int_equal(r.n_processes, 3);
	assert_int_equal(r.n_sites, 2);
	rp_sort(&r);
	const struct rp_site *s = &r.sites[0];
	assert_string_equal(s->method, "App.P::Run"); /* equal waits: the larger hold first */
	assert_int_equal(s->acquisitions, 3 + 4);
	assert_int_equal(s->contended, 2);
	assert_int_equal(s->hold.total, (30 + 400) * INT64_C(1000000));
	assert_int_equal(s->hold.max, 150000000);
	assert_int_equal(s->hold.n_buckets, 2);
	assert_int_equal(s->hold.buckets[0].count, 3 + 1);
	assert_int_equal(s->hold.p50, 10500000); /* rank 4 of 7 in [10, 11) ms */
	assert_int_equal(s->hold.p99, rp_bucket_lower(150000000) + (150000000 - rp_bucket_lower(150000000)) / 2);
	rp_free(&r);
}

/* One edge of a deadlock: thread t waits at (wm, wl) for the lock thread h took at (hm, hl). */
static char *wait_json(long t, const char *wm, const char *wl, long h, const char *hm, const char *hl)
{
	char *s = NULL;
	assert_true(asprintf(&s,
			     "{\"thread\": %ld, \"waits\": {\"method\": \"%s\", \"location\": \"%s\"}, \"holder_thread\": %ld, "
			     "\"held\": {\"method\": \"%s\", \"location\": \"%s\"}}",
			     t, wm, wl, h, hm, hl) > 0);
	return s;
}

/* The report's "deadlocks" (and lock_order) as a report_json extra: `first` and `second` are two
 * deadlocks' edges ("" for none), `not_kept` lock_order.deadlocks_not_kept. */
static char *deadlocks_extra(const char *first, const char *second, long not_kept)
{
	char *s = NULL;
	assert_true(asprintf(&s, ", \"lock_order\": {\"deadlocks_not_kept\": %ld}, \"deadlocks\": [%s%s%s%s%s%s%s]", not_kept,
			     *first ? "{\"edges\": [" : "", first, *first ? "]}" : "", *first && *second ? ", " : "",
			     *second ? "{\"edges\": [" : "", second, *second ? "]}" : "") > 0);
	return s;
}

/* The run-time's deadlock of Host.Account (tests/runtime/Host deadlock): threads t1 and t2 each wait at
 * Credit for the lock the other took at Debit; `swap` lists the edges the other way round. */
static char *account_deadlock(long t1, long t2, int swap)
{
	char *a = wait_json(t1, "Host.Account::Credit", "Program.cs:29", t2, "Host.Account::Debit", "Program.cs:28");
	char *b = wait_json(t2, "Host.Account::Credit", "Program.cs:29", t1, "Host.Account::Debit", "Program.cs:28");
	char *s = NULL;
	assert_true(asprintf(&s, "%s, %s", swap ? b : a, swap ? a : b) > 0);
	free(a);
	free(b);
	return s;
}

/* A report of the site Debit (held now, as in a deadlocked run) with `extra` at its end. */
static void add_report(struct rp_report *r, const char *extra)
{
	char *site = site_json("Host.Account::Debit", "Program.cs:28", 0, 0, 0, "");
	char *json = report_json(site, extra);
	assert_int_equal(add_text(r, json), 0);
	free(site);
	free(json);
}

/* Each hostile text is refused with LT_E_REPORT (or LT_E_LIMIT) naming `where`, r untouched. */
static void refused(const char *text, int code, const char *where)
{
	struct rp_report r = RP_REPORT_INIT;
	one_site(&r, "App.P::Kept", 1, 1, 1, NULL);
	if (add_text(&r, text) != -1 || lt_error_last()->code != code || !strstr(lt_error_last()->msg, where))
		fail_msg("accepted or other error for %.200s: LT%03d %s (wanted %s)", text, lt_error_last()->code,
			 lt_error_last()->msg, where);
	assert_int_equal(r.n_sites, 1);
	assert_int_equal(r.n_processes, 1);
	rp_free(&r);
}

/* The site of a valid report with one field's text replaced. */
static void refused_site(const char *from, const char *to, const char *where)
{
	char *site = site_json("App.P::Run", "P.cs:12", 5, 1, 1, "[0.0001, 1]");
	char *at = strstr(site, from), *changed = NULL, *json;
	assert_non_null(at);
	assert_true(asprintf(&changed, "%.*s%s%s", (int)(at - site), site, to, at + strlen(from)) > 0);
	json = report_json(changed, NULL);
	refused(json, LT_E_REPORT, where);
	free(site);
	free(changed);
	free(json);
}

static void test_hostile(void **state)
{
	(void)state;
	/* not JSON, not a report, another version */
	refused("", LT_E_REPORT, "line");
	refused("{\"format\": \"locktime-report\"", LT_E_REPORT, "line 1");
	refused("[1, 2]", LT_E_REPORT, "not a JSON object");
	refused("{\"format\": \"other\", \"version\": 1}", LT_E_REPORT, "not a LockTime report");
	refused("{\"format\": \"locktime-report\", \"version\": 4}", LT_E_REPORT, "another version");
	refused("{\"format\": \"locktime-report\", \"version\": \"1\"}", LT_E_REPORT, "version");
	/* wrong types, missing fields */
	refused_site("\"acquisitions\": 5", "\"acquisitions\": \"5\"", "sites[0].acquisitions: not a whole number");
	refused_site("\"acquisitions\": 5", "\"acquisitions\": 5.5", "sites[0].acquisitions: not a whole number");
	refused_site("\"acquisitions\": 5", "\"acquisitions\": -5", "sites[0].acquisitions: out of range");
	refused_site("\"method\": \"App.P::Run\"", "\"method\": 7", "sites[0].method: not a string");
	refused_site("\"method\": \"App.P::Run\", ", "", "sites[0].method: missing");
	refused_site("\"line\": 12", "\"line\": 0", "sites[0].line: not a line number");
	refused_site("\"line\": 12", "\"line\": 4294967296", "sites[0].line: not a line number");
	refused_site("\"total\": 2.5", "\"total\": null", "sites[0].wait_ms.total: not a number");
	refused_site("\"total\": 2.5", "\"total\": -0.5", "sites[0].wait_ms.total: out of range");
	refused_site("\"hold_ms\": {", "\"hold_ms\": 3, \"x\": {", "sites[0].hold_ms: not an object");
	refused_site("[0.0001, 1]", "[0.0001, 1, 2]", "sites[0].hold_histogram[0]: not an [upper_bound_ms, count] pair");
	refused_site("[0.0001, 1]", "[0.0001, 1], [0.0001, 1]", "sites[0].hold_histogram[1].upper_bound_ms: not above");
	refused_site("[0.0001, 1]", "[0.00001, 1]", "below the first bucket");
	refused_site("[0.0001, 1]", "{}", "hold_histogram[0]: not an");
	/* huge numbers: past int64, past a double, past our limits */
	refused_site("\"acquisitions\": 5", "\"acquisitions\": 99999999999999999999999", "too big");
	refused_site("\"acquisitions\": 5", "\"acquisitions\": 9007199254740993", "out of range (0 to 2^53)");
	refused_site("\"total\": 2.5", "\"total\": 1e400", "overflow");
	refused_site("\"total\": 2.5", "\"total\": 1e300", "out of range (0 to 10^12 ms)");
	/* odd strings: NUL, invalid UTF-8, a lone surrogate, a duplicate key */
	refused_site("\"App.P::Run\"", "\"App\\u0000Run\"", "NUL");
	refused_site("\"App.P::Run\"", "\"App\xff\xfeRun\"", "unable to decode byte 0xff");
	refused_site("\"App.P::Run\"", "\"App\\ud800Run\"", "invalid Unicode");
	refused_site("\"kind\": \"Monitor.Enter\"", "\"kind\": \"a\", \"kind\": \"b\"", "duplicate");
	/* blame and cycles of the wrong shape */
	refused_site("\"failed\": 0", "\"failed\": 0, \"waited_behind\": {}", "sites[0].waited_behind: not an array");
	refused_site("\"failed\": 0", "\"failed\": 0, \"waited_behind\": [{\"method\": \"M\", \"location\": \"L\", \"wait_ms\": 1}]",
		     "sites[0].waited_behind[0].count: missing");
	refused_site("\"failed\": 0", "\"failed\": 0, \"blamed_wait_ms\": \"1\"", "sites[0].blamed_wait_ms: not a number");
	refused_site("\"failed\": 0", "\"failed\": 0, \"held_now\": []", "sites[0].held_now: not an object");
	refused_site("\"failed\": 0", "\"failed\": 0, \"held_now\": {\"count\": 1}", "sites[0].held_now.longest_ms: missing");
	refused_site("\"failed\": 0", "\"failed\": 0, \"held_now\": {\"count\": -1, \"longest_ms\": 1}",
		     "sites[0].held_now.count: out of range");
	refused_site("\"failed\": 0", "\"failed\": 0, \"waiting_now\": 3", "sites[0].waiting_now: not an object");
	refused_site("\"failed\": 0", "\"failed\": 0, \"waiting_now\": {\"longest_ms\": 1}", "sites[0].waiting_now.count: missing");
	refused_site("\"failed\": 0", "\"failed\": 0, \"waiting_now\": {\"count\": 1, \"longest_ms\": -2}",
		     "sites[0].waiting_now.longest_ms: out of range");
	char *unwritten = report_json("", ", \"unwritten_lines\": -1");
	refused(unwritten, LT_E_REPORT, "unwritten_lines: out of range");
	free(unwritten);
	unwritten = report_json("", ", \"unwritten_lines\": \"7\"");
	refused(unwritten, LT_E_REPORT, "unwritten_lines: not");
	free(unwritten);
	char *json = report_json("", ", \"lock_order_cycles\": [{\"edges\": [{\"held\": {\"method\": \"A\"}}]}]");
	refused(json, LT_E_REPORT, "lock_order_cycles[0].edges[0].held.location: missing");
	free(json);
	json = report_json("", ", \"lock_order_cycles\": [{\"edges\": []}]");
	refused(json, LT_E_REPORT, "lock_order_cycles[0].edges: not an array of edges");
	free(json);
	/* deadlocks of the wrong shape */
	static const struct {
		const char *extra, *where;
	} bad_deadlocks[] = {
		{ ", \"deadlocks\": {}", "deadlocks: not an array" },
		{ ", \"deadlocks\": [[]]", "deadlocks[0]: not an object" },
		{ ", \"deadlocks\": [{}]", "deadlocks[0].edges: missing" },
		{ ", \"deadlocks\": [{\"edges\": []}]", "deadlocks[0].edges: not an array of edges" },
		{ ", \"deadlocks\": [{\"edges\": [7]}]", "deadlocks[0].edges[0]: not an object" },
		{ ", \"lock_order\": [], \"deadlocks\": []", "lock_order: not an object" },
		{ ", \"lock_order\": {\"deadlocks_not_kept\": -1}", "lock_order.deadlocks_not_kept: out of range" },
	};
	for (size_t i = 0; i < sizeof bad_deadlocks / sizeof *bad_deadlocks; i++) {
		json = report_json("", bad_deadlocks[i].extra);
		refused(json, LT_E_REPORT, bad_deadlocks[i].where);
		free(json);
	}
	/* one field of the second edge of a real deadlock's replaced or taken out */
	static const struct {
		const char *from, *to, *where;
	} bad_edges[] = {
		{ "\"thread\": 5", "\"thread\": \"5\"", "deadlocks[0].edges[1].thread: not a whole number" },
		{ "\"thread\": 5", "\"thread\": 5.5", "deadlocks[0].edges[1].thread: not a whole number" },
		{ "\"thread\": 5, ", "", "deadlocks[0].edges[1].thread: missing" },
		{ "\"holder_thread\": 6", "\"holder_thread\": null", "deadlocks[0].edges[1].holder_thread: not a whole number" },
		{ "\"location\": \"Program.cs:29\"}, \"holder_thread\": 6", "\"location\": 29}, \"holder_thread\": 6",
		  "deadlocks[0].edges[1].waits.location: not a string" },
		{ "\"held\": {\"method\": \"Host.Account::Debit\", \"location\": \"Program.cs:28\"}}",
		  "\"held\": \"Debit\"}", "deadlocks[0].edges[1].held: not an object" },
	};
	for (size_t i = 0; i < sizeof bad_edges / sizeof *bad_edges; i++) {
		char *edges = account_deadlock(6, 5, 0), *extra, *at, *changed = NULL;
		at = strstr(strstr(edges, "}}, ") + 4, bad_edges[i].from); /* in the second edge */
		assert_non_null(at);
		assert_true(asprintf(&changed, "%.*s%s%s", (int)(at - edges), edges, bad_edges[i].to, at + strlen(bad_edges[i].from)) > 0);
		extra = deadlocks_extra(changed, "", 0);
		json = report_json("", extra);
		refused(json, LT_E_REPORT, bad_edges[i].where);
		free(json);
		free(extra);
		free(changed);
		free(edges);
	}
}

/* "deadlocks" read edge by edge; absent (a report of an earlier version) is none. */
static void test_deadlocks_read(void **state)
{
	struct rp_report r = RP_REPORT_INIT;
	char *edges = account_deadlock(6, 5, 0), *extra = deadlocks_extra(edges, "", 3);
	(void)state;
	add_report(&r, NULL);
	assert_int_equal(r.n_deadlocks, 0);
	assert_int_equal(r.deadlocks_not_kept, 0);
	add_report(&r, extra);
	assert_int_equal(r.n_deadlocks, 1);
	assert_int_equal(r.deadlocks_not_kept, 3);
	const struct rp_deadlock *d = &r.deadlocks[0];
	assert_int_equal(d->n_edges, 2);
	assert_int_equal(d->process, 1); /* the second file's */
	assert_int_equal(d->edges[0].thread, 6);
	assert_int_equal(d->edges[0].holder_thread, 5);
	assert_string_equal(d->edges[0].waits_method, "Host.Account::Credit");
	assert_string_equal(d->edges[0].waits_location, "Program.cs:29");
	assert_string_equal(d->edges[0].held_method, "Host.Account::Debit");
	assert_string_equal(d->edges[0].held_location, "Program.cs:28");
	assert_int_equal(d->edges[1].thread, 5);
	assert_int_equal(d->edges[1].holder_thread, 6);
	rp_free(&r);
	free(edges);
	free(extra);
}

/* A deadlock found in several files (other threads, its edges in another order) is kept once; another
 * set of sites is another deadlock, and two edges at the same sites are not one edge twice over. */
static void test_deadlocks_merge(void **state)
{
	struct rp_report r = RP_REPORT_INIT;
	char *one = account_deadlock(6, 5, 0), *again = account_deadlock(9, 8, 1);
	char *x = wait_json(3, "A::Credit", "A.cs:9", 4, "A::Debit", "A.cs:8");
	char *y = wait_json(4, "A::Credit", "A.cs:9", 3, "A::Debit", "A.cs:8");
	char *z = wait_json(4, "B::Credit", "B.cs:9", 3, "B::Debit", "B.cs:8");
	char *mixed = NULL, *same = NULL;
	assert_true(asprintf(&mixed, "%s, %s", x, z) > 0);
	assert_true(asprintf(&same, "%s, %s", x, y) > 0);
	char *e1 = deadlocks_extra(one, "", 0), *e2 = deadlocks_extra(again, mixed, 2), *e3 = deadlocks_extra(same, one, 1);
	(void)state;
	add_report(&r, e1);
	add_report(&r, e2);
	add_report(&r, e3);
	assert_int_equal(r.n_processes, 3);
	assert_int_equal(r.n_deadlocks, 3);
	assert_int_equal(r.deadlocks_not_kept, 3);
	/* in the order found: the first file's, then the second's other one, then the third's (A twice) */
	assert_int_equal(r.deadlocks[0].process, 0);
	assert_int_equal(r.deadlocks[0].edges[0].thread, 6);
	assert_int_equal(r.deadlocks[1].process, 1);
	assert_string_equal(r.deadlocks[1].edges[1].waits_location, "B.cs:9");
	assert_int_equal(r.deadlocks[2].process, 2);
	assert_string_equal(r.deadlocks[2].edges[1].waits_location, "A.cs:9");
	rp_free(&r);
	free(one), free(again), free(x), free(y), free(z), free(mixed), free(same), free(e1), free(e2), free(e3);
}

/* Nesting far deeper than a report has is refused, not a stack overflow. */
static void test_deep_nesting(void **state)
{
	enum { DEPTH = 100000 };
	char *deep = malloc(2 * DEPTH + 1);
	(void)state;
	memset(deep, '[', DEPTH);
	memset(deep + DEPTH, ']', DEPTH);
	deep[2 * DEPTH] = 0;
	refused(deep, LT_E_REPORT, "depth");
	char *site = site_json("App.P::Run", "P.cs:12", 5, 1, 1, NULL), *json;
	/* the same nesting as an unknown field of a site */
	assert_true(asprintf(&json, "%.*s, \"deep\": %s}", (int)strlen(site) - 1, site, deep) > 0);
	char *report = report_json(json, NULL);
	refused(report, LT_E_REPORT, "depth");
	free(report);
	free(json);
	free(site);
	free(deep);
}

/* Unknown fields are ignored (a later version 1 may add some). */
static void test_unknown_fields(void **state)
{
	struct rp_report r = RP_REPORT_INIT;
	char *site = site_json("App.P::Run", "P.cs:12", 5, 1, 1, NULL), *json;
	(void)state;
	assert_true(asprintf(&json, "%.*s, \"later\": {\"a\": [1, {\"b\": null}]}}", (int)strlen(site) - 1, site) > 0);
	char *report = report_json(json, ", \"also_later\": true");
	assert_int_equal(add_text(&r, report), 0);
	assert_int_equal(r.n_sites, 1);
	rp_free(&r);
	free(report);
	free(json);
	free(site);
}

static char *to_text(struct lt_buf *b)
{
	assert_int_equal(lt_buf_u8(b, 0), 0);
	return (char *)b->data;
}

/* A method name that tries to close the script element or open a comment stays data. */
static void test_html_escapes(void **state)
{
	static const char *const evil = "</script><script>alert(1)</script><!--&amp;";
	struct rp_report r = RP_REPORT_INIT;
	struct lt_buf b = LT_BUF_INIT, clean = LT_BUF_INIT;
	(void)state;
	one_site(&r, evil, 1, 1, 1, "[1.1, 1]");
	assert_int_equal(rp_write_html(&r, &b), 0);
	char *page = to_text(&b);
	rp_free(&r);
	one_site(&r, "App.P::Run", 1, 1, 1, "[1.1, 1]");
	assert_int_equal(rp_write_html(&r, &clean), 0);
	char *plain = to_text(&clean);
	/* as many script elements and comments as the page without the name: the name opened none */
	size_t opened = 0, plain_opened = 0;
	for (char *p = page; (p = strstr(p, "<script")); p++)
		opened++;
	for (char *p = plain; (p = strstr(p, "<script")); p++)
		plain_opened++;
	assert_int_equal(opened, plain_opened);
	assert_null(strstr(page, "alert(1)</script>"));
	assert_non_null(strstr(page, "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"));
	assert_non_null(strstr(page, "\\u0026amp;"));
	assert_int_equal(strstr(page, "<!--") - page, strstr(plain, "<!--") - plain); /* only the template's */
	lt_buf_free(&b);
	lt_buf_free(&clean);
	rp_free(&r);
}

/* The profile, unzipped and decoded, holds each site's figures under the three sample types. */
/* r's pprof profile (written into b: gzip, checked) unpacked; free with rp__profile__free_unpacked. */
static Rp__Profile *pprof_of(const struct rp_report *r, struct lt_buf *b)
{
	assert_int_equal(rp_write_pprof(r, b), 0);
	assert_true(b->len > 2 && b->data[0] == 0x1f && b->data[1] == 0x8b);
	uLongf size = 1 << 20;
	uint8_t *raw = malloc(size);
	assert_non_null(raw);
	z_stream z = { .next_in = b->data, .avail_in = (uInt)b->len, .next_out = raw, .avail_out = (uInt)size };
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	Rp__Profile *p = rp__profile__unpack(NULL, z.total_out, raw);
	inflateEnd(&z);
	free(raw);
	assert_non_null(p);
	return p;
}

static void test_pprof(void **state)
{
	struct rp_report r = RP_REPORT_INIT;
	struct lt_buf b = LT_BUF_INIT;
	(void)state;
	one_site(&r, "App.P::Run", 3, 30, 12, NULL);
	one_site(&r, "App.P::Other", 1, 7.25, 7.25, NULL);
	rp_sort(&r);
	Rp__Profile *p = pprof_of(&r, &b);
	assert_string_equal(p->string_table[0], "");
	assert_int_equal(p->n_sample_type, 3);
	const char *names[3][2] = { { "contentions", "count" }, { "delay", "nanoseconds" }, { "hold", "nanoseconds" } };
	for (int k = 0; k < 3; k++) {
		assert_string_equal(p->string_table[p->sample_type[k]->type], names[k][0]);
		assert_string_equal(p->string_table[p->sample_type[k]->unit], names[k][1]);
	}
	assert_int_equal(p->n_sample, r.n_sites);
	for (size_t i = 0; i < p->n_sample; i++) {
		const struct rp_site *s = &r.sites[i];
		const Rp__Sample *smp = p->sample[i];
		assert_int_equal(smp->value[0], s->contended);
		assert_int_equal(smp->value[1], s->wait.total);
		assert_int_equal(smp->value[2], s->hold.total);
		const Rp__Location *loc = p->location[smp->location_id[0] - 1];
		assert_int_equal(loc->id, smp->location_id[0]);
		assert_int_equal(loc->line[0]->line, s->line);
		const Rp__Function *f = p->function[loc->line[0]->function_id - 1];
		assert_string_equal(p->string_table[f->name], s->method);
		assert_string_equal(p->string_table[f->filename], s->file);
	}
	rp__profile__free_unpacked(p, NULL);
	lt_buf_free(&b);
	rp_free(&r);
}

/* A site's "stacks": one waiter stack from A, one holder stack from B, holds not captured. */
static const char stacks_field[] =
	"\"failed\": 0, \"stacks\": ["
	"{\"role\": \"waiter\", \"what\": \"stack\", \"count\": 1, \"wait_ms\": 2, \"hold_ms\": 0.5, \"frames\": ["
	"{\"method\": \"App.P::Run\", \"file\": \"/src/App/P.cs\", \"line\": 12}, {\"method\": \"App.P::A\", \"file\": \"/src/App/P.cs\", \"line\": 40}]}, "
	"{\"role\": \"holder\", \"what\": \"stack\", \"count\": 2, \"wait_ms\": 0, \"hold_ms\": 0.75, \"frames\": ["
	"{\"method\": \"App.P::Run\", \"file\": \"/src/App/P.cs\", \"line\": 12}, {\"method\": \"App.P::B\", \"file\": null, \"line\": null}]}, "
	"{\"role\": \"holder\", \"what\": \"not_captured\", \"count\": 1, \"wait_ms\": 0, \"hold_ms\": 0.5, \"frames\": []}]";

/* Two reports of a site with stacks_field, added up and sorted. */
static void stacks_report(struct rp_report *r)
{
	char *site = site_json("App.P::Run", "P.cs:12", 5, 3, 1, "[0.0001, 1]"), *changed = NULL, *at = strstr(site, "\"failed\": 0");
	assert_non_null(at);
	assert_true(asprintf(&changed, "%.*s%s%s", (int)(at - site), site, stacks_field, at + strlen("\"failed\": 0")) > 0);
	char *json = report_json(changed, NULL);
	assert_int_equal(add_text(r, json), 0);
	assert_int_equal(add_text(r, json), 0);
	rp_sort(r);
	free(site);
	free(changed);
	free(json);
}

/* Stacks read, added up (the same role, kind and frames), ordered; refused when malformed. */
static void test_stacks_read(void **state)
{
	struct rp_report r = RP_REPORT_INIT;
	(void)state;
	stacks_report(&r);
	assert_int_equal(r.n_sites, 1);
	const struct rp_site *s = &r.sites[0];
	assert_int_equal(s->n_stacks, 3);
	assert_int_equal(s->stacks[0].role, RP_WAITER);
	assert_int_equal(s->stacks[0].count, 2);
	assert_int_equal(s->stacks[0].wait_ns, 4000000);
	assert_int_equal(s->stacks[0].n_frames, 2);
	assert_string_equal(s->stacks[0].frames[1].method, "App.P::A");
	assert_int_equal(s->stacks[0].frames[1].line, 40);
	assert_int_equal(s->stacks[1].role, RP_HOLDER);
	assert_int_equal(s->stacks[1].what, RP_STACK);
	assert_int_equal(s->stacks[1].hold_ns, 1500000);
	assert_null(s->stacks[1].frames[1].file);
	assert_int_equal(s->stacks[1].frames[1].line, 0);
	assert_int_equal(s->stacks[2].what, RP_NOT_CAPTURED);
	assert_int_equal(s->stacks[2].count, 2);
	rp_free(&r);
	static const struct {
		const char *stacks, *where;
	} bad[] = {
		{ "\"failed\": 0, \"stacks\": {}", "sites[0].stacks: not an array" },
		{ "\"failed\": 0, \"stacks\": [3]", "sites[0].stacks[0]: not an object" },
		{ "\"failed\": 0, \"stacks\": [{\"role\": \"owner\"}]", "sites[0].stacks[0].role: not waiter or holder" },
		{ "\"failed\": 0, \"stacks\": [{\"role\": \"waiter\", \"what\": \"all\"}]", "sites[0].stacks[0].what: not stack, other" },
		{ "\"failed\": 0, \"stacks\": [{\"role\": \"waiter\", \"what\": \"stack\", \"count\": -1}]", "sites[0].stacks[0].count: out of range" },
		{ "\"failed\": 0, \"stacks\": [{\"role\": \"waiter\", \"what\": \"stack\", \"count\": 1, \"wait_ms\": 1, \"hold_ms\": 0}]",
		  "sites[0].stacks[0].frames: missing" },
		{ "\"failed\": 0, \"stacks\": [{\"role\": \"waiter\", \"what\": \"stack\", \"count\": 1, \"wait_ms\": 1, \"hold_ms\": 0, \"frames\": []}]",
		  "sites[0].stacks[0].frames: no frames" },
		{ "\"failed\": 0, \"stacks\": [{\"role\": \"waiter\", \"what\": \"other\", \"count\": 1, \"wait_ms\": 1, \"hold_ms\": 0, "
		  "\"frames\": [{\"method\": \"M\", \"file\": null, \"line\": null}]}]", "sites[0].stacks[0].frames: frames for a count" },
		{ "\"failed\": 0, \"stacks\": [{\"role\": \"holder\", \"what\": \"stack\", \"count\": 1, \"wait_ms\": 1, \"hold_ms\": 0, "
		  "\"frames\": [{\"method\": \"M\", \"file\": null, \"line\": 0}]}]", "sites[0].stacks[0].frames[0].line: not a line number" },
		{ "\"failed\": 0, \"stacks\": [{\"role\": \"holder\", \"what\": \"stack\", \"count\": 1, \"wait_ms\": 1, \"hold_ms\": 0, "
		  "\"frames\": [{\"file\": null, \"line\": 3}]}]", "sites[0].stacks[0].frames[0].method: missing" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		refused_site("\"failed\": 0", bad[i].stacks, bad[i].where);
}

/* pprof: a sample per captured stack with its frames, leaf first (a waiter's as contentions and delay, a holder's
 * as hold), then the site's own with the rest; each sample type adds up to the site's totals. */
static void test_stacks_pprof(void **state)
{
	struct rp_report r = RP_REPORT_INIT;
	struct lt_buf b = LT_BUF_INIT;
	(void)state;
	stacks_report(&r);
	Rp__Profile *p = pprof_of(&r, &b);
	assert_int_equal(p->n_sample, 3);
	const struct rp_site *s = &r.sites[0];
	const int64_t want[3][3] = { { 2, 4000000, 0 }, { 0, 0, 1500000 }, { s->contended - 2, s->wait.total - 4000000, s->hold.total - 1500000 } };
	const char *leaf_caller[3] = { "App.P::A", "App.P::B", NULL };
	int64_t sum[3] = { 0, 0, 0 };
	for (size_t i = 0; i < 3; i++) {
		const Rp__Sample *smp = p->sample[i];
		for (int k = 0; k < 3; k++) {
			assert_int_equal(smp->value[k], want[i][k]);
			sum[k] += smp->value[k];
		}
		assert_int_equal(smp->n_location_id, leaf_caller[i] ? 2 : 1);
		const Rp__Location *leaf = p->location[smp->location_id[0] - 1];
		assert_string_equal(p->string_table[p->function[leaf->line[0]->function_id - 1]->name], "App.P::Run");
		assert_int_equal(leaf->line[0]->line, 12);
		if (leaf_caller[i]) {
			const Rp__Location *up = p->location[smp->location_id[1] - 1];
			assert_string_equal(p->string_table[p->function[up->line[0]->function_id - 1]->name], leaf_caller[i]);
			assert_int_equal(up->line[0]->line, i == 0 ? 40 : 0);
		}
	}
	assert_int_equal(sum[0], s->contended);
	assert_int_equal(sum[1], s->wait.total);
	assert_int_equal(sum[2], s->hold.total);
	rp__profile__free_unpacked(p, NULL);
	lt_buf_free(&b);
	rp_free(&r);
}

/* text: the top stacks after the table, as the run-time's summary gives them. */
static void test_stacks_text(void **state)
{
	struct rp_report r = RP_REPORT_INIT;
	struct lt_buf b = LT_BUF_INIT;
	(void)state;
	stacks_report(&r);
	assert_int_equal(rp_write_text(&r, &b), 0);
	char *t = to_text(&b);
	assert_non_null(strstr(t, "top stacks (of each top site, the stacks of the longest waits, then of the longest holds; callers innermost first):\n"
				  "  App.P::Run at P.cs:12: 2 slow waits, 4.000 ms, from App.P::A (P.cs:40)\n"
				  "  App.P::Run at P.cs:12: 4 slow holds, 1.500 ms, from App.P::B\n"));
	assert_null(strstr(t, "not_captured"));
	lt_buf_free(&b);
	rp_free(&r);
}

/* check: one canonical line per site over a limit, the count over from the histogram. */
static void test_check(void **state)
{
	struct rp_report r = RP_REPORT_INIT;
	struct lt_buf b = LT_BUF_INIT;
	struct rp_limits limits = { 100 * INT64_C(1000000), -1, 0 };
	size_t over;
	(void)state;
	one_site(&r, "Shop.Inventory::Reserve", 41, 500, 152.3, "[0.0001, 30], [11, 8], [110, 2], [160, 1]");
	one_site(&r, "Shop.Inventory::Fast", 2, 1, 0.5, "[0.6, 2]");
	rp_sort(&r);
	assert_int_equal(rp_write_check(&r, &limits, &b, &over), 0);
	assert_int_equal(over, 1);
	assert_string_equal(to_text(&b), "/src/App/P.cs(12): error LT200: lock held 152.3 ms, limit 100 ms "
					 "(Shop.Inventory::Reserve, 3 of 41 acquisitions over)\n");
	lt_buf_free(&b);
	/* wait: 2.5 ms max in both sites, a limit of 2.5 ms is reached; no histogram: no count over */
	limits.max_hold_ns = -1;
	limits.max_wait_ns = 2500000;
	assert_int_equal(rp_write_check(&r, &limits, &b, &over), 0);
	assert_int_equal(over, 2);
	assert_non_null(strstr(to_text(&b), "error LT201: lock waited 2.5 ms, limit 2.5 ms (Shop.Inventory::Reserve, 41 acquisitions)\n"));
	lt_buf_free(&b);
	rp_free(&r);
}

/* check: a counting semaphore's hold (hold_applies false: not measured, zeros) and the hold of a site
 * that released none (a failed try) are over no hold limit, not even 0 ms; their waits are checked as any. */
static void test_check_hold_not_measured(void **state)
{
	struct rp_report r = RP_REPORT_INIT;
	struct lt_buf b = LT_BUF_INIT;
	struct rp_limits limits = { 0, 0, 0 };
	size_t over;
	char *site = site_json("App.Pool::Take", "P.cs:12", 4, 0, 0, "");
	char *counting = NULL, *json = NULL;
	(void)state;
	assert_true(asprintf(&counting, "%.*s, \"hold_applies\": false}", (int)strlen(site) - 1, site) > 0);
	json = report_json(counting, NULL);
	assert_int_equal(add_text(&r, json), 0);
	assert_true(r.sites[0].hold_na);
	one_site(&r, "App.P::Poll", 0, 0, 0, "");
	rp_sort(&r);
	assert_int_equal(rp_write_check(&r, &limits, &b, &over), 0);
	assert_int_equal(over, 2);
	assert_string_equal(to_text(&b), "/src/App/P.cs(12): error LT201: lock waited 2.5 ms, limit 0 ms "
					 "(App.P::Poll, 0 acquisitions)\n"
					 "/src/App/P.cs(12): error LT201: lock waited 2.5 ms, limit 0 ms "
					 "(App.Pool::Take, 4 acquisitions)\n");
	lt_buf_free(&b);
	free(site);
	free(counting);
	free(json);
	rp_free(&r);
}

/* The text table: a totals line, a head line and one aligned row per site. */
static void test_text(void **state)
{
	struct rp_report r = RP_REPORT_INIT;
	struct lt_buf b = LT_BUF_INIT;
	(void)state;
	one_site(&r, "App.P::Run", 3, 30, 12, NULL);
	one_site(&r, "App.P::\xc3\xa9t\xc3\xa9", 1, 7.25, 7.25, NULL);
	rp_sort(&r);
	assert_int_equal(rp_write_text(&r, &b), 0);
	char *t = to_text(&b);
	assert_non_null(strstr(t, "summary: 2 sites in 1 assembly from 2 processes; 4 acquisitions, 2 contended, 0 failed tries; wait 5.000 ms, hold 37.250 ms\n"));
	char *head = strstr(t, "method"), *row1 = strchr(head, '\n') + 1, *row2 = strchr(row1, '\n') + 1;
	/* the numbers end in the same column: rows of equal width in characters (é is two bytes) */
	assert_int_equal(strchr(row1, '\n') - row1, strchr(head, '\n') - head);
	assert_int_equal(strchr(row2, '\n') - row2 - 2, strchr(head, '\n') - head);
	lt_buf_free(&b);
	rp_free(&r);
}

/* The text's milliseconds as the run-time's summary writes them: to the microsecond, half up, in integers. A
 * double's "%.3f" printed 28.4885 ms (28,488,500 ns) as 28.488 where the summary printed 28.489. */
static void test_text_rounds_as_summary(void **state)
{
	struct rp_report r = RP_REPORT_INIT;
	struct lt_buf b = LT_BUF_INIT;
	(void)state;
	one_site(&r, "App.P::Run", 2, 28.4885, 28.4885, NULL);
	rp_sort(&r);
	assert_int_equal(rp_write_text(&r, &b), 0);
	char *t = to_text(&b);
	assert_non_null(strstr(t, "; wait 2.500 ms, hold 28.489 ms\n"));
	assert_non_null(strstr(t, "  28.489  "));     /* hold total and max in the row */
	assert_null(strstr(t, "28.488"));
	lt_buf_free(&b);
	rp_free(&r);
}

/* After the table, the potential deadlocks and deadlocks as the run-time's summary gives them. */
static void test_deadlocks_text(void **state)
{
	struct rp_report r = RP_REPORT_INIT;
	struct lt_buf b = LT_BUF_INIT;
	char *edges = account_deadlock(6, 5, 0), *extra = NULL, *dl = deadlocks_extra(edges, "", 2);
	(void)state;
	assert_true(asprintf(&extra, "%s, \"lock_order_cycles\": [{\"edges\": [{\"held\": {\"method\": \"Host.Account::Debit\", "
				     "\"location\": \"Program.cs:28\"}, \"acquired\": {\"method\": \"Host.Account::Credit\", \"location\": "
				     "\"Program.cs:29\"}, \"thread\": 6}, {\"held\": {\"method\": \"Host.Account::Debit\", \"location\": "
				     "\"Program.cs:28\"}, \"acquired\": {\"method\": \"Host.Account::Debit\", \"location\": \"Program.cs:30\"}, "
				     "\"thread\": 5}]}]",
			     dl) > 0);
	add_report(&r, extra);
	assert_int_equal(rp_write_text(&r, &b), 0);
	char *t = to_text(&b), *after = strstr(t, "\n1 potential deadlock ");
	assert_non_null(after);
	assert_string_equal(after + 1,
			    "1 potential deadlock (locks taken in opposite orders; sites that held, then sites that acquired):\n"
			    "  Program.cs:28 then Program.cs:29 (Host.Account::Debit then Host.Account::Credit), and in the other "
			    "order at Program.cs:28 then Program.cs:30 (Host.Account::Debit)\n"
			    "1 deadlock (threads that waited for each other):\n"
			    "  thread 6 waits at Program.cs:29 (Host.Account::Credit) for the lock thread 5 took at Program.cs:28 "
			    "(Host.Account::Debit); thread 5 waits at Program.cs:29 (Host.Account::Credit) for the lock thread 6 took "
			    "at Program.cs:28 (Host.Account::Debit)\n"
			    "2 more deadlocks not kept (at most 100 per process)\n");
	lt_buf_free(&b);
	rp_free(&r);
	/* no sites at all: the totals line, then the deadlock */
	char *none = report_json("", dl);
	assert_int_equal(add_text(&r, none), 0);
	assert_int_equal(rp_write_text(&r, &b), 0);
	t = to_text(&b);
	assert_true(!strncmp(t, "summary: 0 sites ", 17));
	assert_non_null(strstr(t, "hold 0.000 ms\n1 deadlock (threads that waited for each other):\n  thread 6 waits "));
	lt_buf_free(&b);
	rp_free(&r);
	free(none);
	free(extra);
	free(dl);
	free(edges);
}

/* "held_now" adds up (counts added, the longest the larger) and the text lists the sites holding, longest
 * first, after the table, as the run-time's summary does. */
static void test_held_now(void **state)
{
	struct rp_report r = RP_REPORT_INIT;
	struct lt_buf b = LT_BUF_INIT;
	static const struct {
		const char *method;
		long count;
		double longest;
	} held[] = { { "App.P::Short", 1, 2.5 }, { "App.P::Long", 3, 1534.25 }, { "App.P::Long", 2, 1600.125 }, { "App.P::None", 0, 0 } };
	(void)state;
	for (size_t i = 0; i < sizeof held / sizeof *held; i++) {
		char *site = site_json(held[i].method, "P.cs:12", 1, 1, 1, NULL), *with = NULL, *json;
		assert_true(asprintf(&with, "%.*s, \"held_now\": {\"count\": %ld, \"longest_ms\": %.6f}}", (int)strlen(site) - 1, site,
				     held[i].count, held[i].longest) > 0);
		json = report_json(with, NULL);
		assert_int_equal(add_text(&r, json), 0);
		free(json);
		free(with);
		free(site);
	}
	rp_sort(&r);
	assert_int_equal(rp_write_text(&r, &b), 0);
	char *t = to_text(&b), *at = strstr(t, "\nheld now");
	assert_non_null(at);
	assert_string_equal(at + 1, "held now, as the reports were written (longest first):\n"
				    "  App.P::Long at P.cs:12: 5 holds, the longest 1600.125 ms so far\n"
				    "  App.P::Short at P.cs:12: 1 hold, the longest 2.500 ms so far\n");
	lt_buf_free(&b);
	rp_free(&r);
}

/* "waiting_now" adds up as "held_now" does and the text lists the sites where threads wait, longest first, after
 * the holds in progress; "unwritten_lines" adds up (absent: 0) and the summary line says how many could not be
 * written; the page has both; check counts a wait in progress over --max-wait-ms as LT201. */
static void test_waiting_now(void **state)
{
	struct rp_report r = RP_REPORT_INIT;
	struct lt_buf b = LT_BUF_INIT;
	struct rp_limits limits = { -1, 1000 * INT64_C(1000000), 0 };
	size_t over;
	static const struct {
		const char *method;
		long waiting;
		double longest;
		const char *unwritten; /* the report's "unwritten_lines", or none */
	} waits[] = { { "App.P::Credit", 1, 1200.5, ", \"unwritten_lines\": 1990" }, { "App.P::Debit", 2, 3000.25, NULL },
		      { "App.P::Credit", 2, 4.125, ", \"unwritten_lines\": 10" }, { "App.P::Idle", 0, 0, ", \"unwritten_lines\": 0" } };
	(void)state;
	for (size_t i = 0; i < sizeof waits / sizeof *waits; i++) {
		char *site = site_json(waits[i].method, "P.cs:12", 0, 0, 0, NULL), *with = NULL, *json;
		assert_true(asprintf(&with, "%.*s, \"held_now\": {\"count\": 0, \"longest_ms\": 0}, "
					    "\"waiting_now\": {\"count\": %ld, \"longest_ms\": %.6f}}",
				     (int)strlen(site) - 1, site, waits[i].waiting, waits[i].longest) > 0);
		json = report_json(with, waits[i].unwritten);
		assert_int_equal(add_text(&r, json), 0);
		free(json);
		free(with);
		free(site);
	}
	assert_int_equal(r.unwritten_lines, 2000);
	rp_sort(&r);
	for (size_t i = 0; i < r.n_sites; i++)
		if (!strcmp(r.sites[i].method, "App.P::Credit")) {
			assert_int_equal(r.sites[i].waiting_now, 3);
			assert_int_equal(r.sites[i].waiting_longest_ns, INT64_C(1200500000));
		}
	assert_int_equal(rp_write_text(&r, &b), 0);
	char *t = to_text(&b);
	assert_non_null(strstr(t, "; 2000 lines could not be written (the sink took nothing)\n"));
	char *at = strstr(t, "\nwaiting now");
	assert_non_null(at);
	assert_string_equal(at + 1, "waiting now, as the reports were written (longest first):\n"
				    "  App.P::Debit at P.cs:12: 2 threads, the longest 3000.250 ms so far\n"
				    "  App.P::Credit at P.cs:12: 3 threads, the longest 1200.500 ms so far\n");
	assert_null(strstr(t, "held now"));
	lt_buf_free(&b);
	assert_int_equal(rp_write_html(&r, &b), 0);
	t = to_text(&b);
	assert_non_null(strstr(t, "\"unwritten_lines\":2000"));
	assert_non_null(strstr(t, "\"waiting_now\":{\"count\":2,\"longest_ms\":3000.25}"));
	lt_buf_free(&b);
	/* no wait finished over 1 s (2.5 ms each); two sites have threads waiting longer than that so far */
	assert_int_equal(rp_write_check(&r, &limits, &b, &over), 0);
	assert_int_equal(over, 2);
	assert_string_equal(to_text(&b), "/src/App/P.cs(12): error LT201: lock waited 1200.5 ms so far, limit 1000 ms "
					 "(App.P::Credit, 3 threads waiting as the report was written)\n"
					 "/src/App/P.cs(12): error LT201: lock waited 3000.2 ms so far, limit 1000 ms "
					 "(App.P::Debit, 2 threads waiting as the report was written)\n");
	lt_buf_free(&b);
	rp_free(&r);
}

/* "reentries" is read (absent: 0, an older report), added up across reports and on the totals line as
 * the run-time's summary has it (only when there were any), and given to the page; a negative one is refused. */
static void test_reentries(void **state)
{
	struct rp_report r = RP_REPORT_INIT;
	struct lt_buf b = LT_BUF_INIT;
	static const char *const again[] = { ", \"reentries\": 1000}", ", \"reentries\": 1}", "}" };
	(void)state;
	for (size_t i = 0; i < sizeof again / sizeof *again; i++) {
		char *site = site_json("App.P::Deep", "P.cs:12", 1, 0, 0, NULL), *with = NULL, *json;
		assert_true(asprintf(&with, "%.*s%s", (int)strlen(site) - 1, site, again[i]) > 0);
		json = report_json(with, NULL);
		assert_int_equal(add_text(&r, json), 0);
		free(json);
		free(with);
		free(site);
	}
	rp_sort(&r);
	assert_int_equal(r.n_sites, 1);
	assert_int_equal(r.sites[0].reentries, 1001);
	assert_int_equal(rp_write_text(&r, &b), 0);
	assert_non_null(strstr(to_text(&b), "; 3 acquisitions, 3 contended, 0 failed tries, 1001 re-entries; wait "));
	lt_buf_free(&b);
	assert_int_equal(rp_write_html(&r, &b), 0);
	assert_non_null(strstr(to_text(&b), "\"reentries\":1001"));
	lt_buf_free(&b);
	rp_free(&r);
	/* none: nothing said */
	char *site = site_json("App.P::Flat", "P.cs:12", 1, 0, 0, NULL), *json = report_json(site, NULL);
	assert_int_equal(add_text(&r, json), 0);
	assert_int_equal(rp_write_text(&r, &b), 0);
	assert_null(strstr(to_text(&b), "re-entr"));
	lt_buf_free(&b);
	rp_free(&r);
	free(json);
	free(site);
	char *bad = NULL;
	site = site_json("App.P::Bad", "P.cs:12", 1, 0, 0, NULL);
	assert_true(asprintf(&bad, "%.*s, \"reentries\": -1}", (int)strlen(site) - 1, site) > 0);
	json = report_json(bad, NULL);
	assert_int_not_equal(add_text(&r, json), 0);
	rp_free(&r);
	free(json);
	free(bad);
	free(site);
}

/* check: an LT202 line per deadlock, on the line where its first thread waits, else where the lock it
 * waits for was taken, else on the report file; none when deadlocks are not checked. */
static void test_deadlocks_check(void **state)
{
	struct rp_report r = RP_REPORT_INIT;
	struct lt_buf b = LT_BUF_INIT;
	struct rp_limits limits = { -1, -1, 1 };
	size_t over;
	char *edges = account_deadlock(6, 5, 0), *dl = deadlocks_extra(edges, "", 0);
	static const char said[] = "error LT202: deadlock: thread 6 waits at Program.cs:29 (Host.Account::Credit) for the lock "
				   "thread 5 took at Program.cs:28 (Host.Account::Debit); thread 5 waits at Program.cs:29 "
				   "(Host.Account::Credit) for the lock thread 6 took at Program.cs:28 (Host.Account::Debit)\n";
	char *want = NULL;
	(void)state;
	/* the waiting site is not in the report (it never acquired): the held site's line */
	add_report(&r, dl);
	rp_sort(&r);
	assert_int_equal(rp_write_check(&r, &limits, &b, &over), 0);
	assert_int_equal(over, 1);
	assert_true(asprintf(&want, "/src/App/P.cs(12): %s", said) > 0);
	assert_string_equal(to_text(&b), want);
	free(want);
	lt_buf_free(&b);
	/* with the waiting site (another file of the same program): its line */
	char *site = site_json("Host.Account::Credit", "Program.cs:29", 1, 1, 1, NULL), *json;
	assert_non_null(strstr(site, "\"line\": 12"));
	memcpy(strstr(site, "\"line\": 12") + 8, "29", 2);
	json = report_json(site, NULL);
	assert_int_equal(add_text(&r, json), 0);
	rp_sort(&r);
	assert_int_equal(rp_write_check(&r, &limits, &b, &over), 0);
	assert_int_equal(over, 1);
	assert_true(asprintf(&want, "/src/App/P.cs(29): %s", said) > 0);
	assert_string_equal(to_text(&b), want);
	free(want);
	lt_buf_free(&b);
	/* not checked */
	limits.deadlocks = 0;
	assert_int_equal(rp_write_check(&r, &limits, &b, &over), 0);
	assert_int_equal(over, 0);
	assert_int_equal(b.len, 0);
	rp_free(&r);
	free(json);
	free(site);
	/* neither site has a file: the report file it was read from, or its process when read as text */
	json = report_json("", dl);
	limits.deadlocks = 1;
	assert_int_equal(add_text(&r, json), 0);
	assert_int_equal(rp_write_check(&r, &limits, &b, &over), 0);
	assert_true(asprintf(&want, "App: %s", said) > 0);
	assert_string_equal(to_text(&b), want);
	free(want);
	lt_buf_free(&b);
	rp_free(&r);
	char path[] = "/tmp/lt-report-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	assert_int_equal(fputs(json, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rp_add_file(&r, path), 0);
	assert_string_equal(r.processes[0].path, path);
	assert_int_equal(rp_write_check(&r, &limits, &b, &over), 0);
	assert_true(asprintf(&want, "%s: %s", path, said) > 0);
	assert_string_equal(to_text(&b), want);
	unlink(path);
	free(want);
	lt_buf_free(&b);
	rp_free(&r);
	free(json);
	free(dl);
	free(edges);
}

/* A timeline event's JSON: thread `t` named `name` (NULL: null) at site M@L waited from `from` to `acq` and held
 * to `rel` (ms; rel < 0: null), behind the holds `behind` ("" for none: "{\"thread\": 4, \"hold_from_ms\": 1}"). */
static char *event_json(long t, const char *name, const char *m, const char *l, double from, double acq, double rel, const char *behind)
{
	char *s = NULL, named[64], released[32];
	snprintf(named, sizeof named, name ? "\"%s\"" : "null", name);
	snprintf(released, sizeof released, rel < 0 ? "null" : "%g", rel);
	assert_true(asprintf(&s,
			     "{\"thread\": %ld, \"thread_name\": %s, \"assembly\": \"App\", \"method\": \"%s\", \"location\": \"%s\", "
			     "\"wait_from_ms\": %g, \"acquired_ms\": %g, \"released_ms\": %s, \"behind\": [%s]}",
			     t, named, m, l, from, acq, released, behind) > 0);
	return s;
}

/* The report's "timeline" as a report_json extra, of the events given (JSON, comma-separated). */
static char *timeline_extra(const char *events, long added)
{
	char *s = NULL;
	assert_true(asprintf(&s, ", \"timeline\": {\"capacity\": 100, \"added\": %ld, \"events\": [%s]}", added, events) > 0);
	return s;
}

/* Thread 4 ("holder") holds A::Post from 10 to 110 ms; thread 9 (no name) waits at A::Read from 20 to 111 ms behind it,
 * holds to 111.5; `more`, when not NULL, one more event after them. Added as the report of process 7 (report_json). */
static void timeline_report(struct rp_report *r, const char *more, const char *extra)
{
	char *hold = event_json(4, "holder", "A::Post", "A.cs:20", 10, 10, 110, "");
	char *wait = event_json(9, NULL, "A::Read", "A.cs:34", 20, 111, 111.5, "{\"thread\": 4, \"hold_from_ms\": 10}");
	char *events = NULL, *tl, *all = NULL;
	assert_true(asprintf(&events, "%s, %s%s%s", hold, wait, more ? ", " : "", more ? more : "") > 0);
	tl = timeline_extra(events, 3);
	assert_true(asprintf(&all, "%s%s", tl, extra ? extra : "") > 0);
	add_report(r, all);
	free(hold), free(wait), free(events), free(tl), free(all);
}

static void test_timeline_read(void **state)
{
	struct rp_report r = RP_REPORT_INIT;
	(void)state;
	add_report(&r, NULL);
	assert_int_equal(r.n_timelines, 0); /* a report without one (before version 3) */
	timeline_report(&r, NULL, NULL);
	assert_int_equal(r.n_timelines, 1);
	const struct rp_timeline *t = &r.timelines[0];
	assert_int_equal(t->pid, 7);
	assert_string_equal(t->name, "App");
	assert_int_equal(t->capacity, 100);
	assert_int_equal(t->n_events, 2);
	assert_string_equal(t->events[0].thread_name, "holder");
	assert_null(t->events[1].thread_name);
	assert_int_equal(t->events[0].released_ns, 110000000);
	assert_int_equal(t->events[1].wait_from_ns, 20000000);
	assert_int_equal(t->events[1].acquired_ns, 111000000);
	assert_int_equal(t->events[1].n_behind, 1);
	assert_int_equal(t->events[1].behind[0].thread, 4);
	assert_int_equal(t->events[1].behind[0].hold_from_ns, 10000000);
	assert_true(t->events[1].acquired);
	rp_free(&r);
}

/* Two reports of one process (the same pid, start and name) are one timeline, each event once, by wait start;
 * another process's is another. */
static void test_timeline_merge(void **state)
{
	struct rp_report r = RP_REPORT_INIT;
	char *early = event_json(5, "w", "A::Read", "A.cs:34", 1, 2, -1, "");
	(void)state;
	timeline_report(&r, NULL, NULL);
	timeline_report(&r, early, NULL);
	assert_int_equal(r.n_processes, 2);
	assert_int_equal(r.n_timelines, 1);
	assert_int_equal(r.timelines[0].n_events, 3);
	assert_int_equal(r.timelines[0].events[0].thread, 5);
	assert_int_equal(r.timelines[0].events[0].released_ns, -1);
	assert_int_equal(r.timelines[0].events[1].thread, 4);
	assert_int_equal(r.timelines[0].events[2].thread, 9);
	char *json = report_json("", ", \"timeline\": {\"capacity\": 5, \"added\": 0, \"events\": []}");
	char *at = strstr(json, "\"pid\": 7");
	at[7] = '8';
	assert_int_equal(add_text(&r, json), 0);
	assert_int_equal(r.n_timelines, 2);
	assert_int_equal(r.timelines[1].pid, 8);
	rp_free(&r);
	free(early), free(json);
}

/* A malformed timeline is refused naming where. */
static void test_timeline_hostile(void **state)
{
	static const struct {
		const char *events, *where;
	} bad[] = {
		{ "1", "timeline.events[0]: not an object" },
		{ "{\"thread\": 1}", "timeline.events[0].assembly: missing" },
	};
	static const struct {
		double from, acq, rel;
		const char *behind, *where;
	} times[] = {
		{ 5, 4, 6, "", "timeline.events[0].acquired_ms: before wait_from_ms" },
		{ 5, 6, 5.5, "", "timeline.events[0].released_ms: before acquired_ms" },
		{ -1, 6, 7, "", "timeline.events[0].wait_from_ms: out of range" },
		{ 5, 6, 7, "{\"thread\": \"4\", \"hold_from_ms\": 1}", "timeline.events[0].behind[0].thread: not a whole number" },
		{ 5, 6, 7, "{\"thread\": 4}", "timeline.events[0].behind[0].hold_from_ms: missing" },
		{ 5, 6, 7, "{}, {}, {}, {}", "timeline.events[0].behind: not an array of at most 3 holds" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char *extra = timeline_extra(bad[i].events, 1), *json = report_json("", extra);
		refused(json, LT_E_REPORT, bad[i].where);
		free(extra), free(json);
	}
	for (size_t i = 0; i < sizeof times / sizeof *times; i++) {
		char *e = event_json(1, NULL, "A::M", "A.cs:1", times[i].from, times[i].acq, times[i].rel, times[i].behind);
		char *extra = timeline_extra(e, 1), *json = report_json("", extra);
		refused(json, LT_E_REPORT, times[i].where);
		free(e), free(extra), free(json);
	}
	char *e = event_json(1, NULL, "A::M", "A.cs:1", 1, 2, 3, ""), *noacq = NULL;
	assert_true(asprintf(&noacq, "%.*s, \"acquired\": false}", (int)strlen(e) - 1, e) > 0);
	char *extra = timeline_extra(noacq, 1), *json = report_json("", extra);
	refused(json, LT_E_REPORT, "timeline.events[0].acquired: false for a lock released");
	free(e), free(noacq), free(extra), free(json);
	json = report_json("", ", \"timeline\": []");
	refused(json, LT_E_REPORT, "timeline: not an object");
	free(json);
}

/* The trace event with "ph" `ph` and, when not NULL, "name" `name` and "tid" `tid` (>= 0) - the first, or NULL. */
static json_t *trace_event(json_t *events, const char *ph, const char *name, long tid)
{
	size_t i;
	json_t *e;
	json_array_foreach(events, i, e) {
		if (strcmp(json_string_value(json_object_get(e, "ph")), ph) ||
		    (name && strcmp(json_string_value(json_object_get(e, "name")), name)) ||
		    (tid >= 0 && json_integer_value(json_object_get(e, "tid")) != tid))
			continue;
		return e;
	}
	return NULL;
}

/* The trace: each thread named, the waits and holds as complete events in microseconds, an arrow from the
 * holder's hold to the wait behind it, the deadlock an instant event with its description. */
static void test_trace(void **state)
{
	struct rp_report r = RP_REPORT_INIT;
	struct lt_buf out = LT_BUF_INIT;
	char *edges = account_deadlock(6, 5, 0), *deadlocks = deadlocks_extra(edges, "", 0);
	(void)state;
	timeline_report(&r, NULL, deadlocks);
	assert_int_equal(rp_write_trace(&r, &out), 0);
	json_t *doc = json_loadb((const char *)out.data, out.len, 0, NULL), *events = json_object_get(doc, "traceEvents");
	assert_non_null(events);
	json_t *m4 = trace_event(events, "M", "thread_name", 4), *m9 = trace_event(events, "M", "thread_name", 9);
	assert_string_equal(json_string_value(json_object_get(json_object_get(m4, "args"), "name")), "holder");
	assert_string_equal(json_string_value(json_object_get(json_object_get(m9, "args"), "name")), "thread 9");
	json_t *hold = trace_event(events, "X", "hold A::Post (A.cs:20)", 4), *wait = trace_event(events, "X", "wait A::Read (A.cs:34)", 9);
	assert_non_null(hold);
	assert_non_null(wait);
	assert_true(json_real_value(json_object_get(hold, "ts")) == 10000 && json_real_value(json_object_get(hold, "dur")) == 100000);
	assert_true(json_real_value(json_object_get(wait, "ts")) == 20000 && json_real_value(json_object_get(wait, "dur")) == 90999.999); /* 1 ns before its hold */
	assert_int_equal(json_integer_value(json_object_get(wait, "pid")), 7);
	json_t *s = trace_event(events, "s", NULL, 4), *f = trace_event(events, "f", NULL, 9);
	assert_non_null(s);
	assert_non_null(f);
	assert_int_equal(json_integer_value(json_object_get(s, "id")), json_integer_value(json_object_get(f, "id")));
	assert_string_equal(json_string_value(json_object_get(f, "bp")), "e");
	assert_true(json_real_value(json_object_get(s, "ts")) == 110000); /* the hold's end, as the wait ended after it */
	assert_true(json_real_value(json_object_get(f, "ts")) == 110999); /* just before the wait's end */
	json_t *d = trace_event(events, "i", "deadlock", -1);
	assert_non_null(d);
	assert_non_null(strstr(json_string_value(json_object_get(json_object_get(d, "args"), "what")),
			       "thread 6 waits at Program.cs:29 (Host.Account::Credit)"));
	assert_true(json_real_value(json_object_get(d, "ts")) == 101500); /* at the report's end */
	json_decref(doc);
	lt_buf_free(&out);
	rp_free(&r);
	free(edges), free(deadlocks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_fields),   cmocka_unit_test(test_bucket_arithmetic),
		cmocka_unit_test(test_merge),          cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_deep_nesting),   cmocka_unit_test(test_unknown_fields),
		cmocka_unit_test(test_html_escapes),   cmocka_unit_test(test_pprof),
		cmocka_unit_test(test_stacks_read),    cmocka_unit_test(test_stacks_pprof),
		cmocka_unit_test(test_stacks_text),
		cmocka_unit_test(test_check),          cmocka_unit_test(test_check_hold_not_measured),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_text_rounds_as_summary),
		cmocka_unit_test(test_deadlocks_read), cmocka_unit_test(test_deadlocks_merge),
		cmocka_unit_test(test_deadlocks_text), cmocka_unit_test(test_deadlocks_check),
		cmocka_unit_test(test_held_now),       cmocka_unit_test(test_waiting_now),
		cmocka_unit_test(test_reentries),
		cmocka_unit_test(test_timeline_read),  cmocka_unit_test(test_timeline_merge),
		cmocka_unit_test(test_timeline_hostile), cmocka_unit_test(test_trace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
