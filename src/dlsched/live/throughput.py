"""The live series' throughput: iterations the agents counted, over the time they took.

Each segment's rank 0 reports its iteration count; the meter adds the
iterations since the segment's previous report (times the job's global
batch) to the current window, and a window's throughput is those samples over
the window's length on the scheduler clock.  So the series integrates to
exactly the samples the jobs processed, and nothing priced or estimated (a
perf model's guess for a segment that has not measured itself yet) ever
enters it.  Windows close every ``window_s`` and whenever the busy / running /
queued counts change; a row holds from its window's start to the next row.

Iterations a segment ran while no scheduler was watching (adopted after a
restart) are not counted: their timing is unknown, and counting them at once
would be the very spike this replaces.
"""

from __future__ import annotations

from dataclasses import dataclass, field

State = tuple[int, int, int]  # busy GPUs, running jobs, queued jobs


@dataclass
class ThroughputMeter:
    window_s: float = 1.0
    _seen: dict[tuple[str, int], float] = field(default_factory=dict)  # segment -> iterations counted to
    _samples: float = 0.0  # samples counted in the open window
    _start: float | None = None  # the open window's start
    _state: State | None = None  # counts at the open window's start
    _last_row: tuple | None = None
    total_samples: float = 0.0  # everything counted by this meter

    def count(self, segment: tuple[str, int], iterations: float, batch_size: int,
              start: float | None) -> None:
        """A segment reports ``iterations`` done; ``start``: where it began, None if that is unknown
        (an adopted segment: its first report only sets the baseline)."""
        prev = self._seen.get(segment, start)
        if prev is None:
            prev = iterations
        if iterations > prev:
            self._samples += (iterations - prev) * batch_size
            self.total_samples += (iterations - prev) * batch_size
        self._seen[segment] = max(prev, iterations)

    def forget(self, keep: set[tuple[str, int]]) -> None:
        """Drop segments that ended (their last report has been counted)."""
        for key in [k for k in self._seen if k not in keep]:
            del self._seen[key]

    def sample(self, now: float, state: State) -> list[tuple]:
        """Rows (time, busy, running, queued, throughput) to add to the series now."""
        if self._start is None:
            self._start, self._state = now, state
            return []
        if state == self._state and now - self._start < self.window_s:
            return []
        return self._close(now, state)

    def flush(self, now: float, state: State) -> list[tuple]:
        """Close the open window and end the series at ``now`` (nothing measured after it)."""
        if self._start is None or now <= self._start:
            return []
        rows = self._close(now, state)
        end = (now, *state, 0.0)
        if self._last_row is None or end[1:] != self._last_row[1:]:
            rows.append(end)
            self._last_row = end
        self._start = None
        return rows

    def _close(self, now: float, state: State) -> list[tuple]:
        dt = now - self._start
        if dt <= 0:  # the same instant: keep counting into this window, with the new counts
            self._state = state
            return []
        row = (self._start, *self._state, self._samples / dt)
        self._start, self._state, self._samples = now, state, 0.0
        if self._last_row is not None and row[1:] == self._last_row[1:]:
            return []  # the same values as the row before: that row already holds
        self._last_row = row
        return [row]
