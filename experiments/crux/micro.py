"""CRUX section 4.4 micro-benchmark at the paper's size: 1,500 random cases, each step of CRUX and the
baselines against the enumerated optimum (``dlsched.experiments.crux_micro``).

    PYTHONPATH=src python experiments/crux/micro.py [--cases 1500] [--seed 0] [--out /tmp/crux-micro.json]

Prints the mean ratio to the optimum and the CDF points (5th, 25th, 50th percentile) per step and
method beside the paper's 97.69 / 97.24 / 97.12% (Fig. 16), and writes every case's ratios as JSON.
About 0.4-1.4 CPU seconds a case on this machine (1,500 cases: 652 CPU s on a quiet machine).
`dlsched reproduce crux --quick` runs 3 of these cases.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from dlsched.experiments import crux_micro


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="/tmp/crux-micro.json")
    a = ap.parse_args()
    t0, c0 = time.time(), time.process_time()

    def progress(done, total, _what):
        if done % 50 == 0 or done == total:
            print(f"  {done}/{total} cases, {time.process_time() - c0:.0f} CPU s", file=sys.stderr, flush=True)

    ratios = crux_micro.run(a.cases, a.seed, progress)
    cpu, wall = time.process_time() - c0, time.time() - t0
    print(f"CRUX 4.4 micro-benchmark: {a.cases} cases, seed {a.seed}: {cpu:.0f} CPU s ({wall:.0f} s wall)")
    print(f"{'step':<22} {'method':<10} {'mean':>7} {'p5':>7} {'p25':>7} {'p50':>7}  paper (CRUX)")
    for step, methods in ratios.items():
        for m, r in methods.items():
            x = np.asarray(r) * 100
            paper = f"{crux_micro.PAPER[step] * 100:.2f}%" if m == "crux" else ""
            print(f"{step:<22} {m:<10} {x.mean():>6.2f}% {np.percentile(x, 5):>6.2f}% "
                  f"{np.percentile(x, 25):>6.2f}% {np.percentile(x, 50):>6.2f}%  {paper}")
    Path(a.out).write_text(json.dumps({"cases": a.cases, "seed": a.seed, "cpu_s": cpu, "wall_s": wall,
                                       "ratios": ratios}, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
