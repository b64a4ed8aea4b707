"""Tiresias (Gu et al., "Tiresias: A GPU Cluster Manager for Distributed Deep Learning",
NSDI 2019), as Dally's paper uses it as its main baseline.

- Discretised two-dimensional LAS (2D-LAS): a job's attained service is GPUs x
  time it has run; K queues split by thresholds on it (Tiresias's simulator
  defaults to two queues with one threshold of 3,600 GPU-seconds for
  ``dlas-gpu``; ``queue_thresholds`` sets any other list).  Queues are served
  lowest first; inside a queue jobs go in arrival order (FIFO), as in Tiresias.
- Preemption: at each round (``round_s``) a queued job of a lower queue may
  suspend running jobs of higher queues (the highest queue first, the latest
  arrival first inside it) when that lets it fit.  Suspended jobs keep their
  progress and pay the one cost rule (``common.replan_costs``) when they run
  again, as every policy does.
- Skew-based consolidation: a job whose model is skewed (Tiresias section 4.2:
  its largest tensor is a large share of the model, so its all-reduce is
  dominated by one tensor and suffers most off one machine) must be placed on
  as few machines as possible (one machine if it fits one, else one rack); the
  others take the tightest placement that is free (they never wait for one).
  Tiresias classifies a model by profiling it, so the class is an input, not
  something the scheduler derives: where the run is priced with a table that
  labels skew (Dally's Table I, ``--tier-profile dally-table1``, which lists
  MobileNet-V3 as high skew), that label is used, as Dally's runs used it;
  otherwise the skew is computed from the model zoo's layer sizes and cut at
  ``skew_threshold`` (``skew_source=computed`` forces that everywhere).

Simplifications (docs/dally.md): Tiresias's starvation guard (promote a job
that waited longer than a multiple of its last run) is left out, as in Dally's
description of its baseline; Tiresias does not publish a numeric skew cut-off,
0.5 is ours for computed skews (it separates VGG and AlexNet, whose big fully
connected layers Tiresias names as the skewed models, from the convolutional
and BERT models; MobileNet-V3's 0.23 falls below it, which is why a labelled
table takes precedence).
"""

from __future__ import annotations

import bisect
import math

from dlsched.cluster.topology import Tier
from dlsched.errors import InputError
from dlsched.policies.base import Allocation, ClusterView, Decision, JobPolicy, JobState, JobStatus
from dlsched.policies.options import PolicyOption
from dlsched.policies.common.kept_queue import KeptQueue, MapStates
from dlsched.policies.common.placing import PlaceOrPreempt
from dlsched.policies.common.preemption import largest_fits
from dlsched.policies.common.replan_costs import COST_OPTIONS, PLAN_PROFILE_S, ChargesReplanning
from dlsched.policies.registry import register
from dlsched.perf.papers.reference import DALLY_TABLE1_SKEW
from dlsched.workload.models import get_model

# skew classes published beside a tier table (by the table's name): the runs priced with the table used them
SKEW_LABELS: dict[str, dict[str, str]] = {"dally-table1": DALLY_TABLE1_SKEW}
SKEW_SOURCES = ("pricing", "computed")


def pricing_skew_labels(perf) -> dict[str, str] | None:
    """The skew labels of the tier table ``perf`` (or a model it wraps) prices with, None if it has none."""
    from dlsched.perf.comm.tier_profile import TierProfile

    seen: set[int] = set()
    while perf is not None and id(perf) not in seen:
        seen.add(id(perf))
        attrs = vars(perf) if hasattr(perf, "__dict__") else {}  # vars: no delegating __getattr__
        prof = attrs.get("profile")
        if isinstance(prof, TierProfile) and prof.name in SKEW_LABELS:
            return {get_model(m).name: lab for m, lab in SKEW_LABELS[prof.name].items()}
        perf = attrs.get("base") or attrs.get("fallback")
    return None


def parse_thresholds(text: str) -> tuple[float, ...]:
    """"3600,7200" -> (3600.0, 7200.0): increasing positive GPU-second thresholds."""
    try:
        vals = tuple(float(x) for x in str(text).split(",") if x.strip())
    except ValueError:
        raise InputError(f"queue_thresholds: not a comma-separated list of numbers: {text!r}",
                         field="--option") from None
    if any(not math.isfinite(v) or v <= 0 for v in vals) or list(vals) != sorted(set(vals)):
        raise InputError(f"queue_thresholds: need increasing positive numbers, got {text!r}", field="--option")
    return vals


def _rows(jobs, now: float, least: float, thresholds) -> list[tuple]:
    """(-queue, -submit time, id, job) of the jobs that have held their GPUs for a round
    (``queue_of`` written out for running jobs: a round asks it of every one)."""
    rows = []
    for j in jobs:
        if now - j.policy_data.get("tiresias_started", -math.inf) >= least:
            since = now - j.updated_at
            spec = j.spec
            attained = j.gpu_seconds + spec.num_gpus * (since if since > 0.0 else 0.0)
            rows.append((-bisect.bisect_right(thresholds, attained), -spec.submit_time, spec.job_id, j))
    return rows


class HeldJobs:
    """The running jobs Tiresias may preempt, highest queue first (the latest arrival first inside
    it), kept between rounds.

    A running job's attained service only grows, so once in the highest queue it stays there
    while it runs, and its place in the order, (-queue, -submit time, id), is fixed.  Where the
    engine prices jobs alone (``ClusterView.prices_alone``: nothing settles a running exclusive
    job before it stops) those jobs are kept sorted, and a round works out only the others (those
    that started since, or have not reached the highest queue).  The policy says which jobs
    start and leave; a running count that disagrees with the engine's (or no ``prices_alone``)
    ranks every running job afresh."""

    def __init__(self) -> None:
        self.top: list[tuple] = []  # rows of held jobs in the highest queue, sorted
        self.top_jobs: list = []  # their jobs, in the same order
        self.row: dict[int, tuple] = {}  # id(job) -> its row in ``top``
        self.young: dict[int, object] = {}  # id(job) -> a running job not in ``top``
        self.synced = False

    def started(self, jobs) -> None:
        for j in jobs:
            self.young[id(j)] = j

    def left(self, jobs) -> None:
        for j in jobs:
            self.young.pop(id(j), None)
            row = self.row.pop(id(j), None)
            if row is not None:
                i = bisect.bisect_left(self.top, row)
                del self.top[i], self.top_jobs[i]

    def ranked(self, view: ClusterView, now: float, least: float, thresholds) -> tuple[list, list]:
        """(victims, their queues negated), both in preemption order."""
        top_q = -len(thresholds)
        if not (view.prices_alone and self.synced
                and len(self.row) + len(self.young) == len(view.jobs) - view.queued_count()):
            running = view.running()
            rows = sorted(_rows(running, now, least, thresholds))
            self.top, self.top_jobs, self.row = [], [], {}
            self.young = {id(j): j for j in running}
            self.synced = view.prices_alone
            if not self.synced:
                return [r[3] for r in rows], [r[0] for r in rows]
        rows = _rows(self.young.values(), now, least, thresholds)
        rest = []
        for r in rows:
            if r[0] == top_q:  # in the highest queue: it stays there while it runs
                i = bisect.bisect_left(self.top, r)
                self.top.insert(i, r)
                self.top_jobs.insert(i, r[3])
                self.row[id(r[3])] = r
                del self.young[id(r[3])]
            else:
                rest.append(r)
        rest.sort()
        return self.top_jobs + [r[3] for r in rest], [top_q] * len(self.top) + [r[0] for r in rest]


@register("tiresias")
class Tiresias(ChargesReplanning, JobPolicy):
    name = "tiresias"
    summary = "discretised 2D-LAS queues with preemption and skew-based consolidation"
    paper = "Gu et al., Tiresias: A GPU Cluster Manager for Distributed Deep Learning, NSDI 2019"
    options = (
        PolicyOption("queue_thresholds", str, "3600", "2D-LAS queue thresholds in GPU-seconds, comma-separated"),
        PolicyOption("skew_threshold", float, 0.5, "consolidate models whose largest tensor is at least this "
                     "share of the model", minimum=0.0),
        PolicyOption("round_s", float, 600.0, "preemption round in seconds (a job runs at least one round)",
                     positive=True),
        PolicyOption("skew_source", str, "pricing", "pricing: the skew class of the tier table the run is "
                     "priced with (Dally's Table I) where it lists the model, else computed; computed: "
                     "largest tensor share >= skew_threshold"),
        *COST_OPTIONS,
    )

    def __init__(self, queue_thresholds: str = "3600", skew_threshold: float = 0.5, round_s: float = 600.0,
                 skew_source: str = "pricing", costs: str = "derived", plan_s: float = PLAN_PROFILE_S):
        self.set_costs(costs, plan_s)  # what a start or resume costs: the one rule, as for every policy
        self.thresholds = parse_thresholds(queue_thresholds)
        self.skew_threshold = float(skew_threshold)
        if skew_source not in SKEW_SOURCES:
            raise InputError(f"skew_source: must be one of {', '.join(SKEW_SOURCES)}, got {skew_source!r}",
                             field="--option")
        self.skew_source = skew_source
        if round_s <= 0:
            raise ValueError("round_s must be positive")
        self.round_s = float(round_s)
        self.reset()

    def reset(self) -> None:
        self._origin: float | None = None
        self._last_round = -1
        self._labels: dict[str, str] | None = None
        self._labels_of: int | None = None  # id of the perf model the labels were read from
        self._states = MapStates()  # names of free-map states, for ``_no_fit``
        self._no_fit: dict[tuple, int] = {}  # (n, type, tier) -> the state in which pick_gpus found nothing
        # the queue in 2D-LAS order, kept between calls: a queued job's queue (its attained
        # service) does not change while it waits
        self._queue = KeptQueue()
        self._held = HeldJobs()  # the running jobs in preemption order, kept between rounds

    def on_submit(self, job: JobState, now: float) -> None:
        self._queue.submitted(job)

    def on_finish(self, job: JobState, now: float) -> None:
        self._queue.left(job)
        self._held.left((job,))

    def attained(self, job: JobState, now: float) -> float:
        """GPU-seconds of service so far (2D-LAS's measure)."""
        s = job.gpu_seconds
        if job.status == JobStatus.RUNNING:
            s += job.spec.num_gpus * max(0.0, now - job.updated_at)
        return s

    def queue_of(self, job: JobState, now: float) -> int:
        return bisect.bisect_right(self.thresholds, self.attained(job, now))

    def skewed(self, job: JobState, perf=None) -> bool:
        model = get_model(job.spec.model, job.spec.params)
        if self.skew_source == "pricing" and perf is not None:
            if self._labels_of != id(perf):
                self._labels, self._labels_of = pricing_skew_labels(perf), id(perf)
            label = (self._labels or {}).get(model.name)
            if label is not None:
                return label == "high"
        return model.largest_tensor_fraction >= self.skew_threshold

    def _max_tier(self, view: ClusterView, job: JobState, type_id: int | None) -> Tier:
        if not self.skewed(job, view.perf):
            return Tier.NETWORK
        machine_max, rack_max = largest_fits(view.cluster, type_id)
        n = job.spec.num_gpus
        return Tier.NVLINK if n <= machine_max else Tier.RACK if n <= rack_max else Tier.NETWORK

    def _fit(self, view: ClusterView, job: JobState) -> tuple[int, int | None, Tier]:
        """(GPUs, type id or None, loosest tier it takes), per job and perf model (a model's skew is fixed)."""
        got = job.policy_data.get("tiresias_fit")
        if got is None or got[0] != id(view.perf):
            t = view.cluster.type_id(job.spec.gpu_type) if job.spec.gpu_type else None
            got = (id(view.perf), (job.spec.num_gpus, t, self._max_tier(view, job, t)))
            job.policy_data["tiresias_fit"] = got
        return got[1]

    def schedule(self, view: ClusterView, now: float) -> Decision:
        c = view.cluster
        if self._origin is None:
            self._origin = now
        k = int((now - self._origin) / self.round_s + 1e-9)
        is_round = k > self._last_round
        if is_round:
            self._last_round = k
        d = Decision()
        # a queued job's queue (its attained service) does not change while it waits
        keyed = self._queue.update(view, lambda j: (
            (self.queue_of(j, now), j.spec.submit_time, j.job_id), j, self._fit(view, j)))
        n_queued = len(keyed)
        # running jobs that have held their GPUs for a round, highest queue first (the latest
        # arrival first inside it), as (-queue, -submit time, id, job): ids are unique
        ranking = None
        if is_round:
            def ranking():
                # victims in a queue above q form a prefix: its length is found by bisection on
                # the negated queues
                return self._held.ranked(view, now, self.round_s - 1e-9, self.thresholds)
        # placements on a scratch map, failures remembered per map state (``common.placing``)
        placer = PlaceOrPreempt(c, view.free, self._states, self._no_fit, ranking)
        # once a (GPUs, type, tier) finds no placement, every later job asking the same fails too
        # (and asks nothing) until GPUs are freed: the walk passes over them (``KeptQueue.walk``)
        walk = self._queue.walk()
        releases = 0
        started = []
        for entry in walk:
            (q, _, _), job, key = entry
            gpus = placer.place(key, q)
            if placer.releases != releases:
                releases = placer.releases
                walk.revive()
            if gpus is None:
                walk.fail(key)
                continue
            started.append(entry)
            placer.take(gpus)
            job.policy_data["tiresias_started"] = now
            d.allocate[job.job_id] = Allocation.of(gpus)
        d.preempt += placer.preempted
        self._queue.requeued(placer.taken)
        self._held.left(placer.taken)
        self._held.started(e[1] for e in started)
        self._queue.forget(started)
        if len(d.allocate) < n_queued or d.preempt:
            # attained service moves jobs between queues as they run: look again next round
            d.wakeup = self._origin + (k + 1) * self.round_s
        return d

    def describe(self) -> dict:
        return {**super().describe(), "queue_thresholds_gpu_s": list(self.thresholds),
                "skew_threshold": self.skew_threshold, "skew_source": self.skew_source, "round_s": self.round_s}
