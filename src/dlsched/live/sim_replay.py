"""Fidelity: replay a live run's trace in the simulator, calibrated from the live run.

The simulator gets the live run's cluster (from the stored layout), its jobs
with their live arrival times, a ``MeasuredPerfModel`` built from the
iteration times the agents measured per (model, GPU count), and the start
and restore overheads the live run paid (mean over its segments).  Nothing
else is fitted.  The figure is the relative difference of average JCT.

    python -m dlsched.live.sim_replay STATE_DIR [--policy NAME] [--option k=v] [--out DIR]

The simulation is a ``RunSpec`` (``replay_spec``): with ``--out`` its results folder's
summary.json reruns it (``dlsched simulate --spec DIR``) while the state directory is there.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from dlsched.live.calibrated import from_segments
from dlsched.live.jobfile import LiveJob
from dlsched.live.raycluster import ClusterLayout
from dlsched.live.results import job_records
from dlsched.live.store import Store
from dlsched.policies.base import JobPolicy


@dataclass(frozen=True)
class Fidelity:
    live_avg_jct: float
    sim_avg_jct: float
    start_overhead_s: float
    restore_s: float
    iter_times: dict

    @property
    def rel_error(self) -> float:
        return abs(self.sim_avg_jct - self.live_avg_jct) / self.live_avg_jct

    def line(self) -> str:
        return (f"average JCT: live {self.live_avg_jct:.2f} s, simulated {self.sim_avg_jct:.2f} s, "
                f"difference {100 * self.rel_error:.1f}% (start overhead {self.start_overhead_s:.2f} s, "
                f"restore {self.restore_s:.2f} s)")


def _mean(xs: list[float], default: float) -> float:
    return sum(xs) / len(xs) if xs else default


def _slice_costs(store: Store, segs: list[dict], restore: float) -> dict:
    """The live run's time-slicing, for the simulator's fluid model: its quantum, and one switch as
    paid live (a turn's stop, from the request to the segment's end, plus the next turn's restore,
    from its launch to its first iteration)."""
    from dlsched import defaults as D

    quantum = store.get_meta("slice_quantum_s")
    stops = {(e["job_id"], e["detail"]["segment"]): e["time"] for e in store.events("stop")
             if e["detail"].get("why") == "turn over"}
    stopping = [s["ended_at"] - stops[(s["job_id"], s["segment"])] for s in segs
                if (s["job_id"], s["segment"]) in stops and s["ended_at"] is not None]
    resuming = [s["ready_at"] - s["launched_at"] for s in segs
                if s["kind"] == "slice-resume" and s["ready_at"] is not None and s["launched_at"] is not None]
    return {"slice_quantum_s": float(quantum) if quantum else D.SLICE_QUANTUM_S,
            "slice_switch_s": _mean(stopping, 0.0) + _mean(resuming, restore) if stopping or resuming
            else D.SLICE_SWITCH_S}


def _replay_rows(store: Store) -> list[dict]:
    # a job that failed or could never run has no live JCT to compare: the simulator would run it
    return [r for r in store.jobs() if r["arrival"] is not None and r["status"] not in ("failed", "unschedulable")]


def replay_perf(cluster, state: str):
    """The live run's measured iteration times (``MeasuredPerfModel``), as a run's spec names it
    (``REPLAY_PERF`` with the state directory)."""
    from dlsched.live import models  # noqa: F401  (zoo entries for the example models)

    store = Store(state)
    jobs = [LiveJob.from_json(r["body"], r["arrival"]).spec for r in _replay_rows(store)]
    return from_segments(cluster, store.segments(), {j.job_id: j.model for j in jobs})


REPLAY_PERF = "dlsched.live.sim_replay:replay_perf"


def replay_spec(store: Store, policy: str, options: dict | None = None):
    """The simulation of a live run as a ``RunSpec``: the live cluster (its spec as data), the jobs
    at their live arrival times (records), the measured speeds (``replay_perf`` of the state
    directory) and the overheads the live run paid.  Returns (spec, cluster)."""
    from dlsched.live import models  # noqa: F401  (zoo entries for the example models)
    from dlsched.run import ClusterSpec, EngineSpec, PerfSpec, PolicySpec, RunSpec, WorkloadSpec
    from dlsched.run.records import to_records

    layout = ClusterLayout.from_json(store.get_meta("layout"))
    cluster = layout.cluster()
    jobs = [LiveJob.from_json(r["body"], r["arrival"]).spec for r in _replay_rows(store)]
    segs = store.segments()
    ready = [s for s in segs if s["ready_at"] is not None]
    start = _mean([s["ready_at"] - s["placed_at"] for s in ready if s["kind"] == "start"], 0.0)
    # a time-sliced job's turn waits for its turn, so its placed_at says nothing of the restore
    restore = _mean([s["ready_at"] - s["placed_at"] for s in ready if s["kind"] not in ("start", "slice-resume")],
                    start)
    sliced = _slice_costs(store, segs, restore)
    engine = EngineSpec(start_overhead=start, restore_base=restore, restore_per_gb=0.0,
                        slice_quantum=sliced["slice_quantum_s"], slice_switch=sliced["slice_switch_s"])
    spec = RunSpec(workload=WorkloadSpec(records=to_records(jobs), label=f"live run {store.dir}"),
                   cluster=ClusterSpec(layout.spec.model_dump(mode="json", exclude_defaults=True)),
                   policy=PolicySpec(policy, dict(options or {})),
                   perf=PerfSpec(REPLAY_PERF, options={"state": str(Path(store.dir).resolve())}), engine=engine)
    return spec, cluster


def compare(store: Store, policy: str | JobPolicy, options: dict | None = None, out: str | Path | None = None):
    """Simulate the live run's jobs; returns (Fidelity, SimResult).  ``policy``: a registered name
    (with ``options``), or a policy instance run as given (its spec then names ``policy.name`` and
    ``options``); ``out``: write the results folder, whose summary.json reruns the simulation."""
    from dlsched.run.build import prepare
    from dlsched.run.execute import execute

    name = policy if isinstance(policy, str) else policy.name
    spec, cluster = replay_spec(store, name, options)
    prep = prepare(spec, cluster)
    result = execute(spec, out, prepared=prep, policy=None if isinstance(policy, str) else policy).result
    live = [r.jct for r in job_records(store) if r.status == "finished"]
    sim = [r.jct for r in result.records if r.status == "finished"]
    fid = Fidelity(_mean(live, float("nan")), _mean(sim, float("nan")), spec.engine.start_overhead,
                   spec.engine.restore_base, {f"{m}@{n}": t for (m, n), t in prep.perf.table().items()})
    return fid, result


def main(argv: list[str] | None = None) -> int:
    import argparse

    from dlsched.run.options import policy_options
    from dlsched.errors import DlschedError

    p = argparse.ArgumentParser(prog="python -m dlsched.live.sim_replay", description=__doc__.split("\n")[0])
    p.add_argument("state", help="the live run's state directory")
    p.add_argument("--policy", default=None, help="policy to simulate (default: the live run's)")
    p.add_argument("--option", action="append", default=[], help="policy option KEY=VALUE")
    p.add_argument("--out", default=None, help="write the simulated run's results folder here (its summary.json "
                   "reruns it: dlsched simulate --spec OUT)")
    args = p.parse_args(argv)
    if not (Path(args.state) / "state.sqlite").exists():
        p.error(f"{args.state}: no live run's state here (state.sqlite is missing)")
    store = Store(args.state)
    name = args.policy or store.get_meta("policy") or "fcfs"
    try:
        fid, _ = compare(store, name, policy_options(args.option, [name])[name], out=args.out)
    except DlschedError as e:
        p.error(str(e))
    print(fid.line())
    print("measured seconds per iteration:", json.dumps({k: round(v, 4) for k, v in fid.iter_times.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
