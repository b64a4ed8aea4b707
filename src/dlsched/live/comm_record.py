"""A communication policy in the live runtime: asked, recorded, not programmed.

``dlsched serve --comm NAME`` runs the policy (CRUX or a baseline, ``dlsched.comm``) on the
flow model of the live cluster every time a job starts, stops or moves, exactly as the
simulator's contention hook does, and records what it would program: each job's priority
level and the switch path of each of its flows.  Nothing is sent to the fabric: there is no
switch to program here (the jobs' real traffic follows the fabric's own ECMP and a single
priority), so the records are what a deployment would hand to its switches and NICs.

Records are ``comm`` events in the state store (``level``, ``paths``) when a job's assignment
changes, and ``comm.csv`` (time, job, level, paths) beside ``jobs.csv`` under ``--out``.
Jobs are priced by the model-based perf model (``adaptive``): the policy needs each job's
computation and communication time alone, which the live runtime does not measure apart.
"""

from __future__ import annotations

import csv
from pathlib import Path

CSV_NAME = "comm.csv"
EVENT = "comm"


class CommRecorder:
    def __init__(self, cluster, policy: str, levels: int = 8, reserved: int = 2, seed: int = 0):
        from dlsched.comm import ScheduledContention, make_comm_policy
        from dlsched.comm.fabric import contention_for
        from dlsched.perf.default import default_perf_model

        self.name = policy
        self.model = ScheduledContention(contention_for(cluster, seed), make_comm_policy(policy, levels, reserved,
                                                                                        seed))
        self.perf = default_perf_model(cluster)
        self._last: dict[str, tuple[int, tuple[str, ...]]] = {}

    def placed(self, store, now: float, spec, gpus) -> None:
        """A job started or moved onto ``gpus``: re-assign every job, record what changed."""
        from dlsched.policies.base import Allocation

        gpus = tuple(int(g) for g in gpus)
        self.model.add(spec.job_id, spec, Allocation.of(gpus), self.perf.price(spec, gpus))
        self._record(store, now)

    def removed(self, store, now: float, job_id: str) -> None:
        """A job left its GPUs (finished, suspended, moved or failed)."""
        if job_id not in self.model._placed:
            return
        self.model.remove(job_id)
        self._last.pop(job_id, None)
        self._record(store, now)

    def assignment(self, job_id: str) -> tuple[int, tuple[str, ...]]:
        """(priority level, the distinct switch paths its flows take, as ``a>b>c``)."""
        flow = self.model.flow
        g = flow.graph
        paths = set()
        for f in flow.traffic(job_id).flows:  # links[0] and links[-1] join the GPUs to their NICs
            net = f.links[1:-1]
            paths.add(">".join([g.link_src[net[0]], *(g.link_dst[l] for l in net)]))
        return self.model.levels().get(job_id, 0), tuple(sorted(paths))

    def _record(self, store, now: float) -> None:
        for j in sorted(self.model._placed):
            got = self.assignment(j)
            if self._last.get(j) != got:
                self._last[j] = got
                store.event(now, j, EVENT, policy=self.name, level=got[0], paths=list(got[1]))


def write_comm_csv(store, out_dir) -> Path | None:
    """``comm.csv`` from the store's ``comm`` events (None when the run recorded none)."""
    rows = store.events(EVENT)
    if not rows:
        return None
    path = Path(out_dir) / CSV_NAME
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["time", "job_id", "policy", "level", "paths"])
        for r in rows:
            d = r["detail"]
            w.writerow([repr(round(r["time"], 6)), r["job_id"], d["policy"], d["level"], " ".join(d["paths"])])
    return path
