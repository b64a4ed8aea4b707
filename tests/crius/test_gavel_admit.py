"""``gavel-admit``'s exact admission search: the class-bounded search answers as the exhaustive
one (ties included), reaches the MILP's proven optimum, and its kept classes follow changes."""

from __future__ import annotations

import random

import pytest

from dlsched.policies.gavel.policy import STAY_BONUS, solve_one_type_each
from dlsched.policies.gavel.admit import AdmissionBook, exhaustive_admission, job_moves, quantize


def random_case(rng: random.Random, n_jobs: int, types: int = 3):
    """Admitted jobs on a small cluster, with repeated job classes so that ties are common."""
    kinds = [({t: rng.choice([0.25, 0.5, 1.0]) for t in range(types) if rng.random() < 0.8} or {0: 1.0},
              rng.choice([1, 1, 2, 4])) for _ in range(4)]
    cap = [rng.choice([4, 8, 12]) for _ in range(types)]
    load = [0] * types
    jobs = []
    for i in range(n_jobs):
        w, n = rng.choice(kinds)
        fits = [t for t in w if load[t] + n <= cap[t]]
        if not fits:
            continue
        t = rng.choice(fits)
        load[t] += n
        jobs.append((f"j{i:02d}", (float(i), f"j{i:02d}"), w, t, n))
    w_new, n_new = rng.choice(kinds)
    return cap, jobs, w_new, n_new


def book_of(cap, jobs) -> AdmissionBook:
    book = AdmissionBook(cap, 3, STAY_BONUS)
    for jid, rank, w, t, n in jobs:
        book.add(jid, rank, w, t, n)
    return book


def objective(jobs, w_new, adm) -> float:
    """Summed weights plus the stay bonus, as the MILP counts them."""
    total = w_new[adm.new_type]
    for jid, _, w, t, _ in jobs:
        nt = adm.moves.get(jid, t)
        total += w[nt] + (STAY_BONUS if nt == t else 0.0)
    return total


@pytest.mark.parametrize("seed", range(40))
def test_class_search_answers_as_the_exhaustive_search(seed):
    cap, jobs, w_new, n_new = random_case(random.Random(seed), 12)
    book = book_of(cap, jobs)
    moves = [m for jid, rank, w, t, n in jobs for m in job_moves(jid, rank, w, t, n, STAY_BONUS)]
    slack = [c - x for c, x in zip(cap, book.load)]
    assert book.solve(w_new, n_new) == exhaustive_admission(moves, slack, w_new, n_new, 3)


@pytest.mark.parametrize("seed", range(40))
def test_search_reaches_the_milp_optimum(seed):
    cap, jobs, w_new, n_new = random_case(random.Random(100 + seed), 14)
    got = book_of(cap, jobs).solve(w_new, n_new)
    ws = [w for _, _, w, _, _ in jobs] + [w_new]
    milp = solve_one_type_each(ws, [n for *_, n in jobs] + [n_new], cap, [t for *_, t, _ in jobs] + [None],
                               gap=0.0)
    assert (got is None) == (milp is None)
    if got is not None:
        best = sum(w[t] + (STAY_BONUS if t == cur else 0.0)
                   for (_, _, w, cur, _), t in zip(jobs, milp)) + w_new[milp[-1]]
        assert quantize(objective(jobs, w_new, got)) == quantize(best)


def test_kept_classes_follow_moves_and_departures():
    rng = random.Random(7)
    cap, jobs, w_new, n_new = random_case(rng, 16)
    book = book_of(cap, jobs)
    live = {j[0]: j for j in jobs}
    for _ in range(30):  # moves to any free type and departures, as admissions and finishes do
        jid = rng.choice(sorted(live))
        _, rank, w, t, n = live[jid]
        if rng.random() < 0.3:
            book.remove(jid)
            del live[jid]
        else:
            room = [u for u in w if u != t and book.load[u] + n <= cap[u]]
            if room:
                u = rng.choice(room)
                book.add(jid, rank, w, u, n)
                live[jid] = (jid, rank, w, u, n)
        if not live:
            break
        assert book.solve(w_new, n_new) == book_of(cap, list(live.values())).solve(w_new, n_new)


def test_ties_go_to_the_earliest_job_and_fewest_moves():
    w = {0: 1.0, 1: 0.5}
    # three identical jobs on the better type fill it; a newcomer that only runs there must
    # push one of them to type 1: the earliest of the three, by the stated rule
    jobs = [(f"j{i}", (float(i), f"j{i}"), w, 0, 4) for i in range(3)]
    got = book_of([12, 12], jobs).solve({0: 1.0}, 4)
    assert got is not None and got.new_type == 0 and got.moves == {"j0": 1}
    # room on type 0 already: nobody moves
    got = book_of([16, 12], jobs).solve({0: 1.0}, 4)
    assert got is not None and got.moves == {}


@pytest.mark.parametrize("seed", range(60))
def test_compiled_search_answers_as_the_python_search(seed):
    """The compiled enumeration and the Python search return the same admission, ties included."""
    pytest.importorskip("numba")
    from dlsched.policies.gavel import admit
    from dlsched.policies.gavel.admit import python_search, search
    from dlsched.policies.gavel.admit_kernel import compiled_search

    admit._kernel()  # loaded: ``search`` takes the compiled path on any size from now on

    rng = random.Random(1000 + seed)
    cap, jobs, w_new, n_new = random_case(rng, rng.choice([4, 12, 24]), types=rng.choice([2, 3, 4]))
    book = book_of(cap, jobs)
    cands = sorted(m for lst in book.classes.values() for m in lst[:3])
    slack = [c - x for c, x in zip(book.capacity, book.load)]
    for k in (0, 1, 2, 3):
        want = python_search(cands, slack, w_new, n_new, k)
        assert search(cands, slack, w_new, n_new, k) == want
        found = compiled_search(cands, slack, w_new, n_new, k, quantize)
        assert (found is None) == (want is None)
    moves = [m for jid, rank, w, t, n in jobs for m in job_moves(jid, rank, w, t, n, STAY_BONUS)]
    assert search(cands, slack, w_new, n_new, 3) == exhaustive_admission(moves, slack, w_new, n_new, 3)


def test_book_follows_the_engine_without_rescanning_it(testbed, perf):
    """The admission book kept from finishes and the policy's own decisions gives the same run as
    the book rebuilt from the engine's running jobs on every call."""
    from crius_helpers import small_trace

    from dlsched.policies.registry import make_policy
    from dlsched.sim import SimConfig, Simulator

    jobs = small_trace(n=40, gap_s=30)
    kept = make_policy("gavel-admit")
    res = Simulator(testbed, kept, jobs, perf=perf, config=SimConfig(seed=0, debug=True)).run()
    full = make_policy("gavel-admit")
    full._book_is_current = lambda view: False  # the rescan on every call
    ref = Simulator(testbed, full, jobs, perf=perf, config=SimConfig(seed=0)).run()
    assert [r.row() for r in res.records] == [r.row() for r in ref.records]
    assert res.summary == ref.summary
