"""Sincronia's compiled BSSI order against the Python loop it replaces."""

import random

import pytest

from dlsched.comm import sincronia
from dlsched.comm.base import CommFlow, CommJob, CommView


def _view(rng: random.Random, jobs: int, links: int, ties: bool) -> CommView:
    caps = tuple(1.0 if ties else rng.choice((1.0, 2.0, 4.0)) for _ in range(links))
    out = {}
    for k in range(jobs):
        flows = []
        for _ in range(rng.choice((0, 1, 2, 3))):  # some jobs send nothing over the network
            path = tuple(rng.sample(range(links), rng.choice((1, 2, 3))))
            nbytes = 1.0 if ties else rng.choice((1.0, 2.0, rng.uniform(0.5, 3.0)))
            flows.append(CommFlow(nbytes, [path], 0))
        name = f"j{rng.randrange(10 ** 6)}"
        out[name] = CommJob(name, 8, 1.0, 0.5, 0.2, 0.8, tuple(flows), rng.randrange(5) if ties else k)
    return CommView(out, caps, frozenset(range(links)))


@pytest.mark.parametrize("bottlenecks", ["ports", "links"])
def test_compiled_bssi_order_equals_the_python_loop(monkeypatch, bottlenecks):
    rng = random.Random(7)
    for case in range(60):
        view = _view(rng, rng.choice((1, 5, 30, 80)), rng.choice((3, 12, 40)), ties=case % 2 == 0)
        weights = None if case % 3 else {j: rng.choice((0.5, 1.0, 2.0)) for j in view.jobs}
        fast = sincronia.bssi_order(view, weights, bottlenecks)
        monkeypatch.setattr(sincronia, "COMPILED", False)
        slow = sincronia.bssi_order(view, weights, bottlenecks)
        monkeypatch.setattr(sincronia, "COMPILED", True)
        assert fast == slow
        assert sorted(fast) == sorted(view.jobs)
