"""Gavel's round mechanism on numpy rows: who runs where this round (issue 21).

``gavel`` serves (job, type) pairs in order of priority ``X[j, t] / (share of rounds the job
already got on t)``, each job at most once per round, while GPUs of that type remain.  With a
few hundred active jobs, doing that per round over Python dicts was most of a run on the
arena trace; here the per-job state lives in arrays (``RoundBook``) and the priorities and
their order are computed by numpy (``serve_round``), with the same float operations in the
same order, so the decisions are bit-for-bit those of the dict version
(``tests/crius/test_gavel_rounds.py`` keeps that version as the reference).
"""

from __future__ import annotations

import numpy as np


class RoundBook:
    """Per job (one row each, reused after the job leaves): LP weights W and shares X by type,
    rounds it has been active, rounds it ran on each type, the type it runs on now (-1: none)
    and on how many GPUs (0: none)."""

    def __init__(self, n_types: int, rows: int = 64):
        self.w = np.zeros((rows, n_types))
        self.x = np.zeros((rows, n_types))
        self.on = np.full(rows, -1, dtype=np.int64)
        self.held = np.zeros(rows, dtype=np.int64)
        self.rounds = np.zeros(rows, dtype=np.int64)
        self.got = np.zeros((rows, n_types), dtype=np.int64)
        self.row: dict[str, int] = {}
        self._spare: list[int] = []
        self._next = 0

    def row_of(self, job_id: str) -> int:
        """The job's row, a zeroed one on first sight."""
        r = self.row.get(job_id)
        if r is not None:
            return r
        if self._spare:
            r = self._spare.pop()
        else:
            r, self._next = self._next, self._next + 1
            if r == len(self.rounds):
                self._grow(2 * r, self.x.shape[1])
        self.w[r] = 0.0
        self.x[r] = 0.0
        self.on[r] = -1
        self.held[r] = 0
        self.rounds[r] = 0
        self.got[r] = 0
        self.row[job_id] = r
        return r

    def ensure_types(self, n_types: int) -> None:
        """Room for ``n_types`` GPU types (a cluster with more types than the last one)."""
        if n_types > self.x.shape[1]:
            self._grow(len(self.rounds), n_types)

    def _grow(self, rows: int, cols: int) -> None:
        w, x, got = np.zeros((rows, cols)), np.zeros((rows, cols)), np.zeros((rows, cols), dtype=np.int64)
        r0, c0 = self.x.shape
        w[:r0, :c0], x[:r0, :c0], got[:r0, :c0] = self.w, self.x, self.got
        rounds, on = np.zeros(rows, dtype=np.int64), np.full(rows, -1, dtype=np.int64)
        held = np.zeros(rows, dtype=np.int64)
        rounds[:r0], on[:r0], held[:r0] = self.rounds, self.on, self.held
        self.w, self.x, self.got, self.rounds, self.on, self.held = w, x, got, rounds, on, held

    def count_served(self, flat) -> None:
        """One more round run for each served (row, type), given as row * n_types + type (a list
        or an int64 array; each row at most once).  ``got`` is always a fresh C-ordered array, so its flat reshape is a view."""
        self.got.reshape(-1)[flat] += 1

    def remove(self, job_id: str) -> None:
        r = self.row.pop(job_id, None)
        if r is not None:
            self._spare.append(r)


def serve_round(x: np.ndarray, rounds: np.ndarray, got: np.ndarray, cur: np.ndarray, sizes: list[int],
                free: list[int]) -> list[tuple[int, int]]:
    """One Gavel round: (job index, type) of every job served, in serving order.

    Rows are the active jobs in submission order (submit time, then job id), so a row's index
    is the tie-break after priority and staying put.  ``x`` the LP shares, ``rounds`` rounds
    active, ``got`` rounds run on each type, ``cur`` the type each job holds now (-1: none),
    ``sizes`` GPUs per job, ``free`` GPUs per type (consumed).
    """
    free_a = np.asarray(free, dtype=np.int64)
    idx, types = serve_round_arrays(x, rounds, got, cur, np.asarray(sizes, dtype=np.int64), free_a)
    free[:] = free_a.tolist()
    return list(zip(idx.tolist(), types.tolist()))


def serve_round_arrays(x: np.ndarray, rounds: np.ndarray, got: np.ndarray, cur: np.ndarray,
                       sizes: np.ndarray, free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``serve_round`` with the served (job index, type) pairs as two int64 arrays in serving
    order, ``sizes`` an int64 array and ``free`` an int64 array (consumed); the greedy pass over
    the ordered pairs runs compiled (``rounds_kernel``) where they are many, as it was a Python
    loop over every job with a share each round."""
    rows, cols = np.nonzero(x)  # row-major: jobs in order, types ascending within a job
    r = rounds[rows]
    safe = np.where(r > 0, r, 1)
    received = np.where(r > 0, got[rows, cols] / safe, 0.0)
    prio = x[rows, cols] / np.maximum(received, 1e-3)
    keep = (cur[rows] == cols).astype(np.int8)  # ties: stay put (no migration)
    order = np.lexsort((cols, rows, -keep, -prio))
    jobs, types = rows[order].astype(np.int64), cols[order].astype(np.int64)
    kernel = _kernel() if len(jobs) >= COMPILED_PAIRS else None
    if kernel is not None:
        return kernel(jobs, types, sizes, free)
    return greedy_serve_py(jobs, types, sizes, free)


COMPILED_PAIRS = 128  # numba costs about 0.5 CPU s to import and load: fewer pairs stay in Python
_KERNEL: object = False  # rounds_kernel.greedy_serve, None without numba; False: not looked up yet


def _kernel():
    global _KERNEL
    if _KERNEL is False:
        try:
            from dlsched.policies.gavel.rounds_kernel import greedy_serve
        except ImportError:
            greedy_serve = None
        _KERNEL = greedy_serve
    return _KERNEL


def greedy_serve_py(jobs: np.ndarray, types: np.ndarray, sizes: np.ndarray, free: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """``rounds_kernel.greedy_serve`` in Python (the same integer steps)."""
    size_l, free_l = sizes.tolist(), free.tolist()
    taken = [False] * len(size_l)
    out_j, out_t = [], []
    for i, t in zip(jobs.tolist(), types.tolist()):
        if taken[i]:
            continue
        n = size_l[i]
        if free_l[t] >= n:
            free_l[t] -= n
            taken[i] = True
            out_j.append(i)
            out_t.append(t)
    free[:] = free_l
    return np.array(out_j, dtype=np.int64), np.array(out_t, dtype=np.int64)
