#!/usr/bin/env python3
"""What `locktime report` and `locktime check` must show, worked out from the report files themselves
(for tests/integration/report.sh).  Each command prints TAP lines ("ok - NAME" / "not ok - NAME" with
"# " details).

    report_expect.py text OUT FILE...              the --format text table against the files, added up
    report_expect.py check OUT STATUS HOLD WAIT FILE...   check's lines (limits in ms, "-" for none)
    report_expect.py pprof DIR TOP-FILES FILE...   `go tool pprof -top` per sample type against the files
    report_expect.py page PAGE.json COLUMN FILTER FILE...   what the browser read against the files
    report_expect.py hostile IN OUT                a real report with blame, a cycle, a deadlock and a hostile method name
    report_expect.py page-deadlocks PAGE.json FILE...   the page's deadlocks section against the files'
    report_expect.py deadlock-origin FILE...       where check puts each deadlock of the files, added up
"""
import itertools
import json
import math
import re
import sys

FAILED = []


def ok(name, good, detail=""):
    if good:
        print("ok - " + name)
    else:
        FAILED.append(name)
        print("not ok - " + name)
        for line in str(detail).splitlines()[:40]:
            print("# " + line)


def merged(files):
    """The sites of all files added up by (assembly, method, location), like the run-time's summary order."""
    sites = {}
    for path in files:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
        for s in report["sites"]:
            key = (s["assembly"], s["method"], s["location"])
            m = sites.setdefault(key, {"assembly": s["assembly"], "method": s["method"], "location": s["location"],
                                       "file": s["file"], "line": s["line"], "kind": s["kind"], "acquisitions": 0,
                                       "contended": 0, "failed": 0,
                                       "wait": {"total": 0, "max": 0, "buckets": {}},
                                       "hold": {"total": 0, "max": 0, "buckets": {}}, "sources": []})
            # hold not measured (a counting semaphore) only where no file with acquisitions measured it
            if s["acquisitions"]:
                m["hold_na"] = m.get("hold_na", True) and s.get("hold_applies", True) is False
            for k in ("acquisitions", "contended", "failed"):
                m[k] += s[k]
            m["blamed"] = m.get("blamed", 0) + ns(s.get("blamed_wait_ms", 0))
            for w in ("wait", "hold"):
                m[w]["total"] += ns(s[w + "_ms"]["total"])
                m[w]["max"] = max(m[w]["max"], ns(s[w + "_ms"]["max"]))
                for upper, n in s.get(w + "_histogram", []):
                    m[w]["buckets"][ns(upper)] = m[w]["buckets"].get(ns(upper), 0) + n
            m["sources"].append(s)
    out = list(sites.values())
    out.sort(key=lambda s: (-s["wait"]["total"], -s["hold"]["total"], s["assembly"], s["method"], s["location"]))
    return out


def ns(ms):
    return round(ms * 1e6)


def ms3(v_ns):
    return "%.3f" % (v_ns / 1e6)


def text(out_path, files):
    with open(out_path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    sites = merged(files)
    acq = sum(s["acquisitions"] for s in sites)
    ok("text: the totals line adds up the files",
       lines and lines[0].startswith("summary: %d sites in " % len(sites)) and
       (" from %d processes; %d acquisitions, " % (len(files), acq)) in lines[0], lines[:1])
    rows = list(itertools.takewhile(lambda l: not l.startswith("top stacks "), lines[3:]))  # then the stacks
    ok("text: one row per site", len(rows) == len(sites), "\n".join(lines))
    for s, row in zip(sites, rows):
        cells = row.split()
        hold = ["n/a", "n/a"] if s.get("hold_na") else [ms3(s["hold"]["total"]), ms3(s["hold"]["max"])]
        want = [s["method"], s["location"], s["kind"], str(s["acquisitions"]), str(s["contended"]), str(s["failed"]),
                ms3(s["wait"]["total"]), ms3(s["wait"]["max"])]
        ok("text: row of %s %s in order, with its counts, totals, maxima and the wait it made others spend" %
           (s["method"], s["location"]),
           len(cells) == 13 and cells[:8] == want and cells[9:11] == hold and cells[12] == ms3(s["blamed"]),
           "want %s ... %s ... %s\n got %s" % (want, hold, ms3(s["blamed"]), cells))
    na = [row.split()[:2] for s, row in zip(sites, rows) if s.get("hold_na") and row.split()[9:12] == ["n/a"] * 3]
    ok("text: the hold of a counting semaphore (hold_applies false) is n/a", len(na) == 1, "\n".join(lines))
    widths = {len(l) for l in lines[2:3 + len(rows)]}
    ok("text: columns aligned (every table line as wide)", len(widths) == 1, "\n".join(lines[2:3 + len(rows)]))


def over_count(d, limit_ns):
    """(at least, at most) values at or over the limit, from the buckets."""
    least = most = 0
    for upper, n in sorted(d["buckets"].items()):
        lower = 0 if upper <= 100 else upper - 10 ** math.ceil(math.log10(upper)) // 100
        if lower >= limit_ns:
            least += n
        elif upper > limit_ns:
            most += n
    return least, least + most


def check(out_path, status, hold, wait, files):
    with open(out_path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    want = []
    for s in merged(files):
        for code, verb, w, limit, counts in ((200, "held", "hold", hold, "acquisitions"),
                                             (201, "waited", "wait", wait, "waits")):
            if limit == "-" or s[w]["max"] < ns(float(limit)):
                continue
            least, most = over_count(s[w], ns(float(limit)))
            total = sum(s[w]["buckets"].values())
            counted = "%d of %d" % (least, total) if least == most else "%d to %d of %d" % (least, most, total)
            want.append("%s(%d): error LT%03d: lock %s %.1f ms, limit %g ms (%s, %s %s over)" %
                        (s["file"], s["line"], code, verb, s[w]["max"] / 1e6, float(limit), s["method"], counted,
                         counts))
    name = "check --max-hold-ms %s --max-wait-ms %s: " % (hold, wait)
    ok(name + "one canonical line per site over a limit", lines == want,
       "want:\n" + "\n".join(want) + "\ngot:\n" + "\n".join(lines))
    ok(name + "exit status %d" % (1 if want else 0), int(status) == (1 if want else 0), "exit status " + status)


def pprof(top_dir, files):
    """top_dir/<type>.top: `go tool pprof -top -lines -unit=ns -nodefraction=0 -sample_index=<type>`."""
    sites = merged(files)
    for kind, value in (("contentions", lambda s: s["contended"]), ("delay", lambda s: s["wait"]["total"]),
                        ("hold", lambda s: s["hold"]["total"])):
        with open("%s/%s.top" % (top_dir, kind), encoding="utf-8") as f:
            top = f.read()
        rows = {}
        for line in top.splitlines():
            pct = r"[0-9.]+(?:e[-+]?\d+)?%"  # pprof writes a tiny share as 8.2e-05%
            m = re.match(r"^\s*([0-9.]+)(ns)?\s+%s\s+%s\s+[0-9.]+(ns)?\s+%s\s+(\S+) (\S+):(\d+)$" % (pct, pct, pct), line)
            if m and float(m.group(1)) > 0:  # the callers in the samples' stacks have no value of their own
                rows[(m.group(4), m.group(5), int(m.group(6)))] = float(m.group(1))
        want = {(s["method"], s["file"], s["line"]): value(s) for s in sites if value(s) > 0}
        ok("pprof -top -sample_index=%s: Type: %s" % (kind, kind), ("Type: %s" % kind) in top, top)
        ok("pprof -top -sample_index=%s: every site with its value, on its file and line" % kind,
           rows == {k: float(v) for k, v in want.items()}, "want %s\ngot %s\n%s" % (want, rows, top))


def number(cell):
    """A table cell as a number for its order: "n/a" (not measured) below every measured one."""
    return -1.0 if cell == "n/a" else float(cell)


def page(page_json, column, filt, files):
    with open(page_json, encoding="utf-8") as f:
        got = json.load(f)
    sites = merged(files)
    ok("html: the page loads with no console error or exception", got["errors"] == [], "\n".join(got["errors"]))
    keys = [h["key"] for h in got["heads"]]
    ok("html: the table's columns", keys == ["method", "location", "kind", "acquisitions", "contended", "wait_total",
                                               "wait_max", "wait_p99", "hold_total", "hold_max", "hold_p99",
                                               "made_others_wait"], keys)
    first = [(r[0], r[3], r[5], r[8]) for r in got["rows"]]
    want = [(s["method"], str(s["acquisitions"]), ms3(s["wait"]["total"]),
             "n/a" if s.get("hold_na") else ms3(s["hold"]["total"])) for s in sites]
    ok("html: one row per site (the files added up), by total wait then total hold", first == want,
       "want %s\ngot %s" % (want, first))
    blamed = [r[11] for r in got["rows"]]
    want = ["n/a" if all("blamed_wait_ms" not in x for x in s["sources"]) else ms3(s["blamed"]) for s in sites]
    ok("html: the wait each site made others spend", blamed == want, "want %s\ngot %s" % (want, blamed))
    for at, lay in zip(("the first site", "the last site"), got["layout"]):
        ok("html: at 1280 px the table fits its box and no text of %s's charts overlaps another" % at,
           lay["overflow"] <= 0 and lay["overlaps"] == [], lay)
    k = keys.index(column)
    heads = {h["key"]: h["sort"] for h in got["sorted"]["heads"]}
    values = [number(r[k]) for r in got["sorted"]["rows"]]
    ok("html: a click on the %s head sorts descending" % column,
       heads[column] == "descending" and values == sorted(values, reverse=True) and len(values) == len(sites),
       "%s %s" % (heads, values))
    heads = {h["key"]: h["sort"] for h in got["sorted_again"]["heads"]}
    values = [number(r[k]) for r in got["sorted_again"]["rows"]]
    ok("html: a second click sorts ascending", heads[column] == "ascending" and values == sorted(values),
       "%s %s" % (heads, values))
    match = [s["method"] for s in sites if filt.lower() in "\n".join(
        [s["method"], s["location"], s["file"] or "", s["kind"], s["assembly"]]).lower()]
    ok("html: typing %r in the filter leaves the matching rows" % filt,
       sorted(r[0] for r in got["filtered"]["rows"]) == sorted(match) and
       got["filtered"]["count"] == "%d of %d sites" % (len(match), len(sites)), got["filtered"])
    d = got["detail"]
    chosen = [s for s in sites if s["method"] == d["selected"]][0]
    ok("html: a click on a row selects it and shows its charts",
       d["method"] == d["selected"] and [c["title"] for c in d["charts"]] == ["Hold", "Wait"], d)
    # waits under 100 ns (the first bucket: no wait) are counted in a note, not drawn
    fast = chosen["wait"]["buckets"].get(100, 0)
    bars = [len(chosen["hold"]["buckets"]), len([u for u in chosen["wait"]["buckets"] if u > 100])]
    ok("html: one bar per histogram bucket, the wait's under 100 ns left out", [c["bars"] for c in d["charts"]] == bars,
       "want %s got %s" % (bars, d))
    note = ["%d of %d did not wait (under 100 ns): not drawn" % (fast, chosen["acquisitions"])] if fast else []
    ok("html: the acquisitions that did not wait are counted under the wait chart", got["layout"][1]["notes"] == note,
       "want %s got %s" % (note, got["layout"][1]["notes"]))


def hostile(src, dst):
    """A copy of a real report with holder blame, a lock-order cycle, a deadlock (and two not kept) and a method
    name that is HTML."""
    with open(src, encoding="utf-8") as f:
        r = json.load(f)
    a, b = r["sites"][0], r["sites"][1]
    b["method"] = "Evil::<img src=x onerror=alert(1)></script><script>alert(2)</script>"
    b["blamed_wait_ms"] = a["wait_ms"]["total"]
    a["waited_behind"] = [{"method": b["method"], "location": b["location"], "wait_ms": a["wait_ms"]["total"], "count": 1}]
    r["lock_order_cycles"] = [{"edges": [
        {"held": {"method": a["method"], "location": a["location"]}, "acquired": {"method": b["method"], "location": b["location"]}, "thread": 1},
        {"held": {"method": b["method"], "location": b["location"]}, "acquired": {"method": a["method"], "location": a["location"]}, "thread": 2}]}]
    r["deadlocks"] = [{"edges": [
        {"thread": 2, "waits": {"method": a["method"], "location": a["location"]}, "holder_thread": 1, "held": {"method": b["method"], "location": b["location"]}},
        {"thread": 1, "waits": {"method": b["method"], "location": b["location"]}, "holder_thread": 2, "held": {"method": a["method"], "location": a["location"]}}]}]
    r["lock_order"]["deadlocks_not_kept"] = 2
    with open(dst, "w", encoding="utf-8") as f:
        json.dump(r, f)


def page_hostile(page_json, file):
    with open(page_json, encoding="utf-8") as f:
        got = json.load(f)
    with open(file, encoding="utf-8") as f:
        r = json.load(f)
    a, b = r["sites"][0], r["sites"][1]
    d = got["detail"]
    ok("html (blame, cycle, hostile name): no console error", got["errors"] == [], "\n".join(got["errors"]))
    ok("html: the hostile method name is text, not markup", b["method"] in [row[0] for row in got["rows"]]
       and d["images"] == 0 and d["scripts"] == 2, d)
    ok("html: holder blame shown", d["blame"] is not None and b["method"] in d["blame"] and "others waited" in d["blame"], d)
    ok("html: the lock-order cycle shown", d["cycles"] is not None and d["cycles"].count("acquires") == 2
       and a["method"] in d["cycles"] and b["method"] in d["cycles"], d)
    ok("html: the deadlock shown, the hostile name as text, and the two not kept",
       d["deadlocks"] is not None and len(d["deadlocks"]) == 1 and b["method"] in d["deadlocks"][0][0]
       and "2 more found, not kept" in d["deadlocks_text"] and d["cards"][0] == {"text": "3deadlocks", "alarm": True}, d)


def deadlocks(files):
    """The files' deadlocks, each once (the same (waits, held) site pairs, as many times each), in the order
    found, each with the index of the file that first had it."""
    out, seen = [], set()
    for i, path in enumerate(files):
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
        for d in report.get("deadlocks", []):
            key = tuple(sorted((e["waits"]["method"], e["waits"]["location"], e["held"]["method"], e["held"]["location"])
                               for e in d["edges"]))
            if key not in seen:
                seen.add(key)
                out.append((d["edges"], i))
    return out


def page_deadlocks(page_json, files):
    with open(page_json, encoding="utf-8") as f:
        got = json.load(f)
    d = got["detail"]
    want = [["thread %d waits at %s @ %s\u2192 for the lock thread %d took at%s @ %s" %
             (e["thread"], e["waits"]["method"], e["waits"]["location"], e["holder_thread"], e["held"]["method"],
              e["held"]["location"]) for e in edges] for edges, _ in deadlocks(files)]
    ok("html (deadlocks): no console error", got["errors"] == [], "\n".join(got["errors"]))
    ok("html: the deadlocks section, each deadlock once, every thread's wait and the lock it waits for",
       want and d["deadlocks"] == want, "want %s\ngot %s" % (want, d["deadlocks"]))
    ok("html: the deadlocks come first, before the sites", d["first_section"] == "deadlocks", d["first_section"])
    # waits, then holds, in progress as the reports were written: per site, threads (holds) added up, longest first
    now = []
    for key, one, many in (("waiting_now", "thread", "threads"), ("held_now", "hold", "holds")):
        found = {}
        for path in files:
            with open(path, encoding="utf-8") as f:
                for s in json.load(f)["sites"]:
                    p = s.get(key, {"count": 0, "longest_ms": 0})
                    if p["count"] > 0:
                        c, longest = found.get((s["method"], s["location"]), (0, 0))
                        found[(s["method"], s["location"])] = (c + p["count"], max(longest, p["longest_ms"]))
        for (method, location), (c, _) in sorted(found.items(), key=lambda kv: -kv[1][1]):
            now.append("%s: %s @ %s: %d %s, the longest " % (key.replace("_", " "), method, location, c, one if c == 1 else many))
    got_now = [t[:t.index(", the longest ") + len(", the longest ")] for t in d["now"] or []]
    ok("html: the threads waiting and the locks held as the reports were written, longest first (a deadlock's waiters)",
       any(n.startswith("waiting now: ") for n in now) and got_now == now, "want %s\ngot %s" % (now, d["now"]))
    ok("html: the first card counts the deadlocks, marked",
       d["cards"][0] == {"text": "%d%s" % (len(want), "deadlock" if len(want) == 1 else "deadlocks"), "alarm": True},
       d["cards"])


def deadlock_origin(files):
    """Per deadlock, where check's LT202 line goes: FILE(LINE) of the site where its first thread waits, else
    of the site where the lock it waits for was taken (sites of the files with a source file), else the
    report file that had it."""
    sites = merged(files)
    for edges, i in deadlocks(files):
        first, at = edges[0], None
        for method, location in ((first["waits"]["method"], first["waits"]["location"]),
                                 (first["held"]["method"], first["held"]["location"])):
            at = at or next((s for s in sites if s["method"] == method and s["location"] == location and s["file"]), None)
        print("%s(%d)" % (at["file"], at["line"]) if at else files[i])


def main(argv):
    cmd = argv[1]
    if cmd == "text":
        text(argv[2], argv[3:])
    elif cmd == "check":
        check(argv[2], argv[3], argv[4], argv[5], argv[6:])
    elif cmd == "pprof":
        pprof(argv[2], argv[3:])
    elif cmd == "page":
        page(argv[2], argv[3], argv[4], argv[5:])
    elif cmd == "hostile":
        hostile(argv[2], argv[3])
    elif cmd == "page-hostile":
        page_hostile(argv[2], argv[3])
    elif cmd == "page-deadlocks":
        page_deadlocks(argv[2], argv[3:])
    elif cmd == "deadlock-origin":
        deadlock_origin(argv[2:])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
