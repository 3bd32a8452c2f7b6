#!/usr/bin/env python3
"""The weaver's files as a graph (docs/weaving.md, "Layers"): an edge A -> B when object file A uses a
symbol that B defines (nm).  Prints TAP lines: no cycle among the C files (no two need each other,
directly or through others), and every edge runs down the layers: cli -> package -> weave -> image ->
core, with report beside weave (on image and core only).  Usage: layers.py OBJ_ROOT (build/san/obj)."""
import collections, os, subprocess, sys

# The layers each folder of weaver/ may call into (its own folder is always allowed).
ALLOWED = {
    "core": set(),
    "image": {"core"},
    "weave": {"image", "core"},
    "report": {"image", "core"},
    "package": {"weave", "image", "core"},
    "cli": {"package", "weave", "report", "image", "core"},
}

root = sys.argv[1]
objs = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".o"))
defined, used = {}, collections.defaultdict(set)
for o in objs:
    out = subprocess.run(["nm", "-P", o], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1] in "TDBRCVW":
            defined.setdefault(parts[0], o)
        elif len(parts) >= 2 and parts[1] == "U":
            used[o].add(parts[0])

def name(o):
    return os.path.relpath(o, root)[:-2] + ".c"

edges = collections.defaultdict(set)
for o in objs:
    for sym in used[o]:
        if sym in defined and defined[sym] != o:
            edges[o].add(defined[sym])

# Strongly connected components (Tarjan, iterative): a component of two or more files is a cycle.
index, low, stack, on_stack, cycles, counter = {}, {}, [], set(), [], [0]
for start in objs:
    if start in index:
        continue
    work = [(start, iter(sorted(edges[start])))]
    index[start] = low[start] = counter[0]; counter[0] += 1; stack.append(start); on_stack.add(start)
    while work:
        v, it = work[-1]
        w = next(it, None)
        if w is not None:
            if w not in index:
                index[w] = low[w] = counter[0]; counter[0] += 1; stack.append(w); on_stack.add(w)
                work.append((w, iter(sorted(edges[w]))))
            elif w in on_stack:
                low[v] = min(low[v], index[w])
            continue
        work.pop()
        if work:
            low[work[-1][0]] = min(low[work[-1][0]], low[v])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on_stack.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

n = 0
def tap(ok, what, details=()):
    global n
    n += 1
    print(("ok - " if ok else "not ok - ") + what)
    for d in details:
        print("# " + d)

tap(len(objs) > 40 and sum(len(e) for e in edges.values()) > 100,
    f"the graph of the weaver's files is read ({len(objs)} objects, {sum(len(e) for e in edges.values())} edges)")
details = []
for comp in cycles:
    details.append("cycle: " + " ".join(name(o) for o in comp))
    for a in comp:
        for b in sorted(edges[a] & set(comp)):
            details.append(f"  {name(a)} -> {name(b)}: " + ", ".join(sorted(s for s in used[a] if defined.get(s) == b)[:4]))
tap(not cycles, "no two C files need each other (the file graph has no cycle)", details)
bad = []
for a in objs:
    la = name(a).split("/")[0]
    for b in sorted(edges[a]):
        lb = name(b).split("/")[0]
        if lb != la and lb not in ALLOWED.get(la, set()):
            bad.append(f"{name(a)} -> {name(b)}: " + ", ".join(sorted(s for s in used[a] if defined.get(s) == b)[:4]))
tap(not bad, "every call runs down the layers (cli, package, weave and report, image, core)", bad)
