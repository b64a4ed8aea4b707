"""Time-slicing live: which time-sliced jobs hold their GPUs' turn.

In the simulator a time-sliced job runs at 1/n of its speed (fluid sharing,
the core's model).  Live the jobs really alternate: the job on turn runs, the
others wait, suspended at an iteration boundary with a checkpoint, and each
quantum the least-served jobs take the GPUs over (a real suspend and resume,
paid for, not modelled).  Jobs may share some GPUs and not others (a 2-GPU
job beside 1-GPU ones): turns go greedily to the least-served jobs whose GPUs
are not already taken, so two jobs on one GPU never run at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TurnKeeper:
    quantum_s: float
    began: dict[str, float] = field(default_factory=dict)  # job on turn -> when its turn began
    served: dict[str, float] = field(default_factory=dict)  # seconds of turn each sliced job has had
    _last: float | None = None

    def update(self, sliced: dict[str, tuple[int, ...]], order: dict[str, tuple], now: float) -> set[str]:
        """The jobs on turn now, out of every job in sliced mode (``sliced``: job -> its GPUs).

        A turn lasts ``quantum_s``; until then its job keeps it.  Free turns go
        to the least-served jobs first (ties by ``order``, e.g. submit time);
        a job joining the rotation starts level with the least-served one, so
        it neither waits for everyone to catch up nor starves them.
        """
        dt = 0.0 if self._last is None else max(0.0, now - self._last)
        self._last = now
        for j in self.began:
            if j in sliced:
                self.served[j] = self.served.get(j, 0.0) + dt
        self.served = {j: s for j, s in self.served.items() if j in sliced}
        floor = min(self.served.values(), default=0.0)
        for j in sliced:
            self.served.setdefault(j, floor)
        taken: set[int] = set()
        turns: dict[str, float] = {}
        for j, t in sorted(self.began.items(), key=lambda kv: (kv[1], kv[0])):
            if j in sliced and now - t < self.quantum_s - 1e-9 and not taken & set(sliced[j]):
                turns[j] = t
                taken |= set(sliced[j])
        for j in sorted(sliced, key=lambda j: (self.served[j], order.get(j, ()), j)):
            if j not in turns and not taken & set(sliced[j]):
                turns[j] = now  # a new turn (or the same job again, when nobody else wants its GPUs)
                taken |= set(sliced[j])
        self.began = turns
        return set(turns)

    def forget(self) -> None:
        self.began.clear()
        self.served.clear()
        self._last = None
