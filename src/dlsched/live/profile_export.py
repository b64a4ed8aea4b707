"""The iteration times a live run measured, in the ``iterations`` profile format.

``dlsched perf calibrate`` reads this file like the Crius authors' table, so a
live run calibrates the simulator.  One row per (model, size, global batch,
GPU type, nodes x GPUs per node): the time-weighted mean over the run's
segments that ran alone on their GPUs (packed or mixed segments are not solo
iteration times; the live runtime's warm-up iteration is already excluded).
A segment whose GPUs span GPU types, or nodes holding different numbers of its
GPUs, has no ``nodes x gpus_per_node`` shape and is left out (counted).

    python -m dlsched.live.profile_export STATE_DIR --out iterations.csv
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from dlsched.workload.readers.profiles import IterationRow, write_iterations

FILE = "measured-iterations.csv"  # its name beside a live run's results


def iteration_rows(store) -> tuple[list[IterationRow], int]:
    """The store's solo segments averaged per placement shape; and how many segments had no shape."""
    from dlsched.live.jobfile import LiveJob
    from dlsched.live.raycluster import ClusterLayout

    layout = store.get_meta("layout")
    if layout is None:  # the service never started: nothing was measured
        return [], 0
    cluster = ClusterLayout.from_json(layout).cluster()
    # only the model and batch are read; a job that never arrived still names them
    specs = {r["job_id"]: LiveJob.from_json(r["body"], r["arrival"] or 0.0).spec for r in store.jobs()}
    node_of, type_of = cluster.gpu_node.tolist(), cluster.gpu_type_idx.tolist()
    acc: dict[tuple, list[float]] = {}
    shapeless = 0
    for s in store.segments():
        if not (s.get("iter_time") and s.get("timed_iterations")) or (s.get("mode") or "exclusive") != "exclusive":
            continue
        spec = specs.get(s["job_id"])
        gpus = json.loads(s["gpus"])
        per_node = Counter(node_of[g] for g in gpus)
        types = {type_of[g] for g in gpus}
        if spec is None or len(types) != 1 or len(set(per_node.values())) != 1:
            shapeless += 1
            continue
        key = (spec.model, spec.params or "", spec.batch_size, cluster.gpu_types[types.pop()].name,
               len(per_node), next(iter(per_node.values())))
        a = acc.setdefault(key, [0.0, 0.0])
        a[0] += s["iter_time"] * s["timed_iterations"]
        a[1] += s["timed_iterations"]
    rows = [IterationRow(m, p, b, g, n, gpn, t / k, 0) for (m, p, b, g, n, gpn), (t, k) in sorted(acc.items())]
    return rows, shapeless


def export(store, path: str | Path) -> int:
    rows, _ = iteration_rows(store)
    return write_iterations(path, rows)


def main(argv: list[str] | None = None) -> int:
    import argparse

    from dlsched.live.store import Store

    p = argparse.ArgumentParser(prog="python -m dlsched.live.profile_export", description=__doc__.split("\n")[0])
    p.add_argument("state", help="the live run's state directory")
    p.add_argument("--out", required=True, help="CSV to write (the iterations profile format)")
    args = p.parse_args(argv)
    if not (Path(args.state) / "state.sqlite").exists():
        p.error(f"{args.state}: no live run's state here (state.sqlite is missing)")
    rows, shapeless = iteration_rows(Store(args.state))
    write_iterations(args.out, rows)
    print(f"wrote {len(rows)} rows to {args.out}" + (f" ({shapeless} segments without a nodes x GPUs shape left out)"
                                                   if shapeless else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
