"""ElasticFlow's round without a walk over every queued and admitted job.

A job without a deadline (or any job in ElasticFlow-LS, which ignores deadlines) has a
minimum satisfactory share that never changes: the smallest count its data-parallel plan
fits on.  While every active job is such a "static" job and the admitted jobs' shares fit
their types, a round of the full algorithm (``ElasticFlowLS.schedule``) reduces to:

* **admitted jobs keep their shares** (they fitted when admitted and nobody's share grows),
  so each type's free count is its GPUs minus the sum of shares, kept as a running sum;
* **admission** walks the queue in submission order and admits a job when its share fits
  what is left of its type.  Free GPUs only fall during the walk, so a job skipped once is
  skipped for the rest of it, and the next job admitted is simply the earliest waiting
  job, over the buckets of (type, share) with share <= free: ``Backlog.admit`` takes those
  heads instead of looking at every queued job;
* **spare GPUs** go by the same marginal-return order: each admitted job's first doubling
  (from its share) is a fixed key, kept sorted per type (``Growth``); the round merges it
  with the few doublings pushed during the round, per type (a type's decisions depend only
  on its own free count and jobs), and stops when the type has no GPU left;
* **targets** are handed to ``apply_targets`` only for jobs that may differ from their
  present shape: new, grown or shrunk targets, jobs whose allocation the engine changed
  since the last round (``AllocationWatch``), and jobs that differed last round.  The others
  were at their target and nothing moved them, and ``apply_targets`` skips such jobs.

Same decisions as the full round (jobs.csv, series.csv and summary.json byte-identical):
the full round runs whenever the conditions fail (a deadline job active, shares past a
type's GPUs, the engine's jobs not the ones this record knows, a live service adopting
jobs), and the next incremental round after it checks every admitted job.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort
from operator import attrgetter

from dlsched.policies.base import JobState

_ALLOC = attrgetter("allocation")

Key = tuple[float, str]  # queue order: (submission time, job id)


class Backlog:
    """Static-share jobs waiting for admission, per (type, share), each list in queue order."""

    def __init__(self):
        self.by_type: dict[int, dict[int, list[Key]]] = {}
        self.where: dict[str, tuple[int, int, Key]] = {}  # job -> (type, share, key)

    def __len__(self) -> int:
        return len(self.where)

    def add(self, job: JobState, t: int, s: int) -> None:
        key = (job.spec.submit_time, job.spec.job_id)
        lst = self.by_type.setdefault(t, {}).setdefault(s, [])
        if not lst or lst[-1] < key:
            lst.append(key)  # arrivals come in queue order
        else:
            insort(lst, key)
        self.where[job.spec.job_id] = (t, s, key)

    def remove(self, jid: str) -> bool:
        hit = self.where.pop(jid, None)
        if hit is None:
            return False
        t, s, key = hit
        lst = self.by_type[t][s]
        del lst[bisect_left(lst, key)]
        return True

    def admit(self, t: int, free: int) -> tuple[str, int] | None:
        """The earliest waiting job of type ``t`` whose share fits ``free``: (job id, share), taken out."""
        buckets = self.by_type.get(t)
        if not buckets:
            return None
        best: Key | None = None
        best_s = 0
        for s, lst in buckets.items():
            if s <= free and lst and (best is None or lst[0] < best):
                best, best_s = lst[0], s
        if best is None:
            return None
        self.remove(best[1])
        return best[1], best_s


class Growth:
    """Each admitted static job's first doubling past its share, as the round's heap key, sorted per type."""

    def __init__(self):
        self.by_type: dict[int, list[tuple]] = {}
        self.key_of: dict[str, tuple] = {}

    def add(self, key: tuple) -> None:
        insort(self.by_type.setdefault(key[3], []), key)
        self.key_of[key[2]] = key

    def remove(self, jid: str) -> None:
        key = self.key_of.pop(jid, None)
        if key is not None:
            lst = self.by_type[key[3]]
            del lst[bisect_left(lst, key)]

    def grow(self, t: int, free: int, share: dict[str, tuple[int, int]], push_next) -> dict[str, int]:
        """Spare GPUs of type ``t``: the full round's heap loop restricted to the type.

        ``share``: job -> (type, share).  Returns the jobs grown past their share and their new
        counts.  ``push_next(heap, jid, n)`` pushes a job's next doubling from ``n``, as the full
        round does."""
        base = self.by_type.get(t, ())
        alloc: dict[str, int] = {}
        heap: list = []
        i, nb = 0, len(base)
        while free > 0 and (i < nb or heap):
            if heap and (i >= nb or heap[0] < base[i]):
                _, _, jid, _, n_new = heapq.heappop(heap)
            else:
                _, _, jid, _, n_new = base[i]
                i += 1
            cur = alloc.get(jid) or share[jid][1]
            if n_new <= cur:
                continue
            extra = n_new - cur
            if extra > free:
                continue
            free -= extra
            alloc[jid] = n_new
            push_next(heap, jid, n_new)
        return alloc


class AllocationWatch:
    """Which running jobs got, changed or lost an allocation since the last look.

    Compares allocation objects' identities in C-level set operations; the last look's
    objects stay referenced, so no id is reused by a new allocation in between."""

    def __init__(self):
        self._objs: list = []
        self._ids: list[int] = []
        self._idset: set[int] = set()
        self._jid_of: dict[int, str] = {}

    def changed(self, running: list[JobState]) -> set[str]:
        objs = list(map(_ALLOC, running))
        ids = list(map(id, objs))
        if ids == self._ids:
            return set()
        idset = set(ids)
        jid_of = self._jid_of
        out = {jid_of.pop(i) for i in self._idset - idset}
        for i in idset - self._idset:  # a few per round: found by a C-level scan each
            jid = jid_of[i] = running[ids.index(i)].spec.job_id
            out.add(jid)
        self._objs, self._ids, self._idset = objs, ids, idset
        return out
