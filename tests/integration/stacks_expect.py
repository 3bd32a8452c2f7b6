"""The checks of tests/integration/stacks.sh over what it left in its folder (argv[1]): the reports, the
outputs of `locktime report`, the pprof traces, the page as Chromium saw it; argv[2] the program's source,
whose "// X call" and "// X site" comments give the lines. Prints TAP lines."""
import json, os, re, sys

tmp, source = sys.argv[1], open(sys.argv[2]).read().splitlines()
line = {m.group(1): n for n, text in enumerate(source, 1) for m in [re.search(r"// (\w+) (call|site|lambda)$", text)] if m}


def ok(name, good, detail=""):
    print(("ok - " if good else "not ok - ") + "stacks: " + name)
    if not good:
        for l in str(detail).splitlines()[:30]:
            print("# " + l)


def read(name):
    return open(os.path.join(tmp, name)).read()


def said(name):
    return {k: int(v) for k, v in (l.split() for l in read(name + ".out").splitlines())}


def site(report):
    sites = [s for s in report["sites"] if s["method"] == "Shop.Inventory::Reserve"]
    return sites[0] if len(sites) == 1 else None


def caller(st):
    return st["frames"][1]["method"] if len(st["frames"]) > 1 else None


def lower_ns(upper_ns):
    """A bucket's lower bound (rp_bucket_lower): upper - P/100, P the smallest power of ten at or over upper; 0 for the first."""
    if upper_ns <= 100:
        return 0
    p = 1
    while p < upper_ns:
        p *= 10
    return upper_ns - p // 100


def slow_waits(s, limit_ms=5.0):
    """Waits at limit_ms or over, from the histogram: the buckets whose lower bound is at least the limit (5 ms is a bound)."""
    return sum(count for upper, count in s["wait_histogram"] if lower_ns(round(upper * 1e6)) >= round(limit_ms * 1e6))


one = json.load(open(os.path.join(tmp, "one.json")))
did = said("one")
s = site(one)
ok("the report has the lock's site", s is not None, [x["method"] for x in one["sites"]])
if s is None:
    sys.exit(0)
stacks = s["stacks"]
for role in ("waiter", "holder"):
    mine = [st for st in stacks if st["role"] == role]
    captured = [st for st in mine if st["what"] == "stack"]
    want = s["acquisitions"] if role == "holder" else slow_waits(s)
    ok("%s stacks: their counts add up to the slow acquisitions (%d)" % (role, want), sum(st["count"] for st in mine) == want,
       json.dumps(mine, indent=1))
    ok("%s stacks: all captured (fewer than 20 a second)" % role, len(captured) == len(mine), [st["what"] for st in mine])
    ok("%s stacks: each starts at the site's method and line" % role,
       all(st["frames"][0]["method"] == s["method"] and st["frames"][0]["line"] == line["Reserve"] for st in captured),
       [st["frames"][0] for st in captured])
    for name, key in (("Checkout", "checkout"), ("Restock", "restock")):
        from_it = [st for st in captured if caller(st) == "Shop.Program::" + name]
        good = len(from_it) == 1 and from_it[0]["frames"][1]["line"] == line[name] and \
            from_it[0]["frames"][2]["method"] == "Shop.Program::Main (lambda)" and from_it[0]["frames"][2]["line"] == line["Main"]
        ok("%s stacks: one from %s at its call's line, called from Main's lambda" % (role, name), good, json.dumps(from_it, indent=1))
        if role == "holder" and from_it:
            ok("holder stack from %s: counts its %d calls" % (name, did[key]), from_it[0]["count"] == did[key], from_it[0])
    if role == "holder":
        ok("holder stacks: their holds add up to the site's hold total",
           abs(sum(st["hold_ms"] for st in mine) - s["hold_ms"]["total"]) < 1e-3 * (1 + len(mine)), (mine, s["hold_ms"]))
pay = [st for st in stacks if st["role"] == "holder" and caller(st) == "Shop.Program::PayAsync"]
ok("the async method's frame named as written, at its call's line", len(pay) == 1 and pay[0]["frames"][1]["line"] == line["PayAsync"]
   and pay[0]["count"] == did["pay"], json.dumps(pay, indent=1))
ok("no frame of LockTime's own", all("LockTime" not in f["method"] for st in stacks for f in st["frames"]), stacks)

# pprof: each sample type's traces have both callers
for kind in ("delay", "hold"):
    traces = read(kind + ".traces")
    blocks = [b for b in traces.split("-----------+") if "Shop.Inventory::Reserve" in b]
    both = all(any(re.search(r"Reserve\s*\n\s*Shop\.Program::" + c, b) and not re.match(r"\s*0\s", b) for b in blocks)
               for c in ("Checkout", "Restock"))
    ok("go tool pprof -traces -sample_index=%s: a trace through Checkout and one through Restock" % kind, both, traces)
    ok("go tool pprof -traces -sample_index=%s: Main's lambda named whole, not cut at its parenthesis" % kind,
       any(re.search(r"\n\s*Shop\.Program::Main \(lambda\)\s*\n", b) for b in blocks), traces)

# text and the summary at exit: both callers, each role
def stack_lines(text, prefix=""):
    return [l for l in text.splitlines() if re.match(prefix + r"  Shop\.Inventory::Reserve at Program\.cs:\d+: \d+ slow (wait|hold)", l)]

def half_up(ms): # the run-time's summary: the nanoseconds to the microsecond, half up (a float's "%.3f" rounds 28.4885 down)
    return "%d.%03d" % divmod((round(ms * 1e6) + 500) // 1000, 1000)
for what, lines, fmt in (("--format text", stack_lines(read("text.out")), lambda ms: "%.3f" % ms),
                         ("the summary at exit", stack_lines(read("one.err"), "LockTime: "), half_up)):
    for verb, role in (("wait", "waiter"), ("hold", "holder")):
        for name in ("Checkout", "Restock"):
            st = [x for x in stacks if x["role"] == role and caller(x) == "Shop.Program::" + name][0]
            cost = st["wait_ms"] if role == "waiter" else st["hold_ms"]
            want = "%d slow %s%s, %s ms, from Shop.Program::%s (Program.cs:%d) < Shop.Program::Main (lambda) (Program.cs:%d)" % (
                st["count"], verb, "" if st["count"] == 1 else "s", fmt(cost), name, line[name], line["Main"])
            ok("%s: slow %ss from %s, with the report's count and time" % (what, verb, name), any(want in l for l in lines),
               "\n".join([want] + lines))

# merged: two runs add up
two = json.load(open(os.path.join(tmp, "two.json")))
both = stack_lines(read("both.out"))
for name in ("Checkout", "Restock"):
    st = [x for r in (one, two) for x in site(r)["stacks"] if x["role"] == "holder" and caller(x) == "Shop.Program::" + name]
    want = "%d slow holds, %.3f ms, from Shop.Program::%s" % (sum(x["count"] for x in st), sum(x["hold_ms"] for x in st), name)
    ok("two reports: the holder stack from %s added up" % name, any(want in l for l in both), "\n".join([want] + both))
ok("a version 1 report (no stacks) is read, and shows none", read("v1.rc").strip() == "0" and "top stacks" not in read("v1.out")
   and "Shop.Inventory::Reserve" in read("v1.out"), read("v1.out"))

# the page
page = json.load(open(os.path.join(tmp, "page.json")))
shown = page["detail"]["stacks"]
ok("html: no console error", page["errors"] == [], page["errors"])
ok("html: one collapsible entry per stack of the report", len(shown) == len(stacks), json.dumps(shown, indent=1))
for role in ("waiter", "holder"):
    for name in ("Checkout", "Restock"):
        st = [x for x in stacks if x["role"] == role and caller(x) == "Shop.Program::" + name][0]
        entry = [e for e in shown if e["summary"].startswith(role + " \u00b7 %d\u00d7 " % st["count"]) and
                 e["summary"].endswith("from Shop.Program::" + name)]
        ok("html: the %s stack from %s with its count, its frames listed" % (role, name),
           len(entry) == 1 and entry[0]["frames"][1].startswith("Shop.Program::" + name + " Program.cs:%d" % line[name]),
           json.dumps(shown, indent=1))
opened = [e for e in shown if e["open"]]
ok("html: the costliest stack of each role open, the others closed (their frames hidden)",
   len(opened) == 2 and all(e["visible"] == len(e["frames"]) for e in opened) and
   all(e["visible"] == 0 for e in shown if not e["open"]), json.dumps(shown, indent=1))

# the flood: bounded captures, exact counts
flood = site(json.load(open(os.path.join(tmp, "flood.json"))))
duration_s = json.load(open(os.path.join(tmp, "flood.json")))["process"]["duration_ms"] / 1000
holders = [st for st in flood["stacks"] if st["role"] == "holder"]
captured = sum(st["count"] for st in holders if st["what"] == "stack")
missed = sum(st["count"] for st in holders if st["what"] == "not_captured")
ok("flood: every slow hold counted (150)", sum(st["count"] for st in holders) == 150 == flood["acquisitions"], holders)
ok("flood: at most 20 captures a second (%d in %.2f s), the rest not captured" % (captured, duration_s),
   0 < captured <= 20 * (int(duration_s) + 2) and missed == 150 - captured and missed > 0, holders)
ok("flood: the captured ones are one stack from Flood", len([st for st in holders if st["what"] == "stack"]) == 1 and
   caller([st for st in holders if st["what"] == "stack"][0]) == "Shop.Program::Flood", holders)

# a slow lock released while another is held: the first capture is not taken there
nested = json.load(open(os.path.join(tmp, "nested.json")))
took = said("nested")
for name, first_what in (("NestedInner", "not_captured"), ("NestedOuter", "stack")):
    ss = [s for s in nested["sites"] if s["location"] == "Program.cs:%d" % line[name]]
    held = [st for st in ss[0]["stacks"] if st["role"] == "holder"] if len(ss) == 1 else []
    whats = sorted((st["what"], st["count"]) for st in held)
    want = sorted([(first_what, 1), ("stack", 1)]) if first_what != "stack" else [("stack", 1), ("stack", 1)]
    ok("nested: %s's two slow holds, %s first, then a stack (releases took %d and %d us)"
       % (name, first_what, took["first_release_us"], took["second_release_us"]),
       len(ss) == 1 and ss[0]["acquisitions"] == 2 and whats == want, ss)

d2 = site(json.load(open(os.path.join(tmp, "depth2.json"))))
ok("LOCKTIME_STACK_DEPTH=2: two frames a stack", d2["stacks"] and all(len(st["frames"]) == 2 for st in d2["stacks"] if st["what"] == "stack"),
   d2["stacks"])
d0 = site(json.load(open(os.path.join(tmp, "depth0.json"))))
ok("LOCKTIME_STACK_DEPTH=0: no stacks, the site as before", d0["stacks"] == [] and d0["acquisitions"] == s["acquisitions"], d0["stacks"])
