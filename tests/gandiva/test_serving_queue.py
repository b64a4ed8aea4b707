"""ServingQueue.offer makes the same attempts succeed, in the same order, as offering every job."""

from __future__ import annotations

import random

from dlsched.policies.gandiva.serving import ServingQueue


class _Pool:
    """Attempts whose answer depends on the job's class and on what earlier successes took."""

    def __init__(self, free: dict) -> None:
        self.free = dict(free)
        self.placed: list[str] = []

    def attempt(self, job) -> bool:
        jid, (t, n) = job
        if self.free[t] < n:
            return False
        self.free[t] -= n
        self.placed.append(jid)
        return True


def _queue(rng: random.Random, size: int):
    q = ServingQueue()
    jobs = []
    for i in range(size):
        cls = (rng.choice(["a", "b"]), rng.choice([1, 2, 4, 8]))
        key = (rng.randrange(50), rng.random(), f"j{i}")
        jobs.append((key, (f"j{i}", cls)))
        q.add(f"j{i}", (f"j{i}", cls), key, cls)
    return q, sorted(jobs)


def test_offer_places_what_a_full_walk_places():
    rng = random.Random(7)
    for trial in range(200):
        q, jobs = _queue(rng, rng.randrange(1, 60))
        for jid in rng.sample([j[1][0] for j in jobs], k=len(jobs) // 4):  # some leave again
            q.remove(jid)
        jobs = [j for j in jobs if j[1][0] in q]
        free = {"a": rng.randrange(12), "b": rng.randrange(12)}
        full, fast = _Pool(free), _Pool(free)
        for _, job in jobs:
            full.attempt(job)
        assert q.offer(fast.attempt) == len(full.placed)
        assert fast.placed == full.placed
        assert q.order == [k for k, _ in jobs]


def test_offer_skips_a_failed_class_until_something_succeeds():
    q = ServingQueue()
    for i, n in enumerate([4, 4, 4, 1, 4]):
        q.add(f"j{i}", (f"j{i}", ("a", n)), (i, 0, f"j{i}"), ("a", n))
    seen = []
    pool = _Pool({"a": 3})

    def attempt(job):
        seen.append(job[0])
        return pool.attempt(job)

    assert q.offer(attempt) == 1
    assert seen == ["j0", "j3", "j4"]  # j1, j2 would fail as j0 did: nothing was taken in between
