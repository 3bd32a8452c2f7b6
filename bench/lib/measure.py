#!/usr/bin/env python3
"""Run a command several times; print its median wall time and peak RSS.

usage: measure.py RUNS [--prepare CMD] [--stdout-last] -- CMD... [--and CMD...]...

Each run is timed from start to exit with a monotonic clock; its CPU time
(user + system) and peak resident set size (KiB) are GNU time's.  --prepare
runs a shell command before every run, untimed (e.g. copy a fresh input so
an in-place weave has work to do).  Output, one line:
    median_s=<s> min_s=<s> max_s=<s> cpu_s=<median user+system s>
    peak_rss_kib=<max over runs> runs=<n>
followed, with --stdout-last, by the last run's standard output.  A run that
exits non-zero stops the measurement with that run's output on stderr and
exit status 1.  With --and, the commands take turns (run 1 of each in the
order given, then run 2 of each ...: a machine whose speed changes during
the measurement slows them alike) and each gets its line, in that order
(with --stdout-last, each line followed by that command's last output).
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
    opts, rest = argv[2:argv.index("--")], argv[argv.index("--") + 1:]
    cmds = [[]]
    for arg in rest:
        if arg == "--and":
            cmds.append([])
        else:
            cmds[-1].append(arg)
    prepare = None
    if "--prepare" in opts:
        prepare = opts[opts.index("--prepare") + 1]
    times, cpu, rss, last = ([[] for _ in cmds] for _ in range(4))
    for _ in range(runs):
        for k, cmd in enumerate(cmds):
            if prepare:
                subprocess.run(prepare, shell=True, check=True)
            seconds, cpu_s, maxrss, code, out, err = run_once(cmd)
            if code != 0:
                sys.stderr.write(err.decode(errors="replace"))
                sys.stderr.write(f"measure.py: {' '.join(cmd)}: exit status {code}\n")
                sys.exit(1)
            times[k].append(seconds)
            cpu[k].append(cpu_s)
            rss[k].append(maxrss)
            last[k] = out
    for k in range(len(cmds)):
        print(f"median_s={statistics.median(times[k]):.4f} min_s={min(times[k]):.4f} "
              f"max_s={max(times[k]):.4f} cpu_s={statistics.median(cpu[k]):.4f} peak_rss_kib={max(rss[k])} runs={runs}")
        if "--stdout-last" in opts:
            sys.stdout.write(last[k].decode(errors="replace"))


if __name__ == "__main__":
    main(sys.argv)
