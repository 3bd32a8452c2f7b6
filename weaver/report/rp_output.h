/* rp_output.h - what `locktime report` and `locktime check` write from a report (docs/report-format.md). */
#ifndef RP_OUTPUT_H
#define RP_OUTPUT_H

#include "lt_buf.h"
#include "rp_report.h"

/* The summary table of every site (r sorted with rp_sort), as the run-time prints it at exit but
 * without the "LockTime:" prefix: a totals line, then method, location, kind, acquired, contended,
 * failed, wait total/max/p99, hold total/max/p99 (ms, three decimals), text left, numbers right; then,
 * as the run-time's summary, the holds in progress ("held now, as the report was written (longest
 * first):" and a line per site holding, "  M at L: 3 holds, the longest 1534.250 ms so far"), the
 * potential deadlocks ("1 potential deadlock (locks taken in opposite orders; ...):" and a line each),
 * the deadlocks ("1 deadlock (threads that waited for each other):" and a line each,
 * rp_describe_deadlock) and "N more deadlocks not kept" when some were.
 * Returns 0, or -1 with LT_E_NOMEM. */
int rp_write_text(const struct rp_report *r, struct lt_buf *out);

/* Deadlock d as the run-time's line gives it after "LockTime: deadlock: " (Deadlocks.Describe): per edge
 * "thread 6 waits at Program.cs:29 (Host.Account::Credit) for the lock thread 5 took at Program.cs:28
 * (Host.Account::Debit)", "; " between them.  Returns 0, or -1 with LT_E_NOMEM. */
int rp_describe_deadlock(const struct rp_deadlock *d, struct lt_buf *out);

/* One self-contained HTML page (inline CSS, script and SVG; nothing fetched): the deadlocks first (in
 * red), the sortable and filterable site table, per-site histograms, holder blame and lock-order
 * cycles.  Every text from the report reaches the page only as escaped JSON read by the page's script
 * into text nodes.  Returns 0, or -1 with LT_E_NOMEM. */
int rp_write_html(const struct rp_report *r, struct lt_buf *out);

/* A gzipped pprof profile (profile.proto): sample types contentions/count, delay/nanoseconds and
 * hold/nanoseconds.  Per site, one sample per captured stack with its frames as Locations, leaf first
 * (a waiter stack: its slow waits as contentions and delay, hold 0 - the waiter profile, as Go's block
 * profile; a holder stack: its slow holds as hold only - the holder profile, as Go's mutex profile),
 * then one sample on the site's own frame with the rest of its contentions, delay and hold (fast
 * acquisitions, stacks not captured or not kept), so that each sample type adds up to the site's totals.
 * Each method and file is a Function, each frame a Location with its line.  Returns 0, or -1 with
 * LT_E_NOMEM. */
int rp_write_pprof(const struct rp_report *r, struct lt_buf *out);

/* The timelines as a Chrome Trace Event Format file (a JSON object with "traceEvents", times in
 * microseconds): per process (pid, start_utc and name; a pid two processes had is told apart by adding
 * 2^32) a process_name (its name) and, per thread of its timeline, a thread_name metadata event ("ph": "M": the
 * thread's name, else "thread N"); per event a complete event ("ph": "X", "cat" "wait" or "hold", named
 * "wait M (L)" / "hold M (L)", a try that gave up "wait, not acquired M (L)") for its wait (when it
 * waited; ending 1 ns before its hold) and its hold (when measured); per hold a wait waited behind that the timeline has, a flow
 * ("ph": "s" on the holder's thread inside its hold, "ph": "f" with "bp": "e" just before the wait's end,
 * one id); each deadlock an instant event ("ph": "i", scope "p") in its process, each potential
 * deadlock one of scope "g", at the end of the process's longest report.  Processes start at their
 * start_utc after the earliest one's.  Returns 0, or -1 with LT_E_NOMEM. */
int rp_write_trace(const struct rp_report *r, struct lt_buf *out);

/* Diagnostic codes of `locktime check` (docs/diagnostics.md). */
#define RP_LT_HOLD 200 /* a site's hold over --max-hold-ms */
#define RP_LT_WAIT 201 /* a site's wait over --max-wait-ms */
#define RP_LT_DEADLOCK 202 /* a deadlock in the report */

/* The limits of `locktime check`, in nanoseconds; negative for none; `deadlocks` nonzero: each deadlock
 * is an error too (--ignore-deadlocks: 0). */
struct rp_limits {
	int64_t max_hold_ns, max_wait_ns;
	int deadlocks;
};

/* One MSBuild canonical error line per site whose maximum hold (LT200) or wait (LT201) is at or over
 * its limit, on the site's source line:
 *   /src/Inventory.cs(42): error LT200: lock held 152.3 ms, limit 100 ms (Shop.Inventory::Reserve, 3 of 41 acquisitions over)
 * ("<assembly>: error ..." with the IL offset when the site has no file).  The count over comes from
 * the histogram (rp_count_over): "3 of 41", or "3 to 5 of 41" when the limit falls inside a bucket.
 * With limits->deadlocks, then one LT202 line per deadlock on the source line of the site where its first
 * thread waits (the report's site of that method and location with a file), or when the report has none
 * (a site that never acquired is not in it) of the site where the lock it waits for was taken, else on the
 * report file it came from (its process's path, or name when read from text):
 *   /src/Bank.cs(29): error LT202: deadlock: thread 6 waits at Bank.cs:29 (Bank::Credit) for the lock thread 5 took at ...
 * Sets *over to the number of lines.  Returns 0, or -1 with LT_E_NOMEM. */
int rp_write_check(const struct rp_report *r, const struct rp_limits *limits, struct lt_buf *out, size_t *over);

#endif
