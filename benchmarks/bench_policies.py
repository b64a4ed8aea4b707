"""Every registered policy at two trace sizes: what `dlsched simulate --policy P --jobs N` costs.

Goals: at most 10 CPU s per policy on the 13,000-job benchmark (`--workload benchmark`:
13,000 Philly-shaped jobs over 14 days on the 1,280-GPU crius-sim, the command's default
before offered load was settable, kept so figures stay comparable), and at most 10x that
on a 100,000-job trace at the same arrival rate (the benchmark's days scale with --jobs),
i.e. a per-job cost
that stays flat: the exponent b in cpu ~ jobs^b between the two sizes is printed (1.0 is
linear; the 10x goal allows b <= 1.13 between 13,000 and 100,000 jobs).

Each run is the whole command in a child process (imports, trace, simulation, outputs
written to a scratch directory): CPU s is its user + sys, peak its maximum resident set.
A run past --timeout CPU seconds (its own, RLIMIT_CPU: a wall limit would stop runs after very
different amounts of work on a shared machine) is stopped and shown as "> CPU s" (a lower bound).
On a shared machine every figure is an upper bound.

    python benchmarks/bench_policies.py [--policies fcfs,gavel] [--sizes 13000,100000]
        [--timeout 300] [--seed 0] [--cluster crius-sim] [--workload benchmark] [--json FILE]

`--workload default` times the command's own default workload instead (offered load 1.0,
durations capped at a day: a heavier queue than the benchmark's).
    python benchmarks/bench_policies.py --from-log run1.err run2.err   # the table of earlier runs

Each run's line goes to stderr as it ends (and to --json, rewritten after every run), so a
long matrix can be split over several invocations and its table printed from their logs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _command import SRC, Measured, run_dlsched  # noqa: E402

GOAL_CPU_S = 10.0
GOAL_RATIO = 10.0


def registered() -> list[str]:
    sys.path.insert(0, str(SRC))
    from dlsched.policies.names import declared_policy_names

    return list(declared_policy_names())


_LINE = re.compile(r"^\s+(\S+)\s+(\d+) jobs\s+(> )?([\d.]+|failed \((-?\d+)\)) CPU s\s+([\d.]+) s wall\s+([\d.]+) GiB")


def from_logs(paths: list[str]) -> tuple[list[tuple[str, dict]], list[int]]:
    """Measurements from earlier runs' stderr lines (a later line for the same run wins)."""
    rows: dict[str, dict] = {}
    sizes: list[int] = []
    for path in paths:
        for line in Path(path).read_text().splitlines():
            m = _LINE.match(line)
            if not m:
                continue
            pol, n = m.group(1), int(m.group(2))
            failed = m.group(5)
            cpu = 0.0 if failed is not None else float(m.group(4))
            rc = int(failed) if failed is not None else (None if m.group(3) else 0)
            rows.setdefault(pol, {})[n] = Measured(cpu, float(m.group(6)), float(m.group(7)), rc, "")
            if n not in sizes:
                sizes.append(n)
    return list(rows.items()), sorted(sizes)


def fmt_cpu(m) -> str:
    return f"> {m.cpu_s:.1f}" if m.timed_out else (f"{m.cpu_s:.1f}" if m.rc == 0 else f"failed ({m.rc})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policies", default=None, help="comma-separated (default: every registered policy)")
    ap.add_argument("--sizes", default="13000,100000", help="comma-separated job counts (default 13000,100000)")
    ap.add_argument("--timeout", type=float, default=300.0, help="CPU seconds per run before it is stopped")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cluster", default="crius-sim")
    ap.add_argument("--workload", default="benchmark",
                    help="a --workload name, or 'default' for the command's own (default: benchmark)")
    ap.add_argument("--json", default=None, metavar="FILE", help="also write every measurement here")
    ap.add_argument("--from-log", nargs="+", default=None, metavar="FILE",
                    help="run nothing: print the table from earlier runs' stderr lines")
    args = ap.parse_args()
    if args.from_log:
        rows, sizes = from_logs(args.from_log)
        print("from earlier runs' lines:", ", ".join(args.from_log))
        print_table(rows, sizes)
        return
    policies = args.policies.split(",") if args.policies else registered()
    sizes = [int(s) for s in args.sizes.split(",")]
    params = {"cluster": args.cluster, "sizes": sizes, "days": {n: round(14.0 * n / 13000, 2) for n in sizes},
              "seed": args.seed, "workload": args.workload, "perf": "the command's default", "cpu_limit_s": args.timeout,
              "python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
              "load_avg_at_start": [round(x, 1) for x in os.getloadavg()],
              "started_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}
    print("parameters:", json.dumps(params))
    wl = [] if args.workload == "default" else ["--workload", args.workload]
    print(f"each figure: `dlsched simulate --policy P --jobs N --cluster C --seed S {' '.join(wl)} --quiet`, "
          "whole process")
    rows, doc = [], {"params": params, "runs": {}}
    for pol in policies:
        res = {}
        for n in sizes:
            with tempfile.TemporaryDirectory() as tmp:
                m = run_dlsched(["simulate", "--policy", pol, "--jobs", str(n), "--cluster", args.cluster,
                                 "--seed", str(args.seed), *wl, "--quiet", "--out", str(Path(tmp) / "out")],
                                cpu_limit_s=args.timeout, timeout_s=20 * args.timeout + 600,
                                log=Path(tmp) / "log")
            if m.rc not in (0, None):
                print(f"  {pol} {n}: exit {m.rc}: {m.output.strip().splitlines()[-1:]}", file=sys.stderr)
            res[n] = m
            doc["runs"].setdefault(pol, {})[n] = {"cpu_s": round(m.cpu_s, 2), "wall_s": round(m.wall_s, 2),
                                                  "peak_gib": round(m.peak_gib, 3), "rc": m.rc,
                                                  "timed_out": m.timed_out}
            print(f"  {pol:<20} {n:>8} jobs  {fmt_cpu(m):>10} CPU s  {m.wall_s:7.1f} s wall  "
                  f"{m.peak_gib:5.2f} GiB", file=sys.stderr, flush=True)
            if args.json:
                Path(args.json).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
        rows.append((pol, res))
    print_table(rows, sizes)


def print_table(rows, sizes: list[int]) -> None:
    print()
    head = ["policy"]
    for n in sizes:
        head += [f"CPU s, {n:,} jobs", f"ms/job, {n:,}", f"peak GiB, {n:,}"]
    if len(sizes) == 2:
        head += [f"exponent {sizes[0]:,}->{sizes[1]:,}", "goals"]
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    for pol, res in rows:
        cells = [pol]
        for n in sizes:
            m = res.get(n)
            if m is None:
                cells += ["not run", "", ""]
                continue
            cells += [fmt_cpu(m), f"{1000 * m.cpu_s / n:.2f}" if m.rc == 0 else "", f"{m.peak_gib:.2f}"]
        if len(sizes) == 2:
            a, b = res.get(sizes[0]), res.get(sizes[1])
            if a is None or b is None:
                small = a is not None and a.rc == 0 and a.cpu_s <= GOAL_CPU_S
                cells += ["", ("met" if small else "not met" if a is not None else "") + ", not run"]
                print("| " + " | ".join(cells) + " |")
                continue
            ok = a.rc == 0 and b.rc == 0
            cells.append(f"{math.log(b.cpu_s / a.cpu_s) / math.log(sizes[1] / sizes[0]):.2f}" if ok else "")
            small = a.rc == 0 and a.cpu_s <= GOAL_CPU_S
            ratio = ok and b.cpu_s <= GOAL_RATIO * a.cpu_s
            cells.append(("met" if small else "not met") + (", " + ("met" if ratio else "not met")))
        print("| " + " | ".join(cells) + " |")
    if len(sizes) == 2:
        print(f"\ngoals: <= {GOAL_CPU_S:g} CPU s at {sizes[0]:,} jobs, then <= {GOAL_RATIO:g}x that at {sizes[1]:,}")


if __name__ == "__main__":
    main()
