"""CRUX section 6.3 trace simulation: every communication scheduler on the paper's fabrics.

    PYTHONPATH=src python experiments/crux/trace_grid.py [--jobs 300] [--days 1] [--out /tmp/crux-grid]
        [--topologies crux-clos,crux-prod,crux-clos@2,crux-clos@4,crux-double-sided,crux-lingjun] [--policy fcfs]
        [--placement first-free|packed] [--comm a,b] [--charge-self-collisions] [--sizes hosts|mixed|fragmented]

``SPEC@R`` is that spec at R:1 uplinks (the paper states 1:1; 2:1 and 4:1 show the sensitivity).
``crux-prod`` is ours: the production-like Clos of ``reproduce crux``'s grid (16 hosts per ToR).
Prints, per fabric and scheduler, the paper's GPU utilisation (computation over cluster time), the
compute share of busy GPU time, exposed communication and the largest contention group, so a gain or
its absence can be read off the runs (docs/crux.md, "Trace simulation").
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dlsched.experiments.crux import COMM, TOPOLOGIES, spec_at, trace_runs

PAPER = {"crux-clos": "CRUX +13..23% over the baselines", "crux-prod": "CRUX +13..23% over the baselines (Clos)", "crux-double-sided": "CRUX +4..7%"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=300)
    ap.add_argument("--days", type=float, default=1.0)
    ap.add_argument("--out", default="/tmp/crux-grid")
    ap.add_argument("--topologies", default="crux-clos,crux-clos@2,crux-clos@4,crux-double-sided,crux-lingjun")
    ap.add_argument("--policy", default="fcfs")
    ap.add_argument("--load", type=float, default=0.6, help="arrivals sized to this share of the GPUs")
    ap.add_argument("--seed", type=int, default=0, help="the trace's and the runs' seed")
    ap.add_argument("--comm", default=",".join(COMM))
    ap.add_argument("--scale-batch", action="store_true", help="jobs scale their batch with their GPUs "
                    "(weak scaling) instead of keeping one host's batch")
    ap.add_argument("--placement", default="first-free", choices=["packed", "first-free"],
                    help="how the job policy places jobs (simulate --placement); default first-free, the "
                    "paper's setting: it fragments the cluster as the production scheduler did")
    ap.add_argument("--resume", action="store_true", help="keep runs already finished under --out")
    ap.add_argument("--sizes", default="hosts", choices=["hosts", "mixed", "fragmented"], help="job sizes: hosts (multiples "
                    "of 8 GPUs, default), mixed (a quarter of the jobs on 1-4 GPUs, splitting hosts) or fragmented "
                    "(40%% on 1-4 GPUs: reproduce crux's setting, docs/crux.md)")
    ap.add_argument("--charge-self-collisions", action="store_true", help="simulate --charge-self-collisions: "
                    "a job's own flows hashed onto one switch port slow it (off by default, as in docs/crux.md's tables)")
    a = ap.parse_args()
    out = Path(a.out)
    rows = {}
    for topo in a.topologies.split(","):
        name, _, ratio = topo.partition("@")
        d = out / topo.replace("@", "-")
        d.mkdir(parents=True, exist_ok=True)
        spec = spec_at(d, name, float(ratio)) if ratio else name
        gpus, largest = TOPOLOGIES[name]
        got = trace_runs(d, a.jobs, a.days, cluster=spec, gpus=gpus, max_gpus=largest, policies=[a.policy],
                         comms=a.comm.split(","), host_batch=not a.scale_batch, resume=a.resume,
                         placement=a.placement, load=a.load, seed=a.seed, sizes=a.sizes,
                         charge_self_collisions=a.charge_self_collisions,
                         progress=lambda i, n, what: print(f"  [{i}/{n}] {what}", file=sys.stderr, flush=True))
        for (_, c), m in got.items():
            rows[(topo, c)] = m
        print(f"\n{topo} ({a.jobs} jobs, {a.days:g} days, {a.policy}, {a.placement}, sizes {a.sizes}; paper: {PAPER.get(name, 'no figure')})")
        base = got[(a.policy, "ecmp")]["gpu_compute_utilization"] if (a.policy, "ecmp") in got else None
        print(f"{'comm':<11} {'GPU util':>9} {'vs ecmp':>8} {'busy compute':>13} {'exposed comm':>13} "
              f"{'largest group':>14} {'after policy':>13} {'solves':>7}", flush=True)
        for (_, c), m in got.items():
            gain = f"{(m['gpu_compute_utilization'] / base - 1) * 100:+.2f}%" if base else "-"
            print(f"{c:<11} {m['gpu_compute_utilization']:>9.4f} {gain:>8} {m['busy_compute_share']:>13.4f} "
                  f"{m['comm_share']:>13.4f} {m['largest_group']:>14} {m['largest_group_after_policy']:>13} "
                  f"{m['contention_solves']:>7}", flush=True)
    (out / "grid.json").write_text(json.dumps({f"{t}|{c}": m for (t, c), m in rows.items()}, indent=1,
                                              sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
