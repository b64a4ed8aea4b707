"""CRUX priority compression (Algorithm 1) against exhaustive enumeration."""

import itertools

import numpy as np
import pytest

from dlsched.comm.compression import compress, cut_order, cut_weight


def random_dag(rng, n, p=0.5):
    rank = rng.permutation(n)
    return {(u, v): float(rng.random()) for u in range(n) for v in range(n) if rank[u] < rank[v] and rng.random() < p}


def test_cut_order_is_the_best_split_of_the_order():
    rng = np.random.default_rng(3)
    for _ in range(30):
        n, K = int(rng.integers(2, 8)), int(rng.integers(2, 4))
        W = np.triu(rng.random((n, n)), 1)
        w, blocks = cut_order(W, K)
        best = 0.0
        for cuts in itertools.combinations(range(1, n), min(K, n) - 1):
            lv = np.searchsorted(np.array(cuts), np.arange(n), side="right")
            best = max(best, sum(W[p, q] for p in range(n) for q in range(n) if lv[p] < lv[q]))
        assert w == pytest.approx(best)
        assert blocks == sorted(blocks) and max(blocks) < K
        assert w == pytest.approx(sum(W[p, q] for p in range(n) for q in range(n) if blocks[p] < blocks[q]))


def test_monotone_split_matches_the_full_search():
    rng = np.random.default_rng(5)
    for _ in range(40):
        n = int(rng.integers(2, 12))
        W = np.triu(rng.random((n, n)) * (rng.random((n, n)) < 0.4), 1)
        assert cut_order(W, 3, monotone=True)[0] == pytest.approx(cut_order(W, 3, monotone=False)[0])


def test_compression_is_valid_and_near_the_optimum():
    rng = np.random.default_rng(7)
    ratios = []
    for _ in range(40):
        n, K = int(rng.integers(3, 7)), 3
        edges = random_dag(rng, n)
        levels = compress(n, edges, K, m=10, seed=1)
        got = cut_weight(levels, edges)
        assert got >= 0  # never inverts an edge
        opt = max(cut_weight(list(l), edges) for l in itertools.product(range(K), repeat=n))
        assert got <= opt + 1e-9
        ratios.append(got / opt if opt else 1.0)
    assert np.mean(ratios) > 0.95


def test_figure_13_two_links_two_levels():
    # jobs 0-1 share a link, jobs 2-3 another: the optimum puts 0 and 2 high, 1 and 3 low
    edges = {(0, 1): 1.0, (2, 3): 1.0}
    levels = compress(4, edges, 2)
    assert levels[0] < levels[1] and levels[2] < levels[3]


def test_components_are_cut_independently_and_deterministically():
    edges = {(2 * i, 2 * i + 1): 1.0 for i in range(50)}
    a, b = compress(100, edges, 2, seed=4), compress(100, edges, 2, seed=4)
    assert a == b and cut_weight(a, edges) == 50.0
