"""CRUX's priority compression: max K-cut of the contention DAG (Cao et al., SIGCOMM '24, section 4.3).

Jobs that share a link are joined by an edge from the higher-priority job to the
lower one, weighted by the higher one's GPU intensity (the utilisation lost if
both land on one level).  Mapping jobs onto K levels without inverting any edge
is a K-cut of the DAG; the best cut keeps the most weight between levels.
Algorithm 1: for each of m random topological orders (randomised BFS, i.e.
Kahn's algorithm drawing among ready jobs), the best split of the order into K
consecutive blocks by dynamic programming, f(i, k) = max_j f(j, k-1) + C(j, i),
where C(j, i) is the weight from the first j jobs to jobs j+1..i; keep the best
order.  The split point is monotone in i (the paper's quadrangle-inequality
argument), so the search for f(i, k) starts at the split chosen for f(i-1, k).

Speed-up of ours, exact: jobs in different connected components of the DAG
share no edge, so each component is cut on its own (they reuse the same K
levels); in cluster traces components are small, so 5,000 jobs compress fast.
"""

from __future__ import annotations

import numpy as np


def random_topological_order(n: int, succ: list[list[int]], rng: np.random.Generator) -> list[int]:
    indeg = [0] * n
    for u in range(n):
        for v in succ[u]:
            indeg[v] += 1
    ready = [u for u in range(n) if indeg[u] == 0]
    order = []
    while ready:
        u = ready.pop(int(rng.integers(len(ready))))
        order.append(u)
        for v in succ[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                ready.append(v)
    if len(order) != n:
        raise ValueError("contention graph has a cycle: priorities must be a strict order")
    return order


def cut_order(W: np.ndarray, K: int, monotone: bool = True) -> tuple[float, list[int]]:
    """Best split of nodes 0..n-1 (already in topological order; ``W[p, q]`` the weight p -> q) into at most
    ``K`` consecutive blocks: (cut weight, block index of every node)."""
    n = W.shape[0]
    K = max(1, min(K, n))
    S = np.cumsum(np.cumsum(np.triu(W, 1), axis=0), axis=1)  # S[p, q]: weight from {0..p} to {0..q}
    # C[j][i] (prefix lengths j < i): weight from the first j nodes to nodes j..i-1
    C = np.zeros((n + 1, n + 1))
    C[1:, 1:] = S - np.diag(S)[:, None]
    C = C.tolist()  # plain lists: the DP below is scalar work, faster without numpy per step
    NEG = float("-inf")
    f_prev = [0.0] * (n + 1)  # one block: nothing cut
    splits = [[0] * (n + 1)]
    for _k in range(2, K + 1):
        f = [0.0] + [NEG] * n
        g = [0] * (n + 1)
        lo = 0
        for i in range(1, n + 1):
            best, arg = NEG, lo
            for j in range(lo if monotone else 0, i):
                v = f_prev[j] + C[j][i]
                if v >= best:  # ties to the later split, which keeps the split monotone
                    best, arg = v, j
            f[i], g[i] = best, arg
            if monotone:
                lo = arg
        f_prev = f
        splits.append(g)
    blocks = [0] * n
    i = n
    for k in range(K, 0, -1):
        j = splits[k - 1][i] if k > 1 else 0
        for p in range(j, i):
            blocks[p] = k - 1
        i = j
    return float(f_prev[n]), blocks


def compress(n: int, edges: dict[tuple[int, int], float], K: int, m: int = 10, seed: int = 0,
             monotone: bool = True) -> list[int]:
    """Levels 0..K-1 for nodes 0..n-1 of a DAG (``edges[(u, v)]``: weight, u above v), by Algorithm 1
    per connected component; a node on no edge gets level 0."""
    succ: list[list[int]] = [[] for _ in range(n)]
    adj: list[list[int]] = [[] for _ in range(n)]
    for (u, v) in edges:
        succ[u].append(v)
        adj[u].append(v)
        adj[v].append(u)
    for s in succ:
        s.sort()
    levels = [0] * n
    seen = [False] * n
    rng = np.random.default_rng(seed)
    for root in range(n):
        if seen[root] or not adj[root]:
            continue
        comp, stack = [], [root]
        seen[root] = True
        while stack:
            u = stack.pop()
            comp.append(u)
            for v in adj[u]:
                if not seen[v]:
                    seen[v] = True
                    stack.append(v)
        comp.sort()
        local = {u: i for i, u in enumerate(comp)}
        lsucc = [[local[v] for v in succ[u]] for u in comp]
        depth = _depths(len(comp), lsucc)
        if max(depth) < K:
            # every edge can cross levels (level = longest chain above the job): the cut is total, optimal
            for u in comp:
                levels[u] = depth[local[u]]
            continue
        best_w, best_levels = -1.0, None
        for _ in range(m):
            order = random_topological_order(len(comp), lsucc, rng)
            pos = {u: p for p, u in enumerate(order)}
            W = np.zeros((len(comp), len(comp)))
            for u in comp:
                for v in succ[u]:
                    W[pos[local[u]], pos[local[v]]] = edges[(u, v)]
            w, blocks = cut_order(W, K, monotone)
            if w > best_w:
                best_w, best_levels = w, {comp[order[p]]: blocks[p] for p in range(len(comp))}
        for u, lv in best_levels.items():
            levels[u] = lv
    return levels


def _depths(n: int, succ: list[list[int]]) -> list[int]:
    """Length of the longest chain of edges ending at each node."""
    order = random_topological_order(n, succ, np.random.default_rng(0))
    depth = [0] * n
    for u in order:
        for v in succ[u]:
            depth[v] = max(depth[v], depth[u] + 1)
    return depth


def cut_weight(levels: list[int], edges: dict[tuple[int, int], float]) -> float:
    """Weight of edges whose ends sit on different levels (an inverted edge makes the cut invalid: -inf)."""
    total = 0.0
    for (u, v), w in edges.items():
        if levels[u] > levels[v]:
            return float("-inf")
        if levels[u] < levels[v]:
            total += w
    return total
