"""Dally: delay scheduling over network tiers with network-sensitive preemption
(Sharma et al., "Dally: delay scheduling and network-sensitive preemption for DDL",
shared/seeds/003; sections IV-B1 to IV-B3, Algorithms 1 and 2).

- Resource offers (Algorithm 1).  Queued jobs are offered the tightest free
  placement in priority order (``dally.priority``, lowest first).  A job accepts
  an offer whose level (machine, rack, network) its delay timers allow: a
  machine offer only, until the machine timer has run out since it entered the
  queue; then a rack offer, until the rack timer has also run out; then any.  A
  job too big for a machine has a machine timer of 0, one too big for a rack
  both timers 0.  A job that declines keeps waiting; later jobs still get offers.
- Timers: the auto-tuner (``dally.tuner``, Algorithm 2) for ``dally``; fixed
  12 h + 12 h for ``dally-manual`` (the paper's empirical defaults); 0 for
  ``dally-nowait``; unbounded for ``dally-consolidated`` (waits for the tightest
  level the job fits).  Every variant keeps the same preemption.
- Network-sensitive preemption: at each round (every ``round_s``), a queued job
  that cannot be placed may take GPUs from running jobs of higher (worse)
  priority that have held their GPUs for a round, highest first, if that lets it
  fit at a level its timers allow.  Preempted jobs keep their progress, go back
  to the queue and pay the one cost rule (``common.replan_costs``) on their next
  start: nothing to resume on a shape they have a plan for (the paper: "the
  restore time is negligible"), a plan search for a new shape.
- Re-offers (ours, not in the paper; off in every paper variant and on only in
  ``dally-reoffer``): at each round a running job placed on a looser level
  than it fits is offered, in the same priority order, the tightest free
  placement (its own GPUs counted) and moves if that is a tighter level.
  Tiresias has no such move, so the named ``dally`` row must not either.

Simplifications (docs/dally.md): offers are computed centrally (the job's
"local scheduler" is the accept rule above); the round length, the initial
timer before the tuner has a sample, and the history limit (20 waits) are
ours, the paper gives none.  The re-offer of running jobs is our reading of
how "jobs suffering from sub-optimal placements" get "better-consolidated
placements" (section V-B) in a simulator built on Themis's leases; the paper
describes no such move, so it is a separate, labelled policy of ours.
"""

from __future__ import annotations

import dataclasses
import math

from dlsched.cluster.placement import pick_gpus
from dlsched.cluster.topology import Tier
from dlsched.errors import InputError
from dlsched.policies.base import Allocation, ClusterView, Decision, JobPolicy, JobState
from dlsched.policies.dally.priority import READINGS, priority
from dlsched.policies.dally.tuner import DelayTuner
from dlsched.policies.options import PolicyOption
from dlsched.policies.common.preemption import largest_fits, placement_level, preempt_to_fit
from dlsched.policies.common.replan_costs import COST_OPTIONS, PLAN_PROFILE_S, ChargesReplanning
from dlsched.policies.registry import register

HOUR = 3600.0
MANUAL_S = {"machine": 12 * HOUR, "rack": 12 * HOUR}  # Dally section IV-B2
_TIERS = {"machine": Tier.NVLINK, "rack": Tier.RACK, "network": Tier.NETWORK}
_ORDER = ("machine", "rack", "network")
# the tuner's history limit: the last 20 waits of each (level, GPU demand) list (ours; the paper gives
# no value; about the number of jobs of one demand a 2-rack cluster places in a day of the batch runs)
HISTORY_N = 20


@register("dally")
class Dally(ChargesReplanning, JobPolicy):
    name = "dally"
    timers = "auto"  # "auto" | "manual" | "nowait" | "consolidated"
    summary = "delay scheduling over machine/rack/network tiers, network-sensitive preemption, auto-tuned timers"
    paper = "Sharma et al., Dally: delay scheduling and network-sensitive preemption for distributed DL (seed 003)"
    options = (
        PolicyOption("round_s", float, 600.0, "preemption round in seconds (a job runs at least one round)",
                     positive=True),
        PolicyOption("history_n", int, HISTORY_N, "auto-tuner history limit: waits kept per (level, GPU "
                     "demand) list (Algorithm 2's sliding window size)", positive=True, optional=True),
        PolicyOption("history_s", float, None, "also drop waits older than this many seconds (an earlier "
                     "time-window reading, kept for the ablation)", positive=True, optional=True),
        PolicyOption("reading", str, "inferred", "priority formula: inferred, inverted or attained "
                     "(the formula is inferred; see docs/dally.md)"),
        PolicyOption("preempt", bool, True, "network-sensitive preemption"),
        PolicyOption("reoffer", bool, False, "at each preemption round, offer running jobs a tighter level "
                     "(ours, not in the paper; docs/dally.md)"),
        *COST_OPTIONS,
    )

    def __init__(self, round_s: float = 600.0, history_s: float | None = None, reading: str = "inferred",
                 preempt: bool = True, reoffer: bool = False, history_n: int | None = HISTORY_N,
                 costs: str = "derived", plan_s: float = PLAN_PROFILE_S):
        self.set_costs(costs, plan_s)  # what a start, resume or move costs: the one rule, as for every policy
        if round_s <= 0:
            raise ValueError("round_s must be positive")
        if history_n is None and history_s is None:
            raise InputError("history_n and history_s cannot both be none: the tuner needs a history limit",
                             field="--option")
        self.history_n = history_n
        if reading not in READINGS:
            raise InputError(f"reading: must be one of {', '.join(READINGS)}, got {reading!r}", field="--option")
        self.round_s = float(round_s)
        self.history_s = history_s
        self.reading = reading
        self.preempt = preempt
        self.reoffer = reoffer
        self.reset()

    def reset(self) -> None:
        self._tuner: DelayTuner | None = None
        self._origin: float | None = None
        self._last_round = -1
        self.accepted = {"machine": 0, "rack": 0, "network": 0}
        self.moves = 0  # running jobs moved to a tighter level
        self._reoffer_pending = False

    # --------------------------------------------------------------- timers

    def tuner_counts(self) -> dict[str, dict[str, float]]:
        """Per level: timer evaluations, fallbacks to the fixed default, and their share (auto timers only)."""
        if self._tuner is None or self.timers != "auto":
            return {}
        return {lv: {"evaluations": c.evaluations, "fallbacks": c.fallbacks, "share": c.fallback_share}
                for lv, c in self._tuner.counts.items()}

    def _timer(self, level: str, n: int, now: float) -> float:
        if self.timers == "manual":
            return MANUAL_S[level]
        if self.timers == "nowait":
            return 0.0
        if self.timers == "consolidated":
            return math.inf
        return self._tuner.timer(level, n, now)

    def allowed(self, view: ClusterView, job: JobState, type_id: int | None, now: float) -> tuple[str, float]:
        """(loosest level the job accepts now, when that relaxes next: inf if never)."""
        n = job.spec.num_gpus
        machine_max, rack_max = largest_fits(view.cluster, type_id)
        waited = now - job.queued_since
        tm = self._timer("machine", n, now) if n <= machine_max else 0.0
        if waited < tm:  # the rack timer is not asked for until the machine timer has run out
            return "machine", job.queued_since + tm
        tr = self._timer("rack", n, now) if n <= rack_max else 0.0
        if waited < tm + tr:
            return "rack", job.queued_since + tm + tr
        return "network", math.inf

    # --------------------------------------------------------------- schedule

    def schedule(self, view: ClusterView, now: float) -> Decision:
        c = view.cluster
        if self._tuner is None:
            self._tuner = DelayTuner(MANUAL_S, history_n=self.history_n, history_s=self.history_s)
        if self._origin is None:
            self._origin = now
        k = int((now - self._origin) / self.round_s + 1e-9)
        is_round = self.preempt and k > self._last_round
        if is_round:
            self._last_round = k
        next_round = self._origin + (k + 1) * self.round_s
        d = Decision()
        prio = {}
        queue = list(view.queued())
        for j in queue:
            prio[j.job_id] = priority(view, j, now, self.reading)
        queue.sort(key=lambda j: (prio[j.job_id], j.spec.submit_time, j.job_id))
        victims: list[JobState] = []
        if is_round:
            for j in view.running():
                if now - j.policy_data.get("dally_started", -math.inf) >= self.round_s - 1e-9:
                    prio[j.job_id] = priority(view, j, now, self.reading)
                    victims.append(j)
            victims.sort(key=lambda j: (-prio[j.job_id], -j.spec.submit_time, j.job_id))
        # running jobs on a looser level than they fit are offered a tighter one at each round, in the same
        # priority order as the queue (ours: the lease-style re-offer through which the paper's lowest-priority,
        # most slowed jobs get better-consolidated placements; a move pays the one cost rule)
        offers = list(queue)
        if is_round and self.reoffer:
            misplaced = {j.job_id for j in view.running() if self._misplaced(view, j)}
            offers += [v for v in victims if v.job_id in misplaced]
            # a quiet cluster makes no calls: come back next round while any job could move
            self._reoffer_pending = bool(misplaced)
        offers.sort(key=lambda j: (prio[j.job_id], j.spec.submit_time, j.job_id))
        scratch = view.free.copy()
        gone: set[str] = set()
        wake = math.inf
        placed = 0
        for job in offers:
            n = job.spec.num_gpus
            t = c.type_id(job.spec.gpu_type) if job.spec.gpu_type else None
            if job.allocation is not None:  # a running job offered a tighter placement
                if job.job_id not in gone:
                    self._reoffer(view, job, t, scratch, d, gone, now)
                continue
            level, relax = self.allowed(view, job, t, now)
            gpus = pick_gpus(scratch, n, t, max_tier=_TIERS[level]) if scratch.free_of_type(t) >= n else None
            if gpus is None and victims:
                worse = [v for v in victims if v.job_id not in gone and prio[v.job_id] > prio[job.job_id]]
                got = preempt_to_fit(c, scratch, n, t, _TIERS[level], worse)
                if got is not None:
                    gpus, scratch, taken = got
                    for v in taken:
                        gone.add(v.job_id)
                        d.preempt.append(v.job_id)
            if gpus is None:
                wake = min(wake, relax)
                continue
            scratch.allocate(gpus)
            got_level = placement_level(c, gpus)
            self._tuner.record(got_level, n, now, now - job.queued_since)
            self.accepted[got_level] += 1
            job.policy_data["dally_started"] = now
            d.allocate[job.job_id] = Allocation.of(gpus)
            placed += 1
        if d.preempt or placed < len(queue) or self._reoffer_pending:
            wake = min(wake, next_round if self.preempt else math.inf)
        if math.isfinite(wake):
            d.wakeup = max(wake, now)
        return d

    @staticmethod
    def _tightest(view: ClusterView, job: JobState) -> str:
        t = view.cluster.type_id(job.spec.gpu_type) if job.spec.gpu_type else None
        machine_max, rack_max = largest_fits(view.cluster, t)
        n = job.spec.num_gpus
        return "machine" if n <= machine_max else "rack" if n <= rack_max else "network"

    def _misplaced(self, view: ClusterView, job: JobState) -> bool:
        level = placement_level(view.cluster, job.allocation.gpus)
        return _ORDER.index(level) > _ORDER.index(self._tightest(view, job))

    def _reoffer(self, view, job, type_id, scratch, d: Decision, gone: set, now: float) -> None:
        """Move a running job to the tightest free placement (its own GPUs counted) if that is a tighter level."""
        own = job.allocation.gpus
        now_at = _ORDER.index(placement_level(view.cluster, own))
        scratch.release(own)
        gpus = pick_gpus(scratch, len(own), type_id, max_tier=_TIERS[_ORDER[now_at - 1]])
        if gpus is None:
            scratch.allocate(own)
            return
        scratch.allocate(gpus)
        d.allocate[job.job_id] = Allocation.of(gpus, job.allocation.plan)
        job.policy_data["dally_started"] = now
        gone.add(job.job_id)  # moved: not a victim this round
        self.moves += 1

    def describe(self) -> dict:
        return {**super().describe(), "timers": self.timers, "round_s": self.round_s,
                "history_n": self.history_n, "history_s": self.history_s, "reading": self.reading,
                "preempt": self.preempt, "reoffer": self.reoffer,
                "priority_formula": "inferred (shared/seeds/README.md)"}


@register("dally-manual")
class DallyManual(Dally):
    name = "dally-manual"
    timers = "manual"
    summary = "Dally with fixed delay timers: 12 h machine, then 12 h rack"


@register("dally-nowait")
class DallyNoWait(Dally):
    name = "dally-nowait"
    timers = "nowait"
    summary = "Dally with delay timers of 0: takes the tightest free placement at once"


@register("dally-consolidated")
class DallyConsolidated(Dally):
    name = "dally-consolidated"
    timers = "consolidated"
    summary = "Dally waiting as long as needed for the tightest level a job fits (machine, else rack)"


@register("dally-reoffer")
class DallyReoffer(Dally):
    """Ours, not the paper's: auto-tuned Dally that also moves running jobs to tighter free placements."""

    name = "dally-reoffer"
    summary = "ours: Dally (auto-tuned timers) plus re-offers that move running jobs to a tighter level"
    options = tuple(dataclasses.replace(o, default=True) if o.name == "reoffer" else o for o in Dally.options)

    def __init__(self, round_s: float = 600.0, history_s: float | None = None, reading: str = "inferred",
                 preempt: bool = True, reoffer: bool = True, history_n: int | None = HISTORY_N,
                 costs: str = "derived", plan_s: float = PLAN_PROFILE_S):
        super().__init__(round_s, history_s, reading, preempt, reoffer, history_n, costs, plan_s)
