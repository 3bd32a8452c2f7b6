#!/usr/bin/env python3
"""Run a command several times; print its median wall time and peak RSS.

usage: measure.py RUNS [--prepare CMD] [--stdout-last] -- CMD...

Each run is timed from start to exit with a monotonic clock; its CPU time
(user + system) and peak resident set size (KiB) are GNU time's.  --prepare
runs a shell command before every run, untimed (e.g. copy a fresh input so
an in-place weave has work to do).  Output, one line:
    median_s=<s> min_s=<s> max_s=<s> cpu_s=<median user+system s>
    peak_rss_kib=<max over runs> runs=<n>
followed, with --stdout-last, by the last run's standard output.  A run that
exits non-zero stops the measurement with that run's output on stderr and
exit status 1.
"""
import statistics
import subprocess
import sys
import tempfile
import time


def run_once(cmd):
    """One timed run: (wall s, CPU s, peak RSS KiB of this run alone, exit code, stdout, stderr)."""
    # GNU time reports the command's own peak RSS: a child forked from this
    # interpreter would count its resident pages too (ru_maxrss survives exec).
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(mode="r") as usage:
        start = time.perf_counter()
        code = subprocess.call(["/usr/bin/time", "-q", "-f", "%U %S %M", "-o", usage.name, *cmd],
                               stdout=out, stderr=err)
        seconds = time.perf_counter() - start
        user, system, maxrss = usage.read().split()[-3:]
        out.seek(0)
        err.seek(0)
        return seconds, float(user) + float(system), int(maxrss), code, out.read(), err.read()


def main(argv):
    if len(argv) < 4 or "--" not in argv:
        sys.exit(__doc__)
    runs = int(argv[1])
    opts, cmd = argv[2:argv.index("--")], argv[argv.index("--") + 1:]
    prepare = None
    if "--prepare" in opts:
        prepare = opts[opts.index("--prepare") + 1]
    times, cpu, rss, last = [], [], [], b""
    for _ in range(runs):
        if prepare:
            subprocess.run(prepare, shell=True, check=True)
        seconds, cpu_s, maxrss, code, out, err = run_once(cmd)
        if code != 0:
            sys.stderr.write(err.decode(errors="replace"))
            sys.stderr.write(f"measure.py: {' '.join(cmd)}: exit status {code}\n")
            sys.exit(1)
        times.append(seconds)
        cpu.append(cpu_s)
        rss.append(maxrss)
        last = out
    print(f"median_s={statistics.median(times):.4f} min_s={min(times):.4f} "
          f"max_s={max(times):.4f} cpu_s={statistics.median(cpu):.4f} peak_rss_kib={max(rss)} runs={runs}")
    if "--stdout-last" in opts:
        sys.stdout.write(last.decode(errors="replace"))


if __name__ == "__main__":
    main(sys.argv)
