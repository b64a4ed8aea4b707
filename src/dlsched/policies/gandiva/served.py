"""Gandiva's round-robin accounting, settled lazily.

Each call adds to every running job its share of a GPU since the previous call
(``dt / sharing``): the figure round-robin evens out.  Added at every call for
every running job, that is a pass over the whole cluster per event; but a job's
figure is read only when it takes turns (``rotate``) or a newcomer joins its
server.  So the clock keeps each call's ``dt`` once, and a job's figure as of
the last call it was settled for; reading it (or changing its sharing, which
``Plan.before_change`` reports first) replays the missing calls at the sharing
it had.  The additions are the same floating-point operations in the same
order as adding at every call, so the figures are bit for bit the same.
"""

from __future__ import annotations

import numpy as np

# a replay longer than this runs in numpy: ``dts / k`` element by element, then a running sum
# (``add.accumulate`` adds in order, one element after the other: the same roundings as the loop)
_VECTOR = 32


class ServedClock:
    def __init__(self) -> None:
        self.dts: list[float] = []  # per counted call: seconds since the previous call
        self._arr = np.zeros(1024)  # the same, as an array (its first len(dts) elements)
        # job id -> [served, calls counted, the job's policy_data (where "served" is kept)]
        self.acc: dict[str, list] = {}

    def tick(self, dt: float) -> None:
        """One more call counts ``dt`` seconds for every running job."""
        n = len(self.dts)
        if n == len(self._arr):
            self._arr = np.concatenate((self._arr, np.zeros(n)))
        self._arr[n] = dt
        self.dts.append(dt)

    def start(self, jid: str, policy_data: dict, served: float) -> None:
        """Count ``jid`` from the next call on, from ``served``."""
        policy_data["served"] = served
        self.acc[jid] = [served, len(self.dts), policy_data]

    def settle(self, plan, jids) -> None:
        """Bring the jobs' figures up to the last call, at their sharing in ``plan`` (which must
        be the sharing they have had since they were last settled)."""
        acc, dts = self.acc, self.dts
        n = len(dts)
        for jid in jids:
            e = acc.get(jid)
            if e is None or e[1] == n:
                continue
            k = plan.sharing(jid)
            s = e[0]
            if n - e[1] > _VECTOR:
                part = self._arr[e[1]:n] / k
                part[0] += s
                s = float(np.add.accumulate(part, out=part)[-1])
            else:
                for dt in dts[e[1]:]:
                    s += dt / k
            e[0] = s
            e[1] = n
            e[2]["served"] = s

    def value(self, plan, jid: str) -> float:
        """``jid``'s figure as of the last call (it must be counted)."""
        self.settle(plan, (jid,))
        return self.acc[jid][0]

    def settle_all(self, plan) -> None:
        self.settle(plan, list(self.acc))

    def forget(self, jid: str) -> None:
        self.acc.pop(jid, None)

    def clear(self) -> None:
        self.dts.clear()
        self.acc.clear()
        self._arr = np.zeros(1024)
