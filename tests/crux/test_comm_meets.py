"""``Meetings`` (who meets whom, kept between calls) against ``shares_links`` from scratch."""

import random

from dlsched.comm.base import CommFlow, CommJob, CommView, shares_links
from dlsched.comm.meets import Meetings
from dlsched.comm.scheduled import build_view
from dlsched.network.contention import FlowContention
from dlsched.network.topologies import double_sided


def test_meetings_kept_between_calls_equal_shares_links_from_scratch():
    # jobs come and go, are re-placed (a new traffic, so a new CommJob) and change picks; every answer
    # equals a from-scratch ``shares_links`` of the same view and picks
    g = double_sided(hosts=12, tors=4, aggs=4, cores=2, nics_per_host=2, gpus_per_host=2)
    for seed in range(3):
        rng = random.Random(seed)
        fc = FlowContention(g, seed=seed)
        meets = Meetings()
        placed, arrival, cache = {}, {}, {}
        met = 0
        for step in range(40):
            j = f"j{rng.randrange(14)}"
            if j in placed and rng.random() < 0.4:
                fc.remove(j)
                del placed[j]
                cache.pop(j, None)
            else:
                hosts = rng.sample(range(len(g.hosts)), rng.choice([1, 2, 3, 5]))
                fc.add_placed(j, [(h, rng.choice((0, 1))) for h in hosts], rng.uniform(1e8, 1e9), 0.3, 0.1)
                placed[j] = (len(hosts), 0.3, 0.1)
                arrival.setdefault(j, step)
            view = build_view(fc, placed, arrival, cache=cache)
            picks = {}
            for k in view.jobs:  # some jobs on other candidates, as a path-choosing policy would put them
                if rng.random() < 0.5:
                    job = view.jobs[k]
                    picks[k] = {i: rng.randrange(len(f.candidates)) for i, f in enumerate(job.flows)
                                if rng.random() < 0.7}
            got = meets(view, picks if step % 3 else None)
            assert got == shares_links(view, picks if step % 3 else None)
            met += any(got.values())
        assert met > 10  # the answers were not all empty


def test_meetings_on_hand_made_views():
    # candidate lists (no PathSet), a job replaced by another CommJob with other paths, and one gone
    net = frozenset(range(10))

    def job(name, paths, chosen, arrival):
        return CommJob(name, 8, 1.0, 0.5, 0.2, 0.8, (CommFlow(1e8, paths, chosen),), arrival)

    a, b, c = job("a", [(0, 1), (2, 3)], 0, 0), job("b", [(1, 4), (5, 6)], 0, 1), job("c", [(7,), (3,)], 0, 2)
    meets = Meetings()
    view = CommView({"a": a, "b": b, "c": c}, (1.0,) * 10, net)
    assert meets(view) == shares_links(view) == {"a": {"b"}, "b": {"a"}, "c": set()}
    view = CommView({"a": a, "b": b, "c": c}, (1.0,) * 10, net)
    picks = {"c": {0: 1}}
    assert meets(view, picks) == shares_links(view, picks) == {"a": {"b"}, "b": {"a"}, "c": set()}
    picks = {"a": {0: 1}, "c": {0: 1}}
    assert meets(view, picks) == shares_links(view, picks) == {"a": {"c"}, "b": set(), "c": {"a"}}
    view = CommView({"a": a, "c": job("c", [(7,), (1,)], 1, 2)}, (1.0,) * 10, net)
    assert meets(view) == shares_links(view) == {"a": {"c"}, "c": {"a"}}
