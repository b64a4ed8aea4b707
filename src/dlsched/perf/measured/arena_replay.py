"""Replay the Crius authors' simulator: jobs run at the arena table's measured speeds, in 300-s rounds.

``--throughputs arena-profiled-iteration-times.csv`` (detected from its header) wraps the
configured perf model in ``ArenaReplayPerfModel``.  Every policy and engine prices through
it, so every policy's jobs run at the authors' speeds (``ArenaTimes.lookup``: measured,
x0.9 per halving of GPUs per node, x1.8 per unprofiled size step, infeasible above 300 s,
missing or OOM).

Their simulator advances time in rounds (``simulator.py``, ``scheduler.py``); what it does
that decides a job's completion time, and how it is reproduced here:

- **arrivals** are bundled per round and a job's JCT runs from its round's start:
  ``round_arrivals`` moves each submission to ``300 x max(0, ceil(t / 300) - 1)`` and keeps
  its trace rank, their order within a round (``extra["arena_order"]``);
- **progress** is ``floor(time on GPUs / iteration time)`` iterations, counted at round
  ends, so a job ends at the first round boundary after its last iteration: a job of N
  iterations at t s each is priced ``300 x ceil(N t / 300) / N`` s per iteration, which makes
  every uninterrupted run last whole rounds (``rounds=False`` turns this off);
- **re-planning** at a (re)start costs ``min(per GPU x n, cap)`` s (Crius 10/40, the
  baselines 150/600) and only a charge above one round stops progress, for
  ``ceil(charge / 300) - 1`` rounds: those rounds are added to the job's whole run on a
  shape, i.e. priced into its speed there (exact for a job that runs on one shape, as every
  FCFS job does; a job that changes shape pays them pro rata on each shape it runs on).
  Checkpoint-resume itself is charged 0 s there.

With their data-parallel memory table, their memory check refuses a placement in the
baselines' scheduling queries, as theirs does: Gavel's LP weights (``steps_per_s``) are 0
there.  It never changes a running job's speed, nor refuses a request at load (their
baselines drop a job only when no GPU type runs it, a check made without it).

A job whose model the table does not know at all (not one of their families and sizes) is
priced by the wrapped model throughout, and counted (``models_not_in_table``).

Where the table says a placement is infeasible, the answer depends on when it is asked:
while the jobs are being checked (before ``forget_counts``) it is an infinite time, so a
job whose request cannot run is refused (or, with ``--skip-bad-rows``, skipped and counted
with its reason), as the authors' simulator drops it; during the run, a placement a policy
chose that the table cannot price is priced by the wrapped model and counted
(``infeasible_entries``, ``jobs_priced_by_model``), so no job is lost mid-run.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from dlsched.errors import UnknownNameError
from dlsched.perf.base import IterCost, PerfModel
from dlsched.perf.measured.arena import GPU_MEMORY_GB, PARAM_STEPS, ROUND_S, ArenaTimes, Lookup, gpu_key
from dlsched.workload.job import JobSpec

# their RESCHED_OVERHEAD_{WITH,WITHOUT}_PRUNE and caps: (s per GPU, at most)
REPLAN = {"cell": (10.0, 40.0), "full": (150.0, 600.0)}


ORDER_KEY = "arena_order"  # a job's rank in the trace, in ``JobSpec.extra``: their order within a round


def round_arrivals(jobs: list[JobSpec], round_s: float = ROUND_S) -> list[JobSpec]:
    """Submissions moved to the start of the round that takes them, as the authors' trace manager does.

    A job submitted at t (s after the first) is taken by round ``max(0, ceil(t / 300) - 1)`` and
    its JCT counts from that round's start.  Their queue keeps a round's jobs in trace order;
    ours orders equal submission times by job id, so each job's trace rank is kept in
    ``extra[ORDER_KEY]`` for a policy that replays their order (``policies/arena_fcfs.py``).
    """
    out = []
    for k, j in enumerate(sorted(jobs, key=lambda j: j.submit_time)):  # stable: trace order kept
        r = float(max(0, math.ceil(j.submit_time / round_s) - 1) * round_s)
        out.append(j.with_(submit_time=r, extra={**(j.extra or {}), ORDER_KEY: k}))
    return out


def exact_price(total: int, seconds: float) -> float:
    """Seconds per iteration p near ``seconds / total`` for which the engine's ``total / (1 / p)``
    is exactly ``seconds``, so jobs that end in one round end at one instant (a float a few ulps
    off would end them apart, and a policy would see them freed one by one)."""
    p = seconds / total
    for cand in (p, math.nextafter(p, math.inf), math.nextafter(p, 0.0),
                 math.nextafter(math.nextafter(p, math.inf), math.inf), math.nextafter(math.nextafter(p, 0.0), 0.0)):
        if total / (1.0 / cand) == seconds:
            return cand
    return p


def debt_rounds(n_gpus: int, search: str) -> int:
    """Rounds without progress after a (re)start on n GPUs: only a charge above one round stops a job."""
    per_gpu, cap = REPLAN[search]
    charge = min(per_gpu * n_gpus, cap)
    return max(0, math.ceil(charge / ROUND_S) - 1)


def _family_index() -> dict[str, tuple[str, str]]:
    """Zoo model name -> (authors' family, size) for every size the authors list."""
    from dlsched.workload.models import get_model

    out: dict[str, tuple[str, str]] = {}
    for family, sizes in PARAM_STEPS.items():
        for size in sizes:
            try:
                out.setdefault(get_model(family, size).name, (family, size))
            except UnknownNameError:
                continue
    return out


class ArenaReplayPerfModel(PerfModel):
    """Prices jobs from the arena table by the authors' rules, in whole rounds; counts every fallback."""

    def __init__(self, base: PerfModel, table: ArenaTimes, *, search: str = "full", rounds: bool = True,
                 dp_memory: bool = False):
        super().__init__(base.cluster)
        self.base = base
        self.table = table
        self.search = search  # "cell" (Crius's pruned re-planning) or "full" (the baselines')
        self.rounds = rounds
        self.dp_memory = dp_memory and bool(table.memory)
        self._dp_table = bool(table.memory)
        self.strict = True  # until forget_counts: infeasible is infinite (jobs are being checked)
        c = self.cluster
        self._node_cap = [int(c.nodes[int(np.flatnonzero(c.node_type == t)[0])].num_gpus)
                          if (c.node_type == t).any() else 0 for t in range(len(c.gpu_types))]
        self._gpu_key = [gpu_key(gt.name) for gt in c.gpu_types]
        self._mem_gb = [GPU_MEMORY_GB.get(k, gt.memory_gib)
                        for k, gt in zip(self._gpu_key, c.gpu_types)]
        self._names = _family_index()
        self._lookups: dict[tuple, Lookup] = {}
        self._cache: dict[tuple, IterCost | None] = {}
        self.rules: dict[str, int] = {}  # rule -> distinct (job shape) look-ups priced by it
        self.infeasible: set[str] = set()
        self.missing_models: set[str] = set()
        self.dp_refused: set[str] = set()
        self.replayed_jobs: set[str] = set()
        self.fallback_jobs: set[str] = set()
        self.arrivals_moved = 0

    # -- what a job is in the table's terms
    def family(self, job: JobSpec) -> tuple[str, str] | None:
        from dlsched.workload.models import get_model

        try:
            name = get_model(job.model, job.params).name
        except UnknownNameError:
            return None
        return self._names.get(name)

    def placement(self, gpus: np.ndarray) -> tuple[int, int, int]:
        """(type index, nodes, GPUs per node) of an allocation, as the authors' uniform localities.

        Their jobs always hold the same power-of-two count on each node; an uneven placement of
        ours is read as the largest power of two q <= its fewest GPUs on a node that divides n,
        on n / q nodes (the spread the slowest node imposes).
        """
        c = self.cluster
        types = c.gpu_type_idx[gpus]
        _, counts = np.unique(c.gpu_node[gpus], return_counts=True)
        n = int(gpus.size)
        # the slowest type paces synchronous training: priced on each and the worst kept (below)
        t = int(types[0])
        if counts.size == 1:
            return t, 1, n
        q = 1 << (int(counts.min()).bit_length() - 1)
        while n % q:
            q >>= 1
        return t, n // q, q

    def lookup(self, job: JobSpec, t: int, nodes: int, per_node: int, dp_check: bool = False) -> Lookup:
        """The table's answer for this placement; ``dp_check`` adds their data-parallel memory check
        (when the memory table was given), which guards scheduling decisions, never a running job's speed."""
        fam = self.family(job)
        dp_check = dp_check and self.dp_memory
        key = (fam, job.batch_size, t, nodes, per_node, dp_check)
        hit = self._lookups.get(key)
        if hit is None:
            if fam is None:
                hit = Lookup(None, "missing")
            else:
                hit = self.table.lookup(fam[0], fam[1], job.batch_size, self._gpu_key[t], nodes, per_node,
                                        self._node_cap[t])
                if (hit.iter_s is not None and dp_check
                        and not self.table.dp_memory_ok(fam[0], fam[1], job.batch_size, nodes * per_node,
                                                        self._mem_gb[t])):
                    hit = Lookup(None, "dp-memory", hit.table_key)
            self._lookups[key] = hit
        return hit

    def seconds_per_iteration(self, job: JobSpec, n: int, secs: float) -> float:
        """The replayed price: whole rounds for the job's whole run on this shape, plus its re-planning debt."""
        if not self.rounds or not job.total_iterations:
            return secs
        total = job.total_iterations
        rounds = math.ceil(total * secs / ROUND_S - 1e-9) + debt_rounds(n, self.search)
        return exact_price(total, rounds * ROUND_S)

    def price(self, job: JobSpec, gpus: Sequence[int] | np.ndarray, plan=None) -> IterCost:
        g = np.asarray(gpus, dtype=np.int64)
        if g.size == 0:
            return self.base.price(job, g, plan)
        c = self.cluster
        types = sorted({int(x) for x in c.gpu_type_idx[g]})
        t0, nodes, per = self.placement(g)
        key = (job.job_id, tuple(types), nodes, per)
        cost = self._cache.get(key, False)
        if cost is False:
            cost = self._replayed(job, types, nodes, per)
            self._cache[key] = cost
        if cost is None:
            # their models follow their rule (infeasible: refused at load); a model they never
            # profiled is not theirs to refuse, so the wrapped model prices it (counted)
            if self.strict and self.family(job) is not None:
                return IterCost(math.inf, math.inf, 0.0)
            self.fallback_jobs.add(job.job_id)
            return self.base.price(job, g, plan)
        self.replayed_jobs.add(job.job_id)
        return cost

    def _replayed(self, job: JobSpec, types: list[int], nodes: int, per: int) -> IterCost | None:
        worst = 0.0
        for t in types:
            hit = self.lookup(job, t, nodes, per)
            self.rules[hit.rule] = self.rules.get(hit.rule, 0) + 1
            if hit.iter_s is None:
                if hit.rule == "missing" and self.family(job) is None:
                    self.missing_models.add(f"{job.model} {job.params or ''}".strip())
                label = f"{job.model} b{job.batch_size} {nodes}x{per} {self._gpu_key[t]}: {hit.rule}"
                (self.dp_refused if hit.rule == "dp-memory" else self.infeasible).add(label)
                return None
            worst = max(worst, hit.iter_s)
        secs = self.seconds_per_iteration(job, nodes * per, worst)
        return IterCost(secs, secs, 0.0)

    def steps_per_s(self, job: JobSpec, n: int, t: int) -> float:
        """Worker steps/s of the job on n GPUs of type t at their tightest packing, for Gavel's LP.

        Gavel's weights read the replayed table (policies/gavel), as the authors' Gavel baseline
        reads theirs: n / iteration time, 0 where the table says the job cannot run there (their
        infeasible; with the memory table, their data-parallel memory check too).
        """
        cap = self._node_cap[t]
        per = n if n <= cap else cap
        if not cap or n % per:
            return 0.0
        hit = self.lookup(job, t, n // per, per, dp_check=True)
        if hit.rule == "dp-memory":
            self.dp_refused.add(f"{job.model} b{job.batch_size} {n // per}x{per} {self._gpu_key[t]}")
        return 0.0 if hit.iter_s is None else n / hit.iter_s

    def refusal(self, job: JobSpec) -> str | None:
        """Why the job's own request cannot run, in the table's terms (for the load-time message)."""
        types = [self.cluster.type_id(job.gpu_type)] if job.gpu_type else range(len(self.cluster.gpu_types))
        n = job.num_gpus
        hit = None
        for t in types:  # an unpinned job must run on every type a policy may give it
            cap = self._node_cap[t]
            per = n if n <= cap else cap
            hit = self.lookup(job, t, n // per, per)
            if hit.iter_s is None:
                break
        if hit is None or hit.iter_s is not None:
            return None
        what = {"oom": "the authors' table measured it out of memory",
                "over-round": "the authors' table measured it above one 300-s round",
                "missing": "the authors' table has no entry for it (nor at its tightest packing or a "
                           "larger size)"}
        return what.get(hit.rule, hit.rule)

    def for_policy(self, name: str) -> None:
        """Re-aim the replay at another policy of the same run (``dlsched compare``): its re-planning
        search and whether the memory check applies change, and the counts start afresh."""
        crius = name.startswith("crius")
        self.search = "cell" if crius else "full"
        self.dp_memory = self._dp_table and not crius and not name.startswith("fcfs")
        self._lookups.clear()
        self.forget_counts()

    def prepare_jobs(self, jobs: list[JobSpec]) -> list[JobSpec]:
        """Arrivals moved to their rounds' starts (``round_arrivals``) when replaying in rounds."""
        if not self.rounds:
            return jobs
        out = round_arrivals(jobs)
        self.arrivals_moved = sum(1 for a, b in zip(sorted(jobs, key=lambda j: j.submit_time), out)
                                  if a.submit_time != b.submit_time)
        return out

    def packing_factors(self, jobs, gpu_type: str) -> list[float]:
        return self.base.packing_factors(jobs, gpu_type)

    def forget_counts(self) -> None:
        """The run begins: the load-time check priced every request, which is not pricing the run did."""
        self.strict = False
        for s in (self.replayed_jobs, self.fallback_jobs, self.infeasible, self.dp_refused, self._cache,
                  self.rules, self.missing_models):
            s.clear()

    def describe(self) -> dict:
        d = dict(self.base.describe())
        d["replay"] = {
            "throughputs": self.table.source, "table_entries": len(self.table),
            "rules": "arena (sjtu-epcc/arena db_querier): measured; x0.9 per halving of GPUs per node; "
                     "x1.8 per unprofiled size step; >300 s, missing or OOM infeasible",
            "rounds": self.rounds, "round_s": ROUND_S, "replan_search": self.search,
            "dp_memory_check": self.table.memory_source if self.dp_memory else None,
            "arrivals_moved_to_round_start": self.arrivals_moved,
            "jobs_replayed": len(self.replayed_jobs),
            "jobs_priced_by_model": len(self.fallback_jobs),
            "lookups_by_rule": dict(sorted(self.rules.items())),
            "infeasible_entries": sorted(self.infeasible),
            "dp_memory_refused": sorted(self.dp_refused),
            "models_not_in_table": sorted(self.missing_models),
            "note": "jobs_priced_by_model counts jobs with at least one allocation (run or only considered "
                    "by the policy) that the table could not price; those allocations ran at the wrapped "
                    "model's speed",
        }
        return d
