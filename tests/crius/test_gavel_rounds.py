"""``serve_round`` (numpy) against the dict-based round it replaced, on random rounds full of ties."""

from __future__ import annotations

import numpy as np
import pytest

from dlsched.policies.gavel.rounds import RoundBook, serve_round


def reference_round(x, rounds, got, cur, sizes, free):
    """The former ``Gavel.schedule`` priority pass, over plain Python values."""
    pairs = []
    for i in range(len(sizes)):
        r = int(rounds[i])
        for t in range(x.shape[1]):
            if x[i, t] <= 0:
                continue
            received = int(got[i, t]) / r if r else 0.0
            prio = float(x[i, t]) / max(received, 1e-3)
            keep = 1 if cur[i] == t else 0
            pairs.append((-prio, -keep, i, t))  # i: submission order
    pairs.sort()
    out, taken = [], set()
    for _, _, i, t in pairs:
        if i not in taken and free[t] >= sizes[i]:
            free[t] -= sizes[i]
            taken.add(i)
            out.append((i, t))
    return out


@pytest.mark.parametrize("seed", range(20))
def test_same_jobs_served_in_the_same_order(seed):
    rng = np.random.default_rng(seed)
    n, nt = int(rng.integers(1, 80)), int(rng.integers(1, 5))
    x = rng.choice([0.0, 0.0, 0.25, 0.5, 1.0, 1 / 3], size=(n, nt))  # coarse: many equal priorities
    rounds = rng.integers(0, 12, size=n)
    got = np.minimum(rng.integers(0, 12, size=(n, nt)), rounds[:, None])
    cur = rng.integers(-1, nt, size=n)
    sizes = [int(s) for s in rng.choice([1, 2, 4, 8], size=n)]
    free = [int(c) for c in rng.integers(0, 40, size=nt)]
    expect = reference_round(x, rounds, got, cur, sizes, list(free))
    got_free = list(free)
    assert serve_round(x, rounds, got, cur, sizes, got_free) == expect
    assert len(expect) > 0 or sum(free) == 0 or not x.any() or min(sizes) > max(free)


def test_book_reuses_rows_zeroed_and_grows():
    book = RoundBook(2, rows=2)
    a, b = book.row_of("a"), book.row_of("b")
    book.rounds[a], book.got[a, 1], book.x[a, 0] = 5, 3, 0.5
    book.remove("a")
    c = book.row_of("c")  # takes a's row, cleared
    assert c == a and book.rounds[c] == 0 and not book.got[c].any() and not book.x[c].any()
    d = book.row_of("d")  # a third row: the arrays double
    assert d not in (b, c) and len(book.rounds) == 4
    book.ensure_types(3)
    assert book.x.shape == (4, 3) and book.got.shape == (4, 3)


def test_count_served_adds_one_per_served_row_and_type():
    book = RoundBook(3, rows=2)
    a, b = book.row_of("a"), book.row_of("b")
    book.row_of("c")  # a third row: the arrays grow, and stay writable through the flat view
    book.count_served([a * 3 + 2, b * 3 + 0])
    book.count_served([a * 3 + 2])
    assert book.got[a].tolist() == [0, 0, 2] and book.got[b].tolist() == [1, 0, 0]


def test_compiled_greedy_pass_is_the_python_one():
    """The compiled greedy pass serves the same pairs, in the same order, with the same GPUs left."""
    pytest.importorskip("numba")
    from dlsched.policies.gavel.rounds import greedy_serve_py
    from dlsched.policies.gavel.rounds_kernel import greedy_serve

    rng = np.random.default_rng(7)
    for _ in range(50):
        nj, nt = int(rng.integers(1, 40)), int(rng.integers(1, 5))
        k = int(rng.integers(0, 3 * nj))
        jobs, types = rng.integers(nj, size=k), rng.integers(nt, size=k)
        sizes = rng.choice([1, 2, 4, 8], size=nj)
        free = rng.integers(0, 20, size=nt)
        f1, f2 = free.copy(), free.copy()
        a, b = greedy_serve(jobs, types, sizes, f1), greedy_serve_py(jobs, types, sizes, f2)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and np.array_equal(f1, f2)
