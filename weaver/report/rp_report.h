/* rp_report.h - LockTime reports (docs/report-format.md) read into memory and merged.
 *
 * A report is the JSON file a woven program writes (format "locktime-report", version 1 to 3: 2 adds
 * each site's "stacks", 3 the process's "timeline").  Several
 * files read into one rp_report add up: sites with the same assembly, method and location become one
 * (counts and totals added, maxima the larger, histograms added, percentiles taken again from the
 * added histogram).  Durations are kept in nanoseconds.  Nothing here knows of HTML, pprof or text:
 * rp_html.c, rp_pprof.c, rp_text.c and rp_check.c write those from an rp_report.
 */
#ifndef RP_REPORT_H
#define RP_REPORT_H

#include <stddef.h>
#include <stdint.h>

/* Limits on what a report may hold (beyond them: LT_E_REPORT). */
#define RP_MAX_SITES 1000000     /* sites in one merged report */
#define RP_MAX_COUNT (INT64_C(1) << 53) /* any count: exact in a JSON number */
#define RP_MAX_MS 1e12           /* any duration, in ms (about 31 years) */
#define RP_DEADLOCKS_KEPT 100    /* deadlocks one run-time keeps (Deadlocks.MaxKept); the rest are counted */
#define RP_MAX_EVENTS 1000000    /* timeline events in one report (the run-time's LOCKTIME_TIMELINE at most) */
#define RP_LINKS 3               /* holds one timeline event links to at most (Timeline.Links) */

/* One histogram bucket: the values in [lower_ns, upper_ns). */
struct rp_bucket {
	int64_t upper_ns;
	int64_t count;
};

/* A site's durations in nanoseconds: total and maximum exact, percentiles as reported (or taken
 * again from the histogram after a merge). */
struct rp_durations {
	int64_t total, max, p50, p90, p99;
	struct rp_bucket *buckets; /* ascending upper_ns, counts > 0; NULL when the report had none */
	size_t n_buckets;
	int has_histogram;         /* the report gave one ("wait_histogram"/"hold_histogram") */
};

/* A holder that made the site wait: "waited_behind" (site, its waits behind that holder). */
struct rp_blame {
	char *method, *location;
	int64_t wait_ns;
	int64_t count;
};

/* One frame of a stack, innermost first: method as reports name them, file NULL and line 0 when unknown. */
struct rp_frame {
	char *method;
	char *file;
	int64_t line;
};

enum rp_role { RP_WAITER, RP_HOLDER };                     /* "role": a slow wait's stack, a slow hold's */
enum rp_what { RP_STACK, RP_OTHER, RP_NOT_CAPTURED };      /* "what": frames, stacks past those kept, not captured */

/* One aggregated stack of a site's slow acquisitions ("stacks"): its slow acquisitions of that role
 * with those frames, their count and wait and hold totals; frames only for RP_STACK. */
struct rp_stack {
	enum rp_role role;
	enum rp_what what;
	int64_t count, wait_ns, hold_ns;
	struct rp_frame *frames;
	size_t n_frames;
};

struct rp_site {
	char *assembly, *method, *location;
	char *file;   /* full path; NULL when unknown */
	int64_t line; /* 0 when unknown */
	char *kind;
	int64_t acquisitions, contended, failed;
	int64_t reentries;       /* "reentries": acquisitions of a lock the thread held already (0 when absent) */
	struct rp_durations wait, hold;
	int hold_na;             /* "hold_applies": false - the hold is not measured (a counting semaphore): hold is zeros */
	int has_blame;           /* "blamed_wait_ms" given: the waits others spent behind this site */
	int64_t blamed_wait_ns;
	struct rp_blame *behind; /* "waited_behind" */
	size_t n_behind;
	int64_t held_now;        /* "held_now.count": holds in progress as the report was written (0: none, or absent) */
	int64_t held_longest_ns; /* "held_now.longest_ms": how long the longest of them had been held */
	int64_t waiting_now;     /* "waiting_now.count": threads blocked in a lock call here as the report was written (a deadlock's) */
	int64_t waiting_longest_ns; /* "waiting_now.longest_ms": how long the longest of them had waited */
	struct rp_stack *stacks; /* "stacks" (none in version 1 reports); after rp_sort in rp_stacks_sort's order */
	size_t n_stacks;
};

/* One edge of a lock-order cycle: `thread` acquired at `acquired` while holding the lock it took at `held`. */
struct rp_edge {
	char *held_method, *held_location;
	char *acquired_method, *acquired_location;
	char *thread; /* as the report gives it (string or number), "" when absent */
};

struct rp_cycle {
	struct rp_edge *edges;
	size_t n_edges;
};

/* One edge of a deadlock: `thread` waits at the site `waits` for the lock `holder_thread` took at `held`. */
struct rp_wait {
	char *waits_method, *waits_location;
	char *held_method, *held_location;
	int64_t thread, holder_thread; /* managed thread ids */
};

/* Threads blocked in lock calls waiting for each other ("deadlocks"): each edge's holder_thread is the
 * next edge's thread, the last one's the first's; the last thread to wait first. */
struct rp_deadlock {
	struct rp_wait *edges;
	size_t n_edges;
	size_t process; /* index in rp_report.processes of the first file that had it */
};

/* A process that contributed (one per file read). */
struct rp_process {
	char *name;
	int64_t pid;
	char *start_utc;
	int64_t duration_ns;
	char *path; /* the report file it was read from (rp_add_file); NULL when added as text */
};

/* A hold a timeline event waited behind: that thread's hold that began at hold_from_ns. */
struct rp_link {
	int64_t thread;
	int64_t hold_from_ns;
};

/* One slow lock of a timeline ("timeline.events"), times in ns since its process's start_utc. */
struct rp_event {
	int64_t thread;
	char *thread_name; /* NULL: the thread had none */
	char *assembly, *method, *location;
	int64_t wait_from_ns, acquired_ns;
	int64_t released_ns; /* -1: no hold measured (a counting semaphore, a try that did not acquire) */
	int acquired;        /* 0: a try that gave up at acquired_ns */
	struct rp_link behind[RP_LINKS];
	size_t n_behind;
};

/* The timeline of one process (its reports merged: the same pid, start_utc and name). */
struct rp_timeline {
	char *name, *start_utc;
	int64_t pid;
	int64_t capacity, added; /* the largest of its reports' */
	struct rp_event *events; /* by wait_from_ns, each once */
	size_t n_events;
};

struct rp_report {
	struct rp_process *processes;
	size_t n_processes;
	int64_t dropped_lines;
	int64_t unwritten_lines; /* "unwritten_lines", added up: lines the sink never took (0 when absent) */
	struct rp_site *sites; /* by assembly, method, location after rp_merge; rp_sort orders them */
	size_t n_sites;
	struct rp_cycle *cycles; /* lock-order cycles, each once */
	size_t n_cycles;
	struct rp_deadlock *deadlocks; /* deadlocks, each once (the same set of waits/held site pairs) */
	size_t n_deadlocks;
	int64_t deadlocks_not_kept; /* "lock_order.deadlocks_not_kept", added up: found past the run-time's cap */
	struct rp_timeline *timelines; /* one per process with a "timeline" (version 3), in the order first read */
	size_t n_timelines;
};

#define RP_REPORT_INIT { NULL, 0, 0, 0, NULL, 0, NULL, 0, NULL, 0, 0, NULL, 0 }

/* Parse one report's JSON text (`len` bytes, need not be NUL-terminated) and add it to `r`.
 * Returns 0, or -1 with LT_E_REPORT naming what is wrong and where ("sites[3].hold_ms.max: not a
 * number"), LT_E_LIMIT past the limits above, or LT_E_NOMEM; on LT_E_REPORT `r` is as before the call. */
int rp_add_json(struct rp_report *r, const char *text, size_t len);

/* Add `one` (one file's report) to `r`: its processes, sites, cycles and deadlocks move into `r` (`one`
 * is left empty); sites with the same assembly, method and location add up; a cycle already in `r` (the
 * same edges in the same order) and a deadlock already in `r` (the same waits/held site pairs, in any
 * order: threads aside) are kept once.  Returns 0, or -1 with LT_E_LIMIT (a count would pass RP_MAX_COUNT, too many sites) or
 * LT_E_NOMEM, `r` then holding part of `one`. */
int rp_merge(struct rp_report *r, struct rp_report *one);

/* Read the file at `path` and add it (rp_add_json), its process's `path` set to it.  Returns 0 or -1
 * (LT_E_IO when unreadable). */
int rp_add_file(struct rp_report *r, const char *path);

/* Order the sites as the summary does: total wait, then total hold, both descending, then method. */
void rp_sort(struct rp_report *r);

/* The `fraction` quantile (0.5, 0.99) of histogram d in ns by the run-time's rule (Histogram.cs): the
 * middle of the bucket holding rank ceil(fraction * n), never above the maximum; 50 ns (or the
 * maximum) for the values under 100 ns.  0 when d has no buckets. */
int64_t rp_percentile(const struct rp_durations *d, double fraction);

/* The lower bound in ns of the bucket that ends at upper_ns: 0 for the first (100 ns), else
 * upper_ns - P/100 where P is the smallest power of ten >= upper_ns. */
int64_t rp_bucket_lower(int64_t upper_ns);

/* How many of d's values are at or over limit_ns, from the histogram: *at_least counts the buckets
 * wholly at or over it, *at_most adds the one the limit falls inside (equal when the limit is a bucket
 * boundary, as any limit of two significant digits is).  Returns 0, or -1 when d has no histogram. */
int rp_count_over(const struct rp_durations *d, int64_t limit_ns, int64_t *at_least, int64_t *at_most);

/* What a stack cost: a waiter's its wait total, a holder's its hold total (ns). */
int64_t rp_stack_cost(const struct rp_stack *st);

/* Order s's stacks as the run-time does (StackSet.Sorted): waiters then holders, captured stacks before
 * other and not captured, each by rp_stack_cost, largest first. */
void rp_stacks_sort(struct rp_site *s);

/* Release s's stacks. */
void rp_stacks_free(struct rp_site *s);

/* Move one's timelines into r: a timeline of a process r has one of (the same pid, start_utc and name:
 * several reports of one process) gets the events it lacks (the same thread, site, wait start and
 * acquisition are one event), ordered by wait_from_ns again; the others are appended.  Returns 0, or -1
 * with LT_E_NOMEM (r then holding part of one's). */
int rp_timelines_merge(struct rp_report *r, struct rp_report *one);

/* Release r's timelines. */
void rp_timelines_free(struct rp_report *r);

/* Release everything `r` holds; it is empty (RP_REPORT_INIT) afterwards. */
void rp_free(struct rp_report *r);

#endif
