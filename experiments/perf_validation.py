"""Perf-model fidelity: ours beside the papers' figures (see docs/perf-model.md for the discussion).

1. Dally Table I: communication as % of compute for 8 GPUs at machine / rack /
   network tier on the Dally cluster, and the rank agreement per tier.
2. Gandiva Fig. 1: two P100s across sockets vs under one PCIe switch.
3. Gandiva Table 1: packing gains for small, mid and busy jobs.
4. Crius Fig. 4(a): data-parallel throughput vs GPU count on A100 NVLink nodes.

    python experiments/perf_validation.py [--cluster dally-2racks] [--bucket-mb 25] [--no-overlap]
"""

from __future__ import annotations

import argparse

from dlsched.cluster.gpus import gpu_type
from dlsched.perf.papers.checks import (
    crius_fig4,
    dally_rank_agreement,
    dally_table1,
    gandiva_fig1,
)
from dlsched.perf.sharing.interference import PackedJob, pack
from dlsched.perf.placement.model import TIERS


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cluster", default="dally-2racks")
    ap.add_argument("--bucket-mb", type=float, default=25.0)
    ap.add_argument("--no-overlap", action="store_true")
    args = ap.parse_args()

    print(f"== Dally Table I: comm % of compute, 8 GPUs, {args.cluster}, bucket {args.bucket_mb:g} MB, "
          f"overlap {'off' if args.no_overlap else 'on'} (ours = exposed comm; zoo per-GPU batch)")
    print("-- analytic link model (PlacementPerfModel)")
    _dally(dally_table1(args.cluster, bucket_mb=args.bucket_mb, overlap=not args.no_overlap))
    print("\n-- with --tier-profile dally-table1 (ArtISt-sim's per-model calibrated figures as data): "
          "checks that placements map to the right tier and overhead; equal to the paper by construction")
    _dally(dally_table1(args.cluster, tier_profile="dally-table1", bucket_mb=args.bucket_mb,
                        overlap=not args.no_overlap))
    _rest()


def _dally(rows) -> None:
    head = "  ".join(f"{t:>17s}" for t in TIERS)
    print(f"{'model':14s} {'zoo model':20s} {head}   slowdown rack / network")
    print(f"{'':14s} {'':20s} " + "  ".join(f"{'ours':>8s} {'paper':>8s}" for _ in TIERS))
    for r in rows:
        cells = "  ".join(f"{o:7.2f}% {p:7.0f}%" for o, p in zip(r.ours_pct, r.paper_pct))
        print(f"{r.model:14s} {r.zoo_name:20s} {cells}   {r.slowdown[1]:.3f}x / {r.slowdown[2]:.3f}x")
    tau = dally_rank_agreement(rows)
    print("rank agreement (Kendall tau, 1 = same order): "
          + ", ".join(f"{t} {v:+.2f}" for t, v in tau.items()))
    for k, tier in enumerate(TIERS):
        ours = [r.model for r in sorted(rows, key=lambda r: r.ours_pct[k])]
        paper = [r.model for r in sorted(rows, key=lambda r: r.paper_pct[k])]
        print(f"  {tier:8s} ours : {' < '.join(ours)}\n  {'':8s} paper: {' < '.join(paper)}")


def _rest() -> None:
    print("\n== Gandiva Fig. 1: throughput across sockets / same PCIe switch, 2 x P100, batch 32 per GPU")
    for name, (ours, paper) in gandiva_fig1().items():
        print(f"{name:10s} ours {ours:.2f}   paper {paper:.2f}")

    print("\n== Gandiva Table 1: packing, aggregate throughput over one job alone (gain = aggregate - 1)")
    p100 = gpu_type("P100")
    cases = [("5 small CNN jobs, u=0.2", [PackedJob(0.2, 1 << 30, "cnn")] * 5, "up to +412%"),
             ("2 mid CNN jobs, u=0.55", [PackedJob(0.55, 1 << 30, "cnn")] * 2, "-16%..+46%"),
             ("2 mid LM jobs, u=0.85", [PackedJob(0.85, 1 << 30, "rnn")] * 2, "-16%..+46%"),
             ("2 busy CNN jobs, u=0.99", [PackedJob(0.99, 1 << 30, "cnn")] * 2, "-11%..-13%")]
    for label, jobs, paper in cases:
        print(f"{label:26s} ours {100 * (pack(jobs, p100).aggregate - 1):+6.1f}%   paper {paper}")

    print("\n== Crius Fig. 4(a) shape: data-parallel throughput vs GPUs (crius-sim A100 nodes, 4 GPUs "
          "on NVLink each), global batch 32, relative to 1 GPU")
    counts = (1, 2, 4, 8, 16)
    print(f"{'model':16s} " + " ".join(f"{n:>6d}" for n in counts))
    for name, curve in crius_fig4(counts=counts).items():
        print(f"{name:16s} " + " ".join(f"{x:6.2f}" for x in curve))
    print("paper: MoE-1.3B scales linearly; the dense models approach a ceiling (at each count's "
          "optimal adaptive plan, which data-parallel pricing does not search)")


if __name__ == "__main__":
    main()
