"""Which segments' processes physically run on each GPU (as opposed to what the scheduler decided).

Usually one segment per GPU; several only while they are packed there on
purpose.  The service launches a segment only when this map says its GPUs
can take it (``can_join``), so a GPU never runs an exclusive or time-sliced
segment beside anything else, whatever the logical state says.
"""

from __future__ import annotations


class PhysicalMap:
    def __init__(self):
        self._on: dict[int, list] = {}  # GPU id -> segments running there, in launch order

    def __len__(self) -> int:
        """GPUs with something running."""
        return sum(1 for segs in self._on.values() if segs)

    def __contains__(self, g: int) -> bool:
        """Something runs on GPU ``g``."""
        return bool(self._on.get(g))

    def on(self, g: int) -> list:
        return list(self._on.get(g, ()))

    def holds(self, g: int, seg) -> bool:
        return any(s is seg for s in self._on.get(g, ()))

    def add(self, g: int, seg) -> None:
        if not self.holds(g, seg):
            self._on.setdefault(g, []).append(seg)

    def remove(self, g: int, seg) -> None:
        left = [s for s in self._on.get(g, ()) if s is not seg]
        if left:
            self._on[g] = left
        else:
            self._on.pop(g, None)

    def clear(self, g: int) -> None:
        self._on.pop(g, None)

    def can_join(self, g: int, seg, current) -> bool:
        """``seg`` may start on ``g``: the GPU is idle, or ``seg`` and everything there are packed
        segments that are their jobs' current ones (``current(s)``; a stopping one must end first)."""
        there = self._on.get(g)
        if not there:
            return True
        return seg.mode == "packed" and all(s.mode == "packed" and current(s) for s in there)
