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
        self.next = (math.floor(now / self.period) + 1) * self.period
        return self.next

    def fire(self, now: float) -> bool:
        """True when a round is due at ``now``; the next one must then be armed again."""
        if self.next is not None and now >= self.next:
            self.next = None
            return True
        return False

