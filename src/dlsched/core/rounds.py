"""The round timer both engines use: rounds fall on multiples of the policy's period."""

from __future__ import annotations

import math


class RoundTimer:
    def __init__(self, period: float | None):
        self.period = period
        self.next: float | None = None  # the round to come, once armed

    def arm(self, now: float) -> float | None:
        """Set the next round after ``now`` unless one is pending; returns it when newly set."""
        if self.period is None or self.next is not None:
            return None
        self.next = self.after(now)
        return self.next

    def after(self, t: float) -> float:
        """The first round time after ``t``."""
        return (math.floor(t / self.period) + 1) * self.period

    def give_up(self) -> float | None:
        """Drop the pending round (the engine skips rounds); returns it."""
        pending, self.next = self.next, None
        return pending

    def skipped(self, first: float, t: float) -> tuple[int, float]:
        """From a given-up round ``first``: how many rounds fall before ``t``, and the first at or
        after it, by the timer's own sequence (``after`` applied round by round, not a division,
        so the times are the ones the timer would have fired)."""
        r, k = first, 0
        while r < t:
            k += 1
            r = self.after(r)
        return k, r

    def fire(self, now: float) -> bool:
        """True when a round is due at ``now``; the next one must then be armed again."""
        if self.next is not None and now >= self.next:
            self.next = None
            return True
        return False

