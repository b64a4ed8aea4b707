"""State a queue-ordering policy keeps between calls: its queue in order, and names of free-map states.

Dally and Tiresias both order their queue by a key that does not change while a job waits
(Dally's offer priority, Tiresias's attained-service queue), and both remember placements
that did not fit in a given state of the engine's free map.  Keeping these between calls
makes a call's work proportional to what changed, with the same decisions.
"""

from __future__ import annotations

import bisect
import heapq
from typing import Callable, Iterable, Iterator


def _key(entry: tuple):
    return entry[0]


class KeptQueue:
    """The queued jobs as ``(key, job, fit data)`` tuples in key order, kept between calls, and
    per fit data the same tuples in the same order (``walk``).

    Only jobs that joined the queue since the last call are keyed (``entry``) and inserted.
    The policy says which through its hooks: ``submitted`` (an arrival), ``requeued`` (the
    jobs its decision preempts) and ``left`` (a queued job dropped); jobs it started are
    taken out at once (``forget``): one that comes back is keyed afresh.  A queue whose
    length then differs from the engine's (a job queued without the policy knowing, as a
    fault does live) is looked at whole: its jobs are compared with the kept ones by object
    id (the jobs are held, so an id is never reused while in the queue)."""

    def __init__(self) -> None:
        self.entries: list[tuple] = []
        self.by_fit: dict = {}  # fit data -> its entries, in key order
        self._entry: dict[int, tuple] = {}  # id(job) -> its entry
        self._new: dict[int, object] = {}  # id(job) -> a job queued since the last call
        self._told = False  # the hooks account for every change since the last look at the whole queue

    # ------------------------------------------------------------ what the policy's hooks say

    def submitted(self, job) -> None:
        self._new[id(job)] = job

    def requeued(self, jobs: Iterable) -> None:
        for j in jobs:
            self._new[id(j)] = j

    def left(self, job) -> None:
        self._new.pop(id(job), None)
        e = self._entry.get(id(job))
        if e is not None:
            self._remove(e)

    # ------------------------------------------------------------ the queue at a call

    def update(self, view, entry: Callable[[object], tuple]) -> list[tuple]:
        """The entries of the engine's queue (``view``), in key order."""
        if self._told and len(self._entry) + len(self._new) == view.queued_count():
            for jid, j in self._new.items():
                if jid not in self._entry:
                    self._insert(entry(j))
            self._new.clear()
            return self.entries
        queued = list(view.queued())
        ids = set(map(id, queued))
        for jid in set(self._entry) - ids:
            self._remove(self._entry[jid])
        for j in queued:
            if id(j) not in self._entry:
                self._insert(entry(j))
        self._new.clear()
        self._told = True
        return self.entries

    def forget(self, started: Iterable[tuple]) -> None:
        for e in started:
            self._remove(e)

    def walk(self) -> "Walk":
        return Walk(self.by_fit)

    def _insert(self, e: tuple) -> None:
        bisect.insort(self.entries, e)
        self._entry[id(e[1])] = e
        same = self.by_fit.get(e[2])
        if same is None:
            self.by_fit[e[2]] = [e]
        else:
            bisect.insort(same, e)

    def _remove(self, e: tuple) -> None:
        q = self.entries
        del q[bisect.bisect_left(q, e)]
        del self._entry[id(e[1])]
        same = self.by_fit[e[2]]
        del same[bisect.bisect_left(same, e)]
        if not same:
            del self.by_fit[e[2]]


class Walk:
    """The kept entries in key order, passing over the rest of a fit data's entries once one of
    them failed (``fail``), until ``revive``: a merge of the per-fit-data lists, so a call costs
    what it places and fails, not the queue's length.

    For a caller whose failures are monotone (a placement that failed in one state of its
    scratch map fails in every state reached by taking GPUs, and later entries of the same
    fit data ask no more than the first did): the entries passed over would all have failed,
    and asked nothing.  Whatever frees GPUs must ``revive``: each failed fit data's walk
    resumes after the entry being handled.  Keys must be unique; the lists must not change
    during the walk."""

    def __init__(self, by_fit: dict):
        self.by_fit = by_fit
        # (key, position, fit data): keys are unique, so positions and fit data are never compared
        self._heap = [(same[0][0], 0, fit) for fit, same in by_fit.items()]
        heapq.heapify(self._heap)
        self._failed: set = set()
        self._at = None  # the key of the entry being handled

    def __iter__(self) -> Iterator[tuple]:
        heap, by_fit, failed = self._heap, self.by_fit, self._failed
        pop, push = heapq.heappop, heapq.heappush
        while heap:
            key, pos, fit = pop(heap)
            same = by_fit[fit]
            self._at = key
            yield same[pos]
            if fit not in failed and pos + 1 < len(same):
                push(heap, (same[pos + 1][0], pos + 1, fit))

    def fail(self, fit) -> None:
        """The entry being handled found nothing: pass over the rest of its fit data's entries."""
        self._failed.add(fit)

    def revive(self) -> None:
        """GPUs were freed: entries after the one being handled are handled again, whatever failed."""
        for fit in self._failed:
            same = self.by_fit[fit]
            pos = bisect.bisect_right(same, self._at, key=_key)
            if pos < len(same):
                heapq.heappush(self._heap, (same[pos][0], pos, fit))
        self._failed.clear()


class MapStates:
    """Numbers naming states of a free map: the same number while the engine's map is unchanged
    since the last call (so placements known not to fit then are still known not to fit), a
    new one for each change of a scratch copy."""

    def __init__(self) -> None:
        self._gen = 0
        self._key: tuple | None = None
        self._current = 0

    def of(self, free) -> int:
        """The engine's free map as it is now."""
        key = (id(free), free.version)
        if key != self._key:
            self._key = key
            self._gen += 1
            self._current = self._gen
        return self._current

    def bump(self) -> int:
        """A new number for a scratch map that was just changed."""
        self._gen += 1
        return self._gen
