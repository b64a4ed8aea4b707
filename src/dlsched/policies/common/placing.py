"""One call's placements for a priority scheduler: place a queued job on free GPUs, else preempt for it.

Dally and Tiresias walk their queue in order and, for each job, try the tightest free
placement its tier allows, then (in a preemption round) running jobs of worse rank,
worst first.  ``pick_gpus`` and ``preempt_to_fit`` are pure functions of the scratch map
(and of the victims not yet taken, which change only with it), so a (GPUs, type, tier)
that found nothing in one state of the map finds nothing for the next job asking the same:
states are named by ``MapStates`` numbers, and failures are remembered per state.  Taking
GPUs never makes a placement fit that did not (``pick_gpus`` fails only when no node, rack
or type has the room, and ``preempt_to_fit`` only when every prefix fails so), so a failure
stays known after an allocation; a release (preemption, a move) starts afresh.
"""

from __future__ import annotations

import bisect
from itertools import islice
from typing import Callable, Sequence

import numpy as np

from dlsched.cluster.freemap import FreeMap
from dlsched.cluster.placement import pick_gpus
from dlsched.cluster.topology import Cluster, Tier
from dlsched.policies.base import JobState
from dlsched.policies.common.kept_queue import MapStates
from dlsched.policies.common.preemption import preempt_to_fit


class PlaceOrPreempt:
    """A scratch copy of the engine's free map and what one call learnt about it.

    ``victims`` are the running jobs that may be preempted, worst rank first, and ``neg_rank``
    their ranks negated (ascending), so the victims of worse rank than a job's form a prefix
    found by bisection (``ranking`` gives both).  ``no_fit`` (key -> state) is the policy's own and outlives the call:
    failures on the engine's unchanged map stay known at the next call."""

    def __init__(self, cluster: Cluster, free: FreeMap, states: MapStates, no_fit: dict,
                 ranking: Callable[[], tuple[Sequence[JobState], Sequence[float]]] | None = None):
        self.cluster = cluster
        # the engine's map, read (placement only reads it) until the first change: then a copy.
        # Most calls at a long backlog place nothing, and copying every GPU's state cost them most
        self._map = free
        self._own = False
        self.states = states
        self.gen = states.of(free)
        self.valid = {self.gen}
        self.no_fit = no_fit
        self.no_preempt: dict[tuple, tuple[int, int]] = {}  # key -> (state, longest prefix that failed)
        # ``ranking`` gives ``victims`` and ``neg_rank`` (None: no preemption in this call), asked
        # when a job first needs them: a round in which every job fits free GPUs ranks nothing
        self._ranking = ranking
        self.victims: Sequence[JobState] | None = None
        self.neg_rank: Sequence[float] = ()
        self.gone: set[str] = set()  # victims taken (or running jobs moved) in this call
        self.preempted: list[str] = []  # victims taken, in order
        self.taken: list[JobState] = []  # the same jobs
        self.releases = 0  # how many times the scratch map gained free GPUs

    @property
    def scratch(self) -> FreeMap:
        """The scratch map, the placer's own copy from now on (a caller may change it)."""
        if not self._own:
            self._map = self._map.copy()
            self._own = True
        return self._map

    def place(self, key: tuple[int, int | None, Tier], rank: float) -> np.ndarray | None:
        """GPUs for a job needing ``key`` = (GPUs, type id or None, loosest tier), free or freed by
        preempting victims of worse rank than ``rank``; None if neither works.  The GPUs are not
        taken yet (``take``)."""
        n, t, tier = key
        scratch = self._map  # read only here (``preempt_to_fit`` changes a copy of it)
        gpus = None
        if scratch.free_of_type(t) >= n and self.no_fit.get(key) not in self.valid:
            gpus = pick_gpus(scratch, n, t, max_tier=tier)
            if gpus is None:
                self.no_fit[key] = self.gen
        if gpus is None and self._ranking is not None:
            if self.victims is None:
                self.victims, self.neg_rank = self._ranking()
        if gpus is None and self.victims:
            prefix = bisect.bisect_left(self.neg_rank, -rank)
            known = self.no_preempt.get(key)
            if known is None or known[0] not in self.valid or known[1] < prefix:
                gone = self.gone
                # the victims of worse rank not taken yet, read lazily: the walk below stops at
                # the first prefix that fits, and copying every running job per try cost a round most
                worse = islice(self.victims, prefix)
                if gone:
                    worse = (v for v in worse if v.spec.job_id not in gone)
                got = preempt_to_fit(self.cluster, scratch, n, t, tier, worse)
                if got is None:
                    self.no_preempt[key] = (self.gen, prefix)
                else:
                    gpus, self._map, taken = got
                    self._own = True
                    for v in taken:
                        gone.add(v.job_id)
                        self.preempted.append(v.job_id)
                    self.taken += taken
                    self.released()
        return gpus

    def take(self, gpus) -> None:
        """Hold ``gpus`` on the scratch map (failures known so far stay known)."""
        self.scratch.allocate(gpus)
        self.gen = self.states.bump()
        self.valid.add(self.gen)

    def released(self) -> None:
        """The scratch map gained free GPUs: what failed before may fit now."""
        self.gen = self.states.bump()
        self.valid = {self.gen}
        self.releases += 1
