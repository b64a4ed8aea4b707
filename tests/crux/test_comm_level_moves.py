"""``FlowContention.set_priority`` solves only the job's own group, and nothing where the group's order
of levels is unchanged: the same times and the same reported jobs as solving every neighbour's group."""

import random

from dlsched.network.contention import FlowContention
from dlsched.network.topologies import clos


class _EveryNeighbour(FlowContention):
    """The rule before: every group around the job's neighbours solved again at every level change."""

    def set_priority(self, job_id, level):
        self._levels[job_id] = int(level)
        job = self._jobs.get(job_id)
        if job is None or job.level == level:
            return []
        before = self._snapshot_neighbours(job_id)
        job.level = int(level)
        group = self._neighbours(job_id) | {job_id}
        self._solve_around(group)
        return sorted(j for j in group if self._time.get(j) != before.get(j))


def test_level_moves_give_the_times_and_reports_of_solving_every_neighbours_group():
    g = clos(8, 2, 1, nics_per_host=1, nic_gbps=100.0)  # one uplink per ToR: jobs across ToRs contend
    moved = skipped = 0
    for seed in range(4):
        rng = random.Random(seed)
        new, ref = FlowContention(g, seed=seed), _EveryNeighbour(g, seed=seed)
        jobs = []
        for j in range(12):
            hosts = rng.sample(range(len(g.hosts)), rng.choice([2, 3]))
            args = (f"j{j}", [(h, 0) for h in hosts], rng.uniform(2e8, 2e9), rng.uniform(0.2, 1.0), 0.05)
            assert new.add_placed(*args) == ref.add_placed(*args)
            jobs.append(args[0])
        for step in range(150):
            j = rng.choice(jobs)
            # small moves (often keeping the order of a group's levels) and large ones
            level = rng.choice([new._levels.get(j, 0) + rng.choice((-1, 1)), rng.randrange(6), 2 + 3 * step])
            got = new.set_priority(j, level)
            assert got == ref.set_priority(j, level)
            assert new._time == ref._time
            moved += bool(got)
            skipped += not got
    assert moved > 20 and skipped > 20  # both kinds of move happened
