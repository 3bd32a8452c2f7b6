#!/usr/bin/env python3
"""Checks a Chrome trace from `locktime report --format trace` (tests/integration/timeline.sh).

trace_expect.py TRACE [PID MEASURED]...

Prints one line per failed check and exits 1 when any, else prints "ok" lines' count and exits 0.
What any viewer needs: every complete event ("X") has ts, dur, pid, tid and name; every thread with events is
named (a "thread_name" metadata event of its pid); every flow start ("s") has one finish ("f", "bp": "e") with
its id and the other way round, the start inside a hold slice of its thread, the finish inside a wait slice of
its own; no slice twice. For each PID with the MEASURED stdout of tests/timeline (lines "measured: ROLE
THREAD INNER_MS OUTER_MS"): the holder's thread is named "holder", its hold of Books.Ledger::Post lasts from
INNER to OUTER; each waiter's thread is named "waiter-N", its wait at Books.Ledger::Read lasts no longer than
it measured, and an arrow goes from the holder's hold to that wait.
"""
import json
import sys

failures = []
checks = 0


def expect(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)


def main():
    trace = json.load(open(sys.argv[1]))
    expect(isinstance(trace, dict) and isinstance(trace.get("traceEvents"), list), "traceEvents: a list in an object")
    events = trace["traceEvents"]
    names = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    slices = [e for e in events if e.get("ph") == "X"]
    expect(slices, "complete events: some")
    for e in slices:
        expect(all(k in e for k in ("ts", "dur", "pid", "tid", "name")), f"X event without ts/dur/pid/tid/name: {e}")
        expect(isinstance(e.get("ts"), (int, float)) and isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0,
               f"X event's ts/dur not numbers: {e}")
        expect((e.get("pid"), e.get("tid")) in names, f"thread {e.get('tid')} of pid {e.get('pid')} not named")
    keys = [(e["pid"], e["tid"], e["ts"], e["name"]) for e in slices]
    expect(len(keys) == len(set(keys)), "a slice twice")
    starts = {e["id"]: e for e in events if e.get("ph") == "s"}
    ends = {e["id"]: e for e in events if e.get("ph") == "f"}
    expect(len(starts) == len([e for e in events if e.get("ph") == "s"]), "two flow starts of one id")
    expect(sorted(starts) == sorted(ends), f"flow ids without their other end: {sorted(set(starts) ^ set(ends))}")

    def inside(point, cat):
        return [x for x in slices if x["pid"] == point["pid"] and x["tid"] == point["tid"] and x.get("cat") == cat and
                x["ts"] <= point["ts"] <= x["ts"] + x["dur"] + 1e-3]

    arrows = []
    for i, s in starts.items():
        f = ends.get(i)
        if f is None:
            continue
        expect(f.get("bp") == "e", f"flow {i}: finish without bp e")
        hold, wait = inside(s, "hold"), inside(f, "wait")
        expect(hold, f"flow {i}: its start is in no hold of thread {s['tid']}")
        expect(wait, f"flow {i}: its finish is in no wait of thread {f['tid']}")
        if hold and wait:
            arrows.append((hold[-1], wait[-1]))

    args = sys.argv[2:]
    for k in range(0, len(args), 2):
        pid, measured = int(args[k]), open(args[k + 1]).read().split("\n")
        rows = [line.split() for line in measured if line.startswith("measured: ")]
        holders = [r for r in rows if r[1] == "hold"]
        waiters = [r for r in rows if r[1] == "wait"]
        expect(len(holders) == 1 and len(waiters) == 3, f"pid {pid}: one holder and three waiters measured: {rows}")
        for _, role, tid, inner, outer in rows:
            tid, inner, outer = int(tid), float(inner), float(outer)
            mine = [x for x in slices if x["pid"] == pid and x["tid"] == tid]
            if role == "hold":
                expect(names.get((pid, tid)) == "holder", f"pid {pid}: thread {tid} named {names.get((pid, tid))}, not holder")
                held = [x for x in mine if x["name"] == "hold Books.Ledger::Post (Program.cs:20)"]
                expect(len(held) == 1, f"pid {pid}: the holder's one hold: {held}")
                for x in held:
                    expect(inner - 1e-3 <= x["dur"] / 1e3 <= outer + 1e-3,
                           f"pid {pid}: hold {x['dur'] / 1e3} ms, measured {inner} to {outer} ms")
            else:
                expect((names.get((pid, tid)) or "").startswith("waiter-"), f"pid {pid}: thread {tid} named {names.get((pid, tid))}")
                waited = [x for x in mine if x["name"] == "wait Books.Ledger::Read (Program.cs:34)"]
                expect(len(waited) == 1, f"pid {pid}: thread {tid}'s one wait: {waited}")
                for x in waited:
                    expect(0 < x["dur"] / 1e3 <= outer + 1e-3, f"pid {pid}: thread {tid} waited {x['dur'] / 1e3} ms, measured {outer} ms")
                    behind = [h for h, w in arrows if w is x]
                    expect(any(names.get((h["pid"], h["tid"])) == "holder" and h["name"].startswith("hold Books.Ledger::Post")
                               for h in behind), f"pid {pid}: no arrow from the holder's hold to thread {tid}'s wait: {behind}")
    for f in failures:
        print(f)
    print(f"{checks - len(failures)} of {checks} checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
