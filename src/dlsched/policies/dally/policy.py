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
- Timers: the auto-tuner (``dally.tuner``, Algorithm 2) for ``dally``, whose
  rack list learns the wait after the machine timer ran out, as the rack timer
  counts (``rack_wait=whole``: the whole wait, our earlier reading); fixed
  12 h + 12 h for ``dally-manual`` (the paper's empirical defaults; ``manual_h``
  sweeps them); 0 for
  ``dally-nowait``; unbounded for ``dally-consolidated`` (waits for the tightest
  level the job fits).  Every variant keeps the same preemption.
- Network-sensitive preemption, two halves, both at each round (every
  ``round_s``, the lease of the Themis simulator ArtISt-sim extends):
  (1) a queued job that cannot be placed may take GPUs from running jobs of
  higher (worse) priority that have held their GPUs for a round, highest first,
  if that lets it fit at a level its timers allow; (2) the round's offers also
  go, in the same priority order, to running jobs placed on a looser level than
  they fit (their lease comes up), each offered the tightest free placement
  with its own GPUs counted; it moves if that is a tighter level, else keeps
  its GPUs.  (2) is how the paper's preemption "prioritizes providing
  better-consolidated placements to jobs suffering from sub-optimal placements"
  (section VI-3) and how it lets Dally-noWait, which never waits, beat Tiresias
  on 2 racks (VI-1); without it the most slowed job (lowest priority) is the one
  job preemption never touches.  ``reoffer=false`` (``dally-noreoffer``, an
  ablation of ours) keeps only (1), our earlier reading.  Preempted and moved
  jobs keep their progress and pay the one cost rule (``common.replan_costs``):
  nothing to resume on a shape they have a plan for (the paper: "the restore
  time is negligible"), a plan search for a new shape.

Simplifications (docs/dally.md): offers are computed centrally (the job's
"local scheduler" is the accept rule above); the round length, the initial
timer before the tuner has a sample, and the history limit (20 waits) are
ours, the paper gives none.  A re-offered running job is not subject to its
delay timers (it already runs; it only ever moves tighter) and does not
preempt others to move.
"""

from __future__ import annotations

import bisect
import dataclasses
import math

from dlsched.cluster.placement import pick_gpus
from dlsched.cluster.topology import Tier
from dlsched.errors import InputError
from dlsched.policies.base import Allocation, ClusterView, Decision, JobPolicy, JobState, JobStatus
from dlsched.policies.dally.priority import READINGS, priority, running_priorities
from dlsched.policies.dally.tuner import DelayTuner
from dlsched.policies.options import PolicyOption
from dlsched.policies.common.kept_queue import KeptQueue, MapStates
from dlsched.policies.common.placing import PlaceOrPreempt
from dlsched.policies.common.preemption import largest_fits, placement_level
from dlsched.policies.common.replan_costs import COST_OPTIONS, PLAN_PROFILE_S, ChargesReplanning
from dlsched.policies.registry import register

HOUR = 3600.0
MANUAL_S = {"machine": 12 * HOUR, "rack": 12 * HOUR}  # Dally section IV-B2
_TIERS = {"machine": Tier.NVLINK, "rack": Tier.RACK, "network": Tier.NETWORK}
_ORDER = ("machine", "rack", "network")
# the tuner's history limit: the last 20 waits of each (level, GPU demand) list (ours; the paper gives
# no value; about the number of jobs of one demand a 2-rack cluster places in a day of the batch runs)
HISTORY_N = 20
RACK_WAITS = ("stage", "whole")


def _first(pair):
    return pair[0]


class _CallTimers:
    """One call's delay timers by (level, GPUs): the tuner is asked once per list and again only
    after a wait is recorded on it; each evaluation is counted as if asked per job."""

    def __init__(self, tuner: DelayTuner | None, mode: str, now: float, manual_s: dict[str, float] = MANUAL_S):
        self.tuner, self.now = tuner, now
        self.fixed = None if tuner is not None else mode
        self.manual_s = manual_s
        self.answers: dict[tuple[str, int], tuple[float, bool]] = {}
        self.evaluations = {"machine": 0, "rack": 0}
        self.fallbacks = {"machine": 0, "rack": 0}

    def __call__(self, level: str, n: int) -> float:
        if self.fixed is not None:
            return self.manual_s[level] if self.fixed == "manual" else 0.0 if self.fixed == "nowait" else math.inf
        key = (level, n)
        got = self.answers.get(key)
        if got is None:
            got = self.answers[key] = self.tuner.answer(level, n, self.now)
        self.evaluations[level] += 1
        if got[1]:
            self.fallbacks[level] += 1
        return got[0]

    def ask(self, level: str, n: int) -> tuple[float, bool | None]:
        """(timer, whether it fell back; None: a fixed timer, never counted), counted by the caller."""
        if self.fixed is not None:
            return self(level, n), None
        key = (level, n)
        got = self.answers.get(key)
        if got is None:
            got = self.answers[key] = self.tuner.answer(level, n, self.now)
        return got

    def forget(self, level: str, n: int) -> None:
        self.answers.pop((level, n), None)

    def close(self) -> None:
        if self.tuner is not None:
            for level, k in self.evaluations.items():
                if k:
                    self.tuner.count(level, k, self.fallbacks[level])


@register("dally")
class Dally(ChargesReplanning, JobPolicy):
    name = "dally"
    timers = "auto"
    # skip placements already known to fail within a call (False: ask ``PlaceOrPreempt`` each time;
    # the same decisions, kept so tests can compare the two)
    shortcuts = True  # "auto" | "manual" | "nowait" | "consolidated"
    summary = "delay scheduling over machine/rack/network tiers, network-sensitive preemption, auto-tuned timers"
    paper = "Sharma et al., Dally: delay scheduling and network-sensitive preemption for distributed DL (seed 003)"
    options = (
        PolicyOption("round_s", float, 600.0, "preemption round in seconds (a job runs at least one round)",
                     positive=True),
        PolicyOption("history_n", int, HISTORY_N, "auto-tuner history limit: waits kept per (level, GPU "
                     "demand) list (Algorithm 2's sliding window size)", positive=True, optional=True),
        PolicyOption("history_s", float, None, "also drop waits older than this many seconds (an earlier "
                     "time-window reading, kept for the ablation)", positive=True, optional=True),
        PolicyOption("rack_wait", str, "stage", "wait a rack acceptance adds to the tuner's rack list: stage "
                     "(since the machine timer ran out, as the rack timer counts) or whole (since the job "
                     "entered the queue; our earlier reading)"),
        PolicyOption("reading", str, "inferred", "priority formula: inferred, inverted or attained "
                     "(the formula is inferred; see docs/dally.md)"),
        PolicyOption("preempt", bool, True, "network-sensitive preemption"),
        PolicyOption("reoffer", bool, True, "at each preemption round, offer running jobs on a looser level "
                     "than they fit a tighter one (the paper's preemption, second half; docs/dally.md)"),
        *COST_OPTIONS,
    )

    def __init__(self, round_s: float = 600.0, history_s: float | None = None, reading: str = "inferred",
                 preempt: bool = True, reoffer: bool = True, history_n: int | None = HISTORY_N,
                 costs: str = "derived", plan_s: float = PLAN_PROFILE_S, rack_wait: str = "stage"):
        self.set_costs(costs, plan_s)  # what a start, resume or move costs: the one rule, as for every policy
        if round_s <= 0:
            raise ValueError("round_s must be positive")
        if history_n is None and history_s is None:
            raise InputError("history_n and history_s cannot both be none: the tuner needs a history limit",
                             field="--option")
        self.history_n = history_n
        if rack_wait not in RACK_WAITS:
            raise InputError(f"rack_wait: must be one of {', '.join(RACK_WAITS)}, got {rack_wait!r}",
                             field="--option")
        self.rack_wait = rack_wait
        if reading not in READINGS:
            raise InputError(f"reading: must be one of {', '.join(READINGS)}, got {reading!r}", field="--option")
        self.round_s = float(round_s)
        self.history_s = history_s
        self.reading = reading
        self.preempt = preempt
        self.reoffer = reoffer
        self.manual_s = MANUAL_S  # the fixed timers (``dally-manual``'s option)
        self.reset()

    def reset(self) -> None:
        self._tuner: DelayTuner | None = None
        self._origin: float | None = None
        self._last_round = -1
        self.accepted = {"machine": 0, "rack": 0, "network": 0}
        self.moves = 0  # running jobs moved to a tighter level
        self._reoffer_pending = False
        self._states = MapStates()  # names of free-map states, for ``_no_fit``
        self._no_fit: dict[tuple, int] = {}  # (n, type, tier) -> the state in which pick_gpus found nothing
        # the queue in offer order, kept between calls: a queued job's offer key does not change while it waits
        self._queue = KeptQueue()

    def on_submit(self, job: JobState, now: float) -> None:
        self._queue.submitted(job)

    def on_finish(self, job: JobState, now: float) -> None:
        self._queue.left(job)

    # --------------------------------------------------------------- timers

    def tuner_counts(self) -> dict[str, dict[str, float]]:
        """Per level: timer evaluations, fallbacks to the fixed default, and their share (auto timers only)."""
        if self._tuner is None or self.timers != "auto":
            return {}
        return {lv: {"evaluations": c.evaluations, "fallbacks": c.fallbacks, "share": c.fallback_share}
                for lv, c in self._tuner.counts.items()}

    def _timer(self, level: str, n: int, now: float) -> float:
        if self.timers == "manual":
            return self.manual_s[level]
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

    def _queued_key(self, view: ClusterView, job: JobState, now: float) -> tuple:
        """(priority, submit time, id): the offer order, remembered for a queued job, whose
        priority's inputs (time run, service, iterations done) only change while it runs, so
        the same inputs give the same float."""
        key = (job.run_time, job.gpu_seconds, job.done_iterations)
        got = job.policy_data.get("dally_prio")
        if got is None or got[0] != key:
            got = (key, (priority(view, job, now, self.reading), job.spec.submit_time, job.job_id))
            job.policy_data["dally_prio"] = got
        return got[1]

    def _fits(self, view: ClusterView, job: JobState) -> tuple[int, int | None, int, int]:
        """(GPUs, type id or None, GPUs of the largest machine and rack of that type), per job."""
        got = job.policy_data.get("dally_fits")
        if got is None:
            c = view.cluster
            t = c.type_id(job.spec.gpu_type) if job.spec.gpu_type else None
            got = (job.spec.num_gpus, t, *largest_fits(c, t))
            job.policy_data["dally_fits"] = got
        return got

    @staticmethod
    def _level(timers, n: int, machine_max: int, rack_max: int, queued_since: float,
               now: float) -> tuple[Tier, float]:
        """``allowed`` as a tier, from this call's timers."""
        waited = now - queued_since
        tm = timers("machine", n) if n <= machine_max else 0.0
        if waited < tm:
            return Tier.NVLINK, queued_since + tm
        tr = timers("rack", n) if n <= rack_max else 0.0
        if waited < tm + tr:
            return Tier.RACK, queued_since + tm + tr
        return Tier.NETWORK, math.inf

    def _call_timers(self, now: float) -> "_CallTimers":
        return _CallTimers(self._tuner if self.timers == "auto" else None, self.timers, now, self.manual_s)

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
        entries = self._queue.update(view, lambda j: (self._queued_key(view, j, now), j, self._fits(view, j)))
        n_queued = len(entries)
        # running jobs that have held their GPUs for a round, highest (worst) priority first, as
        # (-priority, -submit time, id, job): ids are unique, so the jobs are never compared
        held: list[JobState] = []
        misplaced_any = False
        if is_round:
            least = self.round_s - 1e-9
            if self.reoffer:
                # one pass over the running jobs: which have held their GPUs for a round, and whether
                # any is misplaced (``_misplaced``'s remembered answer read inline: asked of every
                # running job at every round)
                moving: list[JobState] = []
                misplaced_of = self._misplaced
                for j in view.running():
                    pd = j.policy_data
                    got = pd.get("dally_misplaced")
                    m = got[1] if got is not None and got[0] is j.allocation else misplaced_of(view, j)
                    if now - pd.get("dally_started", -math.inf) >= least:
                        held.append(j)
                        if m:
                            moving.append(j)
                    if m:
                        misplaced_any = True
            else:
                held = [j for j in view.running() if now - j.policy_data.get("dally_started", -math.inf) >= least]

        # held jobs as (-priority, -submit time, id, job), highest priority first (ids are unique,
        # so jobs are never compared), ranked when first needed
        ranked: list[tuple] = []

        def ranking():
            if not ranked:
                ranked[:] = sorted([(-p, -j.spec.submit_time, j.spec.job_id, j)
                                    for p, j in zip(running_priorities(view, held, now, self.reading), held)])
            # victims with a priority above p form a prefix (sorted by priority, highest first):
            # its length is found by bisection on the negated priorities
            return [r[3] for r in ranked], [r[0] for r in ranked]
        # running jobs on a looser level than they fit are offered a tighter one at each round, in the same
        # priority order as the queue: the lease-style re-offer through which the paper's lowest-priority,
        # most slowed jobs get better-consolidated placements (a move pays the one cost rule)
        offers = entries
        if is_round and self.reoffer:
            # only the misplaced held jobs' priorities order the offers (the keys are unique, so the
            # sort below does not depend on the order they are added in)
            offers = entries + [((p, j.spec.submit_time, j.spec.job_id), j, None)
                                for p, j in zip(running_priorities(view, moving, now, self.reading), moving)]
            # a quiet cluster makes no calls: come back next round while any job could move
            self._reoffer_pending = misplaced_any
            offers.sort(key=_first)
        # placements on a scratch map, failures remembered per map state (``common.placing``)
        placer = PlaceOrPreempt(c, view.free, self._states, self._no_fit, ranking if held else None)
        wake = math.inf
        placed = 0
        # the timers as ``allowed`` reads them, asked once per (level, GPUs) per call and again after
        # a wait of that list is recorded; evaluations are counted per job as ``allowed`` counts them
        timers = self._call_timers(now)
        # with timers that never relax (consolidated: infinite; nowait: zero) a job's level and
        # relax time depend only on its size and type, so they are worked out once per size and type
        by_size = self.timers in ("consolidated", "nowait")
        levels: dict[tuple, tuple[Tier, float]] = {}
        # other timers: per (size, type) the machine timer and whether it fell back, and the rack
        # timer likewise once asked; emptied when a wait is recorded.  Evaluations counted here
        per_size: dict[tuple, list] = {}
        evals, falls = [0, 0], [0, 0]  # machine, rack
        # ... and, in a call that only takes GPUs (no victims, no moves), once a job of a size and
        # type finds no placement every later one fails too (failures are monotone: ``common.placing``)
        # and asks nothing else of the call (its relax time is infinite): those are passed over
        dead: set[tuple] | None = set() if by_size and not held and offers is entries else None
        # ... and, in any call without victims or moves, a (GPUs, type, tier) that found no placement
        # finds none for a later job in the call either (takes only shrink the map): such a job only
        # adds its relax time to the wake-up
        failed: set[tuple] | None = set() if not held and self.shortcuts else None
        started: list[tuple] = []
        for entry in offers:
            sk, job, fits = entry
            if fits is None:  # a running job offered a tighter placement
                if job.job_id not in placer.gone:
                    t = c.type_id(job.spec.gpu_type) if job.spec.gpu_type else None
                    self._reoffer(view, job, t, placer.scratch, d, placer.gone, now)
                    placer.released()
                continue
            if dead is not None and fits in dead:
                continue
            n, t, machine_max, rack_max = fits
            if by_size:
                got = levels.get(fits)
                if got is None:
                    got = levels[fits] = self._level(timers, n, machine_max, rack_max, 0.0, now)
                tier, relax = got
                tm = 0.0  # fixed timers: the tuner's lists are kept but decide nothing
            else:
                # ``_level`` inline, with the machine timer and the rack timer (asked only when the
                # machine timer has run out, as ``allowed`` asks) kept per size for the call and
                # each evaluation counted here
                st = per_size.get(fits)
                if st is None:
                    st = per_size[fits] = [*(timers.ask("machine", n) if n <= machine_max else (0.0, False)),
                                           None, None]
                    if n > machine_max:
                        st[1] = None  # no machine timer asked
                qs = job.queued_since
                waited = now - qs
                tm = st[0]
                # counted only where a timer can decide an offer: one GPU is on one machine whatever
                # the level a job accepts, so a 1-GPU job's timers decide nothing
                counted = n > 1
                if st[1] is not None and counted:
                    evals[0] += 1
                    falls[0] += st[1]
                if waited < tm:
                    tier, relax = Tier.NVLINK, qs + tm
                else:
                    if n <= rack_max:
                        if st[2] is None:
                            st[2], st[3] = timers.ask("rack", n)
                        tr = st[2]
                        if st[3] is not None and counted:
                            evals[1] += 1
                            falls[1] += st[3]
                    else:
                        tr = 0.0
                    if waited < tm + tr:
                        tier, relax = Tier.RACK, qs + tm + tr
                    else:
                        tier, relax = Tier.NETWORK, math.inf
            key = (n, t, tier)
            if failed is not None:
                if key in failed:
                    if relax < wake:
                        wake = relax
                    continue
            elif self.shortcuts and placer.victims is not None:
                # ``placer.place``'s known failure, read here: preempting victims of worse rank than
                # this job's failed for the key in a state still valid (no release since, so the free
                # placement that failed first still fails) with at least as many victims
                known = placer.no_preempt.get(key)
                if (known is not None and known[0] in placer.valid
                        and known[1] >= bisect.bisect_left(placer.neg_rank, -sk[0])):
                    if relax < wake:
                        wake = relax
                    continue
            gpus = placer.place(key, sk[0])
            if gpus is None:
                if relax < wake:
                    wake = relax
                if dead is not None:
                    dead.add(fits)
                if failed is not None:
                    failed.add(key)
                continue
            placer.take(gpus)
            got_level = placement_level(c, gpus)
            waited = now - job.queued_since
            if got_level == "rack" and self.rack_wait == "stage":
                # the rack timer runs after the machine timer (12 h, then "another 12 h"), so the rack
                # list learns the wait at the rack stage, not the machine stage's too
                waited = max(0.0, waited - tm)
            self._tuner.record(got_level, n, now, waited)
            timers.forget(got_level, n)
            per_size.clear()
            self.accepted[got_level] += 1
            job.policy_data["dally_started"] = now
            d.allocate[job.job_id] = Allocation.of(gpus)
            started.append(entry)
            placed += 1
        d.preempt += placer.preempted
        self._queue.requeued(placer.taken)
        timers.close()
        if self.timers == "auto":
            for i, level in enumerate(("machine", "rack")):
                if evals[i]:
                    self._tuner.count(level, evals[i], falls[i])
        self._queue.forget(started)
        if d.preempt or placed < n_queued or self._reoffer_pending:
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
        # asked of every running job at every round: a job's answer is fixed while it holds one
        # allocation, so it is remembered with that allocation
        alloc = job.allocation
        got = job.policy_data.get("dally_misplaced")
        if got is None or got[0] is not alloc:
            level = placement_level(view.cluster, alloc.gpus)
            got = (alloc, _ORDER.index(level) > _ORDER.index(self._tightest(view, job)))
            job.policy_data["dally_misplaced"] = got
        return got[1]

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
                "history_n": self.history_n, "history_s": self.history_s, "rack_wait": self.rack_wait,
                "reading": self.reading,
                "preempt": self.preempt, "reoffer": self.reoffer,
                "priority_formula": "inferred (shared/seeds/README.md)"}


@register("dally-manual")
class DallyManual(Dally):
    name = "dally-manual"
    timers = "manual"
    summary = "Dally with fixed delay timers: 12 h machine, then 12 h rack"
    options = (*Dally.options,
               PolicyOption("manual_h", float, 12.0, "each fixed delay timer in hours: the machine timer, then "
                            "the rack timer after it (the paper's empirical 12 h)", positive=True))

    def __init__(self, round_s: float = 600.0, history_s: float | None = None, reading: str = "inferred",
                 preempt: bool = True, reoffer: bool = True, history_n: int | None = HISTORY_N,
                 costs: str = "derived", plan_s: float = PLAN_PROFILE_S, rack_wait: str = "stage",
                 manual_h: float = 12.0):
        super().__init__(round_s, history_s, reading, preempt, reoffer, history_n, costs, plan_s, rack_wait)
        # a sweep of fixed timers shows what any tuner could gain in a workload (docs/dally.md)
        self.manual_s = {"machine": manual_h * HOUR, "rack": manual_h * HOUR}

    def describe(self) -> dict:
        return {**super().describe(), "manual_h": self.manual_s["machine"] / HOUR}


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


@register("dally-noreoffer")
class DallyNoReoffer(Dally):
    """Ablation (ours): auto-tuned Dally whose preemption only serves queued jobs and never offers a
    running job a tighter placement (our earlier reading of the paper)."""

    name = "dally-noreoffer"
    summary = "ablation (ours): Dally whose preemption serves queued jobs only, never re-placing a running job"
    options = tuple(dataclasses.replace(o, default=False) if o.name == "reoffer" else o for o in Dally.options)

    def __init__(self, round_s: float = 600.0, history_s: float | None = None, reading: str = "inferred",
                 preempt: bool = True, reoffer: bool = False, history_n: int | None = HISTORY_N,
                 costs: str = "derived", plan_s: float = PLAN_PROFILE_S, rack_wait: str = "stage"):
        super().__init__(round_s, history_s, reading, preempt, reoffer, history_n, costs, plan_s, rack_wait)
