"""State a queue-ordering policy keeps between calls: its queue in order, and names of free-map states.

Dally and Tiresias both order their queue by a key that does not change while a job waits
(Dally's offer priority, Tiresias's attained-service queue), and both remember placements
that did not fit in a given state of the engine's free map.  Keeping these between calls
makes a call's work proportional to what changed, with the same decisions.
"""

from __future__ import annotations

import bisect
from typing import Callable, Iterable


class KeptQueue:
    """The queued jobs as ``(key, job, fit data)`` tuples in key order, kept between calls.

    Only jobs that joined the queue since the last call are keyed (``entry``) and inserted,
    and those that left are removed (found by comparing the sets of job objects' ids, a
    C-level operation; the jobs are held, so an id is never reused while in the queue).
    Jobs the policy started are taken out at once (``forget``): one that comes back is
    keyed afresh."""

    def __init__(self) -> None:
        self.entries: list[tuple] = []
        self._ids: set[int] = set()

    def update(self, queued: Iterable, entry: Callable[[object], tuple]) -> list[tuple]:
        if iter(queued) is queued:  # a one-shot iterator: read twice below
            queued = list(queued)
        ids = set(map(id, queued))
        if ids != self._ids:
            left = self._ids - ids
            if left:
                self.entries = [e for e in self.entries if id(e[1]) not in left]
            new = ids - self._ids
            if new:
                q = self.entries
                for j in queued:
                    if id(j) in new:
                        bisect.insort(q, entry(j))
            self._ids = ids
        return self.entries

    def forget(self, started: Iterable[tuple]) -> None:
        q = self.entries
        for e in started:
            del q[bisect.bisect_left(q, e)]
            self._ids.discard(id(e[1]))


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
