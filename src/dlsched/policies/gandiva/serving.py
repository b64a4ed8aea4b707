"""A queue in serving order that offers its jobs class by class, skipping what cannot fit.

A round offers every queued job, in serving order, to a placement attempt whose
answer depends only on the job's class (its GPU type and GPU count) and on what
earlier attempts in the round took.  So once a job of a class fails, every later
job of that class fails too until some attempt succeeds (only a success changes
what the attempts read).  Walking the whole queue costs a pass over a backlog
that grows with the trace on every round; walking the classes costs, per round,
a few attempts per class and per success.  The jobs offered, the order they are
offered in and every answer are those of the full walk: the skipped offers are
exactly the ones that would have failed.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from heapq import heapify, heappop, heappush
from typing import Callable, Hashable


class ServingQueue:
    """Keys ``(served, submitted, job id, ...)``: sorted, unique (they end in the job id)."""

    def __init__(self) -> None:
        self.order: list[tuple] = []
        self.by_id: dict = {}  # job id -> job
        self._key: dict = {}  # job id -> (its key, its class)
        self._classes: dict[Hashable, list[tuple]] = {}  # class -> its keys, sorted

    def __len__(self) -> int:
        return len(self.by_id)

    def __contains__(self, jid) -> bool:
        return jid in self.by_id

    def add(self, jid, job, key: tuple, cls: Hashable) -> None:
        if jid in self.by_id:
            return
        self.by_id[jid] = job
        self._key[jid] = (key, cls)
        insort(self.order, key)
        insort(self._classes.setdefault(cls, []), key)

    def remove(self, jid) -> None:
        if self.by_id.pop(jid, None) is None:
            return
        key, cls = self._key.pop(jid)
        del self.order[bisect_left(self.order, key)]
        keys = self._classes[cls]
        del keys[bisect_left(keys, key)]
        if not keys:
            del self._classes[cls]

    def classes(self):
        """The classes of the queued jobs."""
        return self._classes.keys()

    def offer(self, attempt: Callable[[object], bool]) -> int:
        """Offer the jobs to ``attempt(job) -> placed?`` in serving order, leaving out those whose
        class failed since the last success (they would fail: see the module docstring).  The queue
        must not change meanwhile.  Returns how many were placed."""
        by_id = self.by_id
        heads = [(keys[0], cls) for cls, keys in self._classes.items()]
        heapify(heads)
        failed: list = []  # classes that failed since the last success
        placed = 0
        while heads:
            key, cls = heappop(heads)
            if attempt(by_id[key[2]]):
                placed += 1
                # what the attempts read has changed: the failed classes are offered again from here
                failed.append(cls)
                for c in failed:
                    keys = self._classes[c]
                    i = bisect_right(keys, key)
                    if i < len(keys):
                        heappush(heads, (keys[i], c))
                failed = []
            else:
                failed.append(cls)
        return placed
