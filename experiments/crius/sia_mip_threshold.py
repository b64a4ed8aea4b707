"""Where Sia's exact MIP is cheap: what it costs and gains, by problem size (issue 22).

    python experiments/crius/sia_mip_threshold.py [--scenario testbed|sim] [--setting derived|authors]
                                                  [--every K] [--nodes N] [--max-cols C]

Runs Sia on the scenario with the rounded LP alone (``mip_nodes=0``), keeps every K-th of its
allocation problems, then solves each again with HiGHS's MIP at any size (at most N nodes) and
prints, per band of columns (job x configuration pairs): how many problems, how many had a
fractional relaxation (the only ones the MIP runs on), the rounded LP's loss bound, the loss
bound after the MIP, the MIP's CPU seconds, its nodes, how many it proved optimal, and how many
wrote anything to file descriptor 1 (HiGHS 1.12.0 has a debug print ``output_flag`` does not
silence; this script captures the descriptor to count it, Sia itself never does).  The size
threshold ``MIP_MAX_COLS`` in ``dlsched/policies/sia.py`` was chosen from these figures
(docs/crius.md, "Sia").  CPU seconds are the process's, so other load on the machine matters little.
"""

from __future__ import annotations

import argparse
import functools
import os
import time

import numpy as np

import dlsched.policies.sia as sia
from dlsched.experiments.crius import _policy, engine_perf, scenario_jobs
from dlsched.sim import SimConfig, Simulator

BANDS = (0, 100, 200, 400, 700, 1000, 1600, 10**9)


def record(scenario: str, setting: str) -> list[tuple]:
    """Every allocation problem Sia solves on the scenario, with the MIP off (the LP's decisions)."""
    problems: list[tuple] = []
    lp_only = functools.partial(sia.solve, mip_nodes=0)

    def keep(*args):
        problems.append(args)
        return lp_only(*args)

    cluster, jobs, _ = scenario_jobs(scenario)
    sia.solve, saved = keep, sia.solve
    try:
        Simulator(cluster, _policy("sia", setting), jobs, perf=engine_perf(cluster, setting),
                  config=SimConfig(seed=0)).run()
    finally:
        sia.solve = saved
    return problems


def with_fd1_captured(fn):
    """``fn()`` and how many lines reached file descriptor 1 meanwhile."""
    r, w = os.pipe()
    saved = os.dup(1)
    os.dup2(w, 1)
    try:
        out = fn()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(w)
    chunks = []
    while chunk := os.read(r, 65536):
        chunks.append(chunk)
    os.close(r)
    return out, len(b"".join(chunks).splitlines())


def measure(problems: list[tuple], nodes: int, max_cols: int) -> list[tuple]:
    """Per problem: columns, LP loss bound, MIP loss bound, MIP CPU s, MIP ran, proven, stray lines."""
    rows = []
    for p in problems:
        lp = sia.rounded_lp(*p)
        if lp is None or lp.gap <= 1e-12 or len(p[5]) > max_cols:
            gap = 0.0 if lp is None else lp.gap
            rows.append((len(p[5]), gap, gap, 0.0, False, gap <= 1e-12, 0))
            continue
        c0 = time.process_time()
        got, stray = with_fd1_captured(lambda: sia.solve(*p, mip_cols=10**9, mip_nodes=nodes))
        rows.append((len(p[5]), lp.gap, got.gap, time.process_time() - c0, True, got.gap <= 1e-9, stray))
    return rows


def report(rows: list[tuple], every: int) -> str:
    a = np.array(rows, dtype=float)
    lines = [f"| columns | problems | fractional | LP loss mean / worst | after MIP mean / worst | "
             f"MIP CPU s (x{every}: whole run) | proven optimal | stray lines |", "|---" * 8 + "|"]
    for lo, hi in zip(BANDS, BANDS[1:]):
        b = a[(a[:, 0] > lo) & (a[:, 0] <= hi)]
        if not len(b):
            continue
        f = b[b[:, 1] > 1e-12]
        if not len(f):
            lines.append(f"| ({lo}, {hi}] | {len(b)} | 0 | - | - | 0 | - | 0 |")
            continue
        if not f[:, 4].any():
            lines.append(f"| ({lo}, {hi}] | {len(b)} | {len(f)} | {100 * f[:, 1].mean():.3f}% / "
                         f"{100 * f[:, 1].max():.2f}% | not run (--max-cols) | - | - | - |")
            continue
        lines.append(f"| ({lo}, {hi}] | {len(b)} | {len(f)} | {100 * f[:, 1].mean():.3f}% / {100 * f[:, 1].max():.2f}% "
                     f"| {100 * f[:, 2].mean():.4f}% / {100 * f[:, 2].max():.3f}% | "
                     f"{f[:, 3].sum():.2f} ({every * f[:, 3].sum():.1f}) | {int(f[:, 5].sum())}/{len(f)} "
                     f"| {int(f[:, 6].sum())} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", default="testbed", choices=["testbed", "sim"])
    ap.add_argument("--setting", default="derived", choices=["derived", "authors"])
    ap.add_argument("--every", type=int, default=1, help="measure every K-th problem (the sim has ~5,600)")
    ap.add_argument("--nodes", type=int, default=sia.MIP_MAX_NODES, help="the MIP's node limit")
    ap.add_argument("--max-cols", type=int, default=10**9, help="run the MIP only on problems up to this size")
    args = ap.parse_args()
    problems = record(args.scenario, args.setting)
    print(f"{args.scenario}, {args.setting}: {len(problems)} problems, every {args.every}th measured, "
          f"MIP at most {args.nodes} nodes (Sia's threshold: {sia.MIP_MAX_COLS} columns)\n")
    print(report(measure(problems[::args.every], args.nodes, args.max_cols), args.every))


if __name__ == "__main__":
    main()
