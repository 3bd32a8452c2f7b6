#!/usr/bin/env python3
"""Put the figures of a benchmark run into BENCHMARKS.md.

usage: report.py BENCHMARKS.md PART...

For each PART (weave, scaling, calls, lockmethods, build, runtime, size, sink, lockorder, stacks, start) the summary lines of
build/bench/PART.log - those starting "weave:", "scaling:", "fit:", "build:",
"runtime:", "size:", "sink:", "lockorder:", "stacks:" or "start:", less the runtime part's progress and self-checks - are written,
with the machine, the date and the command, into
the file between the lines "<!-- results:PART:begin -->" and
"<!-- results:PART:end -->".  Everything else in the file is kept, so parts
not run keep their last figures.
"""
import datetime
import os
import platform
import re
import subprocess
import sys

COMMANDS = {
    "weave": "bash bench/weave/run.sh",
    "scaling": "bash bench/gen/run.sh",
    "calls": "CALLS=1 CHECK_JIT=0 REPEAT=5 bash bench/gen/run.sh 1000 2000 4000 8000 16000 32000",
    "lockmethods": "LOCK_PERCENT=100 REPEAT=3 bash bench/gen/run.sh 10000 25000 50000 100000",
    "build": "bash bench/build/run.sh",
    "runtime": "bash bench/runtime/run.sh",
    "size": "bash bench/size/run.sh",
    "sink": "bash bench/sink/run.sh",
    "lockorder": "bash bench/lockorder/run.sh",
    "stacks": "bash bench/stacks/run.sh",
    "start": "bash bench/start/run.sh",
}
SUMMARY = re.compile(r"^(weave|scaling|fit|build|runtime|size|sink|lockorder|stacks|start):")
# Progress and self-check lines of the runtime part, not figures.
PROGRESS = re.compile(r"^runtime: (round \d|check:|building|JIT code|  (plain|woven|<LockTime>))")


def machine():
    """One line: CPU model, cores, memory, OS, .NET SDK."""
    cpu = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kib = int(f.readline().split()[1])
    sdk = subprocess.run(["dotnet", "--version"], capture_output=True, text=True).stdout.strip()
    return (f"{cpu}, {os.cpu_count()} cores, {mem_kib / 1048576:.0f} GiB, "
            f"{platform.system()} {platform.release()}, .NET SDK {sdk or 'unknown'}")


def block(part, host, when):
    with open(f"build/bench/{part}.log") as f:
        lines = [l.rstrip() for l in f if SUMMARY.match(l) and not PROGRESS.match(l)]
    if not lines:
        lines = ["(no figures: see build/bench/%s.log)" % part]
    return [f"<!-- results:{part}:begin -->",
            f"Measured {when} on {host}, with `{COMMANDS[part]}` (`make bench`):",
            "```"] + lines + ["```", f"<!-- results:{part}:end -->"]


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    path, parts = argv[1], argv[2:]
    host = machine()
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    with open(path) as f:
        text = f.read().splitlines()
    for part in parts:
        begin, end = f"<!-- results:{part}:begin -->", f"<!-- results:{part}:end -->"
        if begin not in text or end not in text:
            sys.exit(f"{path}: no {begin} ... {end} markers for part '{part}'")
        i, j = text.index(begin), text.index(end)
        text[i:j + 1] = block(part, host, when)
    with open(path, "w") as f:
        f.write("\n".join(text) + "\n")


if __name__ == "__main__":
    main(sys.argv)
