"""Dally's delay-timer auto-tuner (Dally, section IV-B3, Algorithm 2).

Every time a job accepts an offer at the machine or the rack level, the time it
waited is appended to the list for (that level, the job's GPU demand)
(Algorithm 1, lines 7 and 15).  Which wait is the caller's to say
(``Dally.rack_wait``): the rack timer runs after the machine timer (12 h, then
"another 12 h"), so a rack acceptance records the wait since the job's machine
timer ran out, the quantity the rack timer is compared with.  Whenever a job is offered resources, its timer
for a level is the list's mean plus two sample standard deviations (the
paper's 95% rule of thumb; Algorithm 2, lines 13-14).

The list is a sliding window: the paper has users set "the size of the
wait-time list, denoted as the history limit (sliding window size)", and the
oldest values beyond it are discarded (Algorithm 2, lines 4 and 10).  So the
window holds the last ``history_n`` waits.  Once a list has a value it never
empties, so the tuner always answers from history, as Algorithm 2 does.  An
earlier reading of ours dropped values older than a time limit; on a quiet
cluster that emptied the lists, and the timer fell back to the fixed 12 h in
22% (machine) and 41% (rack) of evaluations, i.e. the "auto-tuned" policy
was partly the manual one.  The time limit stays available (``history_s``)
for the ablation.  Both readings are in the text ("the size of the wait-time
list ... (sliding window size)" and "discarding values that exceed the
specified history time limit"); the paper's reason to shorten the time limit
in larger clusters, "more jobs get placed over time", is a limit sized to a
number of placements, which a count is.  Over the grid the auto-tuner rows
stay mixed under both (docs/dally.md).

Our choices where the paper is silent: before a list holds any value the
timer is the manual default (12 h, the paper's empirical value); with one
value it is that value (a sample standard deviation needs two).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

LEVELS = ("machine", "rack")


@dataclass
class TunerCounts:
    """How often a timer was asked for, and how often it had no history and fell back to the default."""

    evaluations: int = 0
    fallbacks: int = 0

    @property
    def fallback_share(self) -> float:
        return self.fallbacks / self.evaluations if self.evaluations else 0.0


class DelayTuner:
    def __init__(self, default_s: dict[str, float], history_n: int | None = 50, history_s: float | None = None):
        if history_n is not None and history_n < 1:
            raise ValueError("history_n must be at least 1")
        if history_s is not None and history_s <= 0:
            raise ValueError("history_s must be positive")
        if history_n is None and history_s is None:
            raise ValueError("the tuner needs a history limit (history_n or history_s)")
        self.history_n = history_n
        self.history_s = None if history_s is None else float(history_s)
        self.default_s = dict(default_s)
        self._waits: dict[tuple[str, int], deque[tuple[float, float]]] = {}
        self.counts = {lv: TunerCounts() for lv in LEVELS}
        # the last answer per list: a count-limited list changes only when a wait is recorded, and
        # every queued job asks at every call, so the mean and deviation are not recomputed each time
        self._answer: dict[tuple[str, int], tuple[float, bool]] = {}  # (timer, fell back)

    def record(self, level: str, n_gpus: int, now: float, waited: float) -> None:
        """A job of ``n_gpus`` accepted a ``level`` offer at ``now`` after waiting ``waited`` seconds."""
        if level in LEVELS:
            self._answer.pop((level, n_gpus), None)
            self._waits.setdefault((level, n_gpus), deque(maxlen=self.history_n)).append((now, waited))

    def timer(self, level: str, n_gpus: int, now: float) -> float:
        """Seconds a job of ``n_gpus`` waits for a ``level`` offer before relaxing (Algorithm 2)."""
        value, fell_back = self.answer(level, n_gpus, now)
        self.count(level, 1, int(fell_back))
        return value

    def count(self, level: str, evaluations: int, fallbacks: int) -> None:
        """Count timer evaluations answered through ``answer`` (a caller that asks once for many jobs)."""
        c = self.counts[level]
        c.evaluations += evaluations
        c.fallbacks += fallbacks

    def answer(self, level: str, n_gpus: int, now: float) -> tuple[float, bool]:
        """(the timer, whether it fell back to the default for want of history), not counted."""
        key = (level, n_gpus)
        if self.history_s is None:  # a time window changes with ``now``: never remembered
            got = self._answer.get(key)
            if got is not None:
                return got
        q = self._waits.get(key)
        if q is not None and self.history_s is not None:
            while q and q[0][0] < now - self.history_s:
                q.popleft()
        got = (self.default_s[level], True) if not q else (self._value(q), False)
        self._answer[key] = got
        return got

    @staticmethod
    def _value(q) -> float:
        w = [x for _, x in q]
        mean = math.fsum(w) / len(w)
        if len(w) < 2:
            return mean
        var = math.fsum((x - mean) ** 2 for x in w) / (len(w) - 1)
        return mean + 2.0 * math.sqrt(var)

    def samples(self, level: str, n_gpus: int) -> int:
        q = self._waits.get((level, n_gpus))
        return len(q) if q else 0
