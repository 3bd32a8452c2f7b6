#!/usr/bin/env python3
"""The slow-lock lines and roll-ups of a woven program against its report (tests/integration/linerate.sh).

usage: linerate_expect.py ERR REPORT OUT LINES
  ERR     the program's stderr (its LockTime lines); REPORT its JSON report; OUT its stdout ("elapsed_ms N")
  LINES   the setting it ran with: "all", or lines a second per site after the first 10

Run at threshold 0, every acquisition and failed try is slow. Per site of the report: the lines written plus
the counts of its roll-ups are its acquisitions plus failed tries, exactly; with "all" there is no roll-up;
else the lines of a site are at most 10 + LINES x the seconds the program ran (a token bucket of 10 refilled at
LINES a second). Every roll-up line has the documented form. Prints what is wrong, exits 1 when anything is.
"""
import json
import re
import sys

BURST = 10
SLOW = re.compile(r"^LockTime: (\S+) (?:held \d+\.\d{3} ms, waited|waited) \d+\.\d{3} ms(?:, not acquired)? at (\S+)(?: \(held by .*\))?$")
ROLLUP = re.compile(r"^LockTime: (\S+) had (\d+) more slow locks? at (\S+) in the last \d+\.\d s"
                    r"(?:, max hold \d+\.\d{3} ms)?, max wait \d+\.\d{3} ms$")


def main(err, report, out, lines):
    problems = []
    written, rolled, rollups = {}, {}, {}
    for line in open(err, encoding="utf-8"):
        line = line.rstrip("\n")
        m = SLOW.match(line)
        if m:
            written[m.group(2)] = written.get(m.group(2), 0) + 1
            continue
        m = ROLLUP.match(line)
        if m:
            n = int(m.group(2))
            if n < 1 or (n == 1) != (" more slow lock at " in line):
                problems.append("a roll-up's count and noun disagree: " + line)
            rolled[m.group(3)] = rolled.get(m.group(3), 0) + n
            rollups[m.group(3)] = rollups.get(m.group(3), 0) + 1
            continue
        if line.startswith("LockTime: ") and " more slow lock" in line:
            problems.append("a roll-up not of the documented form: " + line)
    elapsed_s = int(open(out).read().split("elapsed_ms ")[1].split()[0]) / 1000.0
    sites = json.load(open(report))["sites"]
    if not sites:
        problems.append("no site in the report")
    for s in sites:
        loc, slow = s["location"], s["acquisitions"] + s["failed"]
        w, r = written.get(loc, 0), rolled.get(loc, 0)
        print(f"{loc}: {slow} slow, {w} lines, {r} in {rollups.get(loc, 0)} roll-ups, {elapsed_s} s")
        if w + r != slow:
            problems.append(f"{loc}: {w} lines + {r} rolled up != {slow} slow locks in the report")
        if lines == "all":
            if r or rollups.get(loc):
                problems.append(f"{loc}: roll-ups with LOCKTIME_LINES=all")
        elif w > BURST + float(lines) * elapsed_s:
            problems.append(f"{loc}: {w} lines, more than {BURST} + {lines} a second for {elapsed_s} s")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
