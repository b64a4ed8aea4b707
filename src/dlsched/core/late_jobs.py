"""Jobs sent back to the queue out of submission order, merged into it lazily.

The core keeps its queue as an ordered dict in submission order (submit time, then job id).
An arrival joins at the end, in order; a preempted job goes back to the end too, out of
order.  Re-sorting the whole queue at the next look costs a pass over the backlog for every
preemption round, and policies that time-slice or run jobs opportunistically preempt at
every round while the backlog grows with the trace.  Instead the sent-back jobs are kept
here in key order and merged into the queue's order as it is read (``Merged``), and folded
into the dict by one sort only once they are a fair share of the queue, so a sort is paid
for by that many preemptions.  The order read is exactly the sorted order: keys are unique.
"""

from __future__ import annotations

from bisect import bisect_left, insort


def _key(job) -> tuple:
    return job.spec.submit_time, job.spec.job_id


class LateJobs:
    """Queued jobs that joined the queue out of order, by key; those that leave it are dropped."""

    __slots__ = ("jobs", "keys")

    def __init__(self) -> None:
        self.jobs: dict = {}  # job id -> job
        self.keys: list[tuple] = []  # their keys, sorted

    def __len__(self) -> int:
        return len(self.jobs)

    def add(self, job) -> None:
        jid = job.spec.job_id
        if jid not in self.jobs:
            self.jobs[jid] = job
            insort(self.keys, _key(job))

    def discard(self, jid) -> None:
        job = self.jobs.pop(jid, None)
        if job is not None:
            keys = self.keys
            del keys[bisect_left(keys, _key(job))]

    def clear(self) -> None:
        self.jobs.clear()
        self.keys.clear()

    def due(self, queued: int) -> bool:
        """Fold them in by a sort: they are a fair share of the queue (the sort's cost, a pass
        over the queue, is then shared by that many preemptions)."""
        return len(self.jobs) > 32 + queued // 8


class Merged:
    """The queue in submission order: the dict's jobs in its order (itself sorted but for the
    late jobs, which it skips) merged with the late jobs by key.  Iterate it before the queue
    changes; ``len`` is the queue's."""

    __slots__ = ("queue", "late")

    def __init__(self, queue: dict, late: LateJobs):
        self.queue = queue
        self.late = late

    def __len__(self) -> int:
        return len(self.queue)

    def __bool__(self) -> bool:
        return bool(self.queue)

    def __iter__(self):
        late, keys = self.late.jobs, self.late.keys
        i, n = 0, len(keys)
        for jid, job in self.queue.items():
            if jid in late:
                continue
            key = (job.spec.submit_time, jid)
            while i < n and keys[i] < key:
                yield late[keys[i][1]]
                i += 1
            yield job
        while i < n:
            yield late[keys[i][1]]
            i += 1
