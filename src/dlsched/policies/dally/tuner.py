"""Dally's delay-timer auto-tuner (Dally, section IV-B3, Algorithm 2).

Every time a job accepts an offer at the machine or the rack level, the time it
waited is appended to the list for (that level, the job's GPU demand).  Entries
older than the history limit are dropped (a sliding time window: the paper asks
for a smaller limit on larger clusters, where more jobs are placed per hour).
A job's timer for a level is the list's mean plus two sample standard
deviations (the paper's 95% rule of thumb).

Our choice where the paper is silent: until a list holds two samples (a sample
standard deviation needs two), the timer is the manual default (12 h).
"""

from __future__ import annotations

import math
from collections import deque

LEVELS = ("machine", "rack")


class DelayTuner:
    def __init__(self, history_s: float, default_s: dict[str, float]):
        if history_s <= 0:
            raise ValueError("history_s must be positive")
        self.history_s = float(history_s)
        self.default_s = dict(default_s)
        self._waits: dict[tuple[str, int], deque[tuple[float, float]]] = {}

    def record(self, level: str, n_gpus: int, now: float, waited: float) -> None:
        """A job of ``n_gpus`` accepted a ``level`` offer at ``now`` after waiting ``waited`` seconds."""
        if level in LEVELS:
            self._waits.setdefault((level, n_gpus), deque()).append((now, waited))

    def timer(self, level: str, n_gpus: int, now: float) -> float:
        """Seconds a job of ``n_gpus`` waits for a ``level`` offer before relaxing (Algorithm 2)."""
        q = self._waits.get((level, n_gpus))
        if q is not None:
            while q and q[0][0] < now - self.history_s:
                q.popleft()
        if q is None or len(q) < 2:
            return self.default_s[level]
        w = [x for _, x in q]
        mean = math.fsum(w) / len(w)
        var = math.fsum((x - mean) ** 2 for x in w) / (len(w) - 1)
        return mean + 2.0 * math.sqrt(var)

    def samples(self, level: str, n_gpus: int) -> int:
        q = self._waits.get((level, n_gpus))
        return len(q) if q else 0
