"""Our parallel cost model beside the Crius authors' measured Alpa iteration times.

The measurements (src/dlsched/experiments/data/arena_revision_iter_times.csv, from the authors' public
repository; see its header) are each allocation's best plan, so we compare
them with our adaptive optimum (``CellEstimator.optimum``) for the same model,
global batch, GPU type and count, consolidated on ``crius-revision``'s nodes.
What matters for scheduling is the shape (speedup with more GPUs), so that is
reported beside the absolute times; and the question behind Crius Fig. 4(a),
whether MoE scales closer to linear than the dense models, is asked of both.

    python experiments/crius/measured_scaling.py [--cluster crius-revision] [--quiet]

Nothing is fitted: the cost parameters are the defaults, printed below.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
from importlib import resources
from dataclasses import dataclass
from pathlib import Path

from dlsched.cluster import Cluster
from dlsched.cluster.gpus import gpu_type
from dlsched.errors import UnknownNameError
from dlsched.perf.parallel import CellEstimator
from dlsched.perf.parallel.cost import compute_efficiency
from dlsched.workload.models import get_model

CSV = resources.files("dlsched.experiments") / "data" / "arena_revision_iter_times.csv"  # shipped in the package
CLUSTER = "crius-revision"
DENSE = ("bert", "wide_resnet")


@dataclass(frozen=True, slots=True)
class Measured:
    model: str
    params: str
    batch: int
    gpu: str
    hosts: int
    gpus_per_host: int
    iter_s: float

    @property
    def n_gpus(self) -> int:
        return self.hosts * self.gpus_per_host

    @property
    def group(self) -> tuple[str, str, int, str]:
        return (self.model, self.params, self.batch, self.gpu)


@dataclass(frozen=True, slots=True)
class Priced:
    row: Measured
    ours_s: float
    plan: str
    our_hosts: int  # nodes our consolidated allocation spans (compare with row.hosts)


def load_rows(path=CSV) -> list[Measured]:
    with path.open(newline="") as f:
        lines = [ln for ln in f if not ln.startswith("#")]
    return [Measured(r["model"], r["params"], int(r["batch"]), r["gpu"], int(r["hosts"]),
                     int(r["gpus_per_host"]), float(r["iter_s"])) for r in csv.DictReader(lines)]


def compare(rows: list[Measured], est: CellEstimator) -> tuple[list[Priced], list[tuple[Measured, str]]]:
    """Our optimum for every row; rows we cannot price come back with the reason, never dropped."""
    priced, unpriced = [], []
    for r in rows:
        try:
            model = get_model(r.model, r.params)
        except UnknownNameError:
            unpriced.append((r, f"unknown model {r.model}-{r.params}"))
            continue
        try:
            hw = est.hardware(gpu_type(r.gpu).name)
        except UnknownNameError as e:
            unpriced.append((r, f"GPU {r.gpu}: {e.reason.split(';')[0]}"))
            continue
        cell = est.optimum(model, r.batch, hw.gpu.name, r.n_gpus)
        if cell is None:
            unpriced.append((r, "out of memory in ours (no feasible plan)"))
            continue
        priced.append(Priced(r, cell.iter_time, cell.plan.describe(), -(-r.n_gpus // hw.gpus_per_node)))
    return priced, unpriced


def speedups(priced: list[Priced]) -> dict[tuple, list[tuple[Priced, float, float]]]:
    """Per group: (row, measured speedup, ours) against the group's smallest count priced by both."""
    groups: dict[tuple, list[Priced]] = {}
    for p in priced:
        groups.setdefault(p.row.group, []).append(p)
    out = {}
    for key, ps in sorted(groups.items(), key=lambda kv: _gkey(kv[0])):
        ps.sort(key=lambda p: p.row.n_gpus)
        base = ps[0]
        out[key] = [(p, base.row.iter_s / p.row.iter_s, base.ours_s / p.ours_s) for p in ps]
    return out


def step_efficiency(priced: list[Priced]) -> list[tuple[str, str, int, float, float, bool]]:
    """(gpu, family, n, measured, ours, in one host) for every doubling n -> 2n in one group.

    Efficiency of the step is speedup / 2 (1.0 = linear).  Steps compare like with
    like across families: the count ranges measured differ from group to group.
    """
    by = {(p.row.group, p.row.n_gpus): p for p in priced}
    out = []
    for (g, n), p in sorted(by.items(), key=lambda kv: (_gkey(kv[0][0]), kv[0][1])):
        q = by.get((g, 2 * n))
        if q is not None:
            out.append((g[3], g[0], n, p.row.iter_s / q.row.iter_s / 2, p.ours_s / q.ours_s / 2,
                        q.row.hosts == 1))
    return out


def _gkey(g):
    size = float(g[1][:-1]) * (1000 if g[1].endswith("B") else 1)
    return (g[0], size, g[2], g[3])


def _p90(xs: list[float]) -> float:
    s = sorted(xs)
    return s[max(0, math.ceil(0.9 * len(s)) - 1)]  # nearest rank


def _stats(label: str, xs: list[float]) -> str:
    if not xs:
        return f"  {label:<44} n=0"
    a = [abs(x) for x in xs]
    return (f"  {label:<44} n={len(xs):>3}  median |log| {statistics.median(a):.3f} "
            f"(x{math.exp(statistics.median(a)):.2f})  p90 {_p90(a):.3f} (x{math.exp(_p90(a)):.2f})  "
            f"median ours/meas x{math.exp(statistics.median(xs)):.2f}")


def report(est: CellEstimator, rows: list[Measured], quiet: bool = False) -> None:
    c = est.cluster
    print(f"Measured: {CSV.name}: {len(rows)} rows (sjtu-epcc/arena @ 65573a2, avg_iter_s)")
    print(f"Cluster:  {c.describe()}")
    for name in sorted({gpu_type(r.gpu).name for r in rows}):
        try:
            L = est.hardware(name).links
            print(f"  {name}: {L.gpus_per_node} GPUs/node, intra {L.intra.bandwidth_Bps / 1e9:g} GB/s "
                  f"{L.intra.latency_s * 1e6:g} us, node-to-node {L.rack.bandwidth_Bps / 1e9:g} GB/s "
                  f"{L.rack.latency_s * 1e6:g} us")
        except UnknownNameError:
            print(f"  {name}: not in the cluster")
    print(f"Cost params: {est.params}")
    for name in sorted({gpu_type(r.gpu).name for r in rows}):
        g = gpu_type(name)
        effs = ", ".join(f"{fam} {compute_efficiency(g, fam, 4 if fam == 'cnn' else 2, est.params):.3f}"
                         for fam in ("transformer", "moe", "cnn"))
        print(f"  compute efficiency on {name} (over 4 forward passes): {effs}")
    print("Ours: CellEstimator.optimum (full-space adaptive optimum), consolidated allocation\n")

    priced, unpriced = compare(rows, est)
    sp = speedups(priced)
    if not quiet:
        print("model params batch gpu | n: measured s / ours s (ours/meas) | "
              "speedup vs smallest n: meas / ours | our plan")
        for key, entries in sp.items():
            print(f"{key[0]} {key[1]} b{key[2]} {key[3]}")
            for p, sm, so in entries:
                flag = "" if p.our_hosts == p.row.hosts else f"  [ours spans {p.our_hosts} nodes]"
                print(f"  {p.row.n_gpus:>3} ({p.row.hosts}x{p.row.gpus_per_host}): {p.row.iter_s:8.3f} / "
                      f"{p.ours_s:8.3f} (x{p.ours_s / p.row.iter_s:5.2f}) | {sm:5.2f} / {so:5.2f}  "
                      f"{p.plan}{flag}")
        print()

    print(f"Unpriced rows: {len(unpriced)} of {len(rows)}")
    for r, why in unpriced:
        print(f"  {r.model} {r.params} b{r.batch} {r.gpu} {r.hosts}x{r.gpus_per_host}: {why}")
    mism = [p for p in priced if p.our_hosts != p.row.hosts]
    print(f"Priced rows whose consolidated layout differs from the measured hosts: {len(mism)}\n")

    print("Summary: |log(ours / measured)|, p90 by nearest rank; 'x' = the same as a factor")
    print(_stats("iteration time, all", [math.log(p.ours_s / p.row.iter_s) for p in priced]))
    for g in sorted({p.row.gpu for p in priced}):
        print(_stats(f"iteration time, {g}", [math.log(p.ours_s / p.row.iter_s) for p in priced
                                                if p.row.gpu == g]))
    pairs = [(p, sm, so) for e in sp.values() for p, sm, so in e[1:]]
    print(_stats("speedup vs smallest n, all", [math.log(so / sm) for _, sm, so in pairs]))
    print(_stats("speedup, in-node only (1 host)", [math.log(so / sm) for p, sm, so in pairs
                                                      if p.row.hosts == 1]))
    print(_stats("speedup, to 16 GPUs on 2 hosts", [math.log(so / sm) for p, sm, so in pairs
                                                      if p.row.hosts > 1]))
    singles = sum(1 for e in sp.values() if len(e) == 1)
    print(f"  groups: {len(sp)} (of which {singles} with one priced count: no speedup)\n")

    fig4a(step_efficiency(priced), sp)


def fig4a(steps, sp) -> None:
    """Crius Fig. 4(a): "MoE-1.3B scales up linearly while others approach the ceiling"."""
    print("Fig. 4(a): step efficiency (t_n / t_2n) / 2 per doubling, median over groups (count); "
          "1.00 = linear")
    for gpu in sorted({s[0] for s in steps}):
        gaps = {"measured": [], "ours": []}
        for n in sorted({s[2] for s in steps if s[0] == gpu}):
            cells, meds = [], {}
            for fam in ("moe",) + DENSE:
                xs = [s for s in steps if s[0] == gpu and s[1] == fam and s[2] == n]
                if xs:
                    meds[fam] = (statistics.median(s[3] for s in xs), statistics.median(s[4] for s in xs))
                    cells.append(f"{fam} {meds[fam][0]:.2f}/{meds[fam][1]:.2f} ({len(xs)})")
                else:
                    cells.append(f"{fam} -")
            print(f"  {gpu} {n:>2}->{2 * n:<2} meas/ours: " + "  ".join(cells))
            dense = [meds[f] for f in DENSE if f in meds]
            in_node = all(s[5] for s in steps if s[0] == gpu and s[2] == n)
            if "moe" in meds and dense and in_node:
                for i, k in enumerate(gaps):
                    gaps[k].append(meds["moe"][i] - max(d[i] for d in dense))
        for k, v in gaps.items():
            print(f"  {gpu} in-node, {k}: MoE minus the better dense family per doubling "
                  f"{' '.join(f'{g:+.3f}' for g in v)}; MoE ahead at {sum(g > 0 for g in v)} of {len(v)}")
    print("  The Fig. 4(a) trio, speedup 1 -> 8 GPUs in one node (meas / ours; linear = 8):")
    for key, e in sp.items():
        if (key[0], key[1]) in (("moe", "1.3B"), ("bert", "1.3B"), ("wide_resnet", "1B")):
            by = {p.row.n_gpus: (sm, so) for p, sm, so in e}
            if e[0][0].row.n_gpus == 1 and 8 in by:
                print(f"    {key[0]}-{key[1]} b{key[2]} {key[3]}: {by[8][0]:.2f} / {by[8][1]:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cluster", default=CLUSTER)
    ap.add_argument("--quiet", action="store_true", help="summary only, no per-row table")
    args = ap.parse_args()
    report(CellEstimator(Cluster.load(args.cluster)), load_rows(), args.quiet)


if __name__ == "__main__":
    main()
