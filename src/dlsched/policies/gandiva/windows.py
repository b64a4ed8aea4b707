"""Which jobs a profiling round has to look at.

``introspect.observe`` acts on a job only when its window has run its length or
its placement (GPUs, mode, sharing) changed since the window began; every other
job is left as it is.  Those two sets are known without a pass over every job:
windows by their start (a heap, checked against the window the job still has),
changes from the plan (the jobs a call changed restart their window at once;
the co-holders of a job that finished between calls are marked here).

Only the rates something reads are closed on time: time-sliced and packed
ones (the packing trials compare them) and an elastic job's (grow-shrink
compares its sizes).  An exclusive rigid job's window stays open until its
placement changes: its exclusive rate was never read, so every decision is
the same, and a busy cluster's rigid jobs cost nothing per round.
"""

from __future__ import annotations

import heapq

from dlsched.policies.gandiva.introspect import observe, restart_windows
from dlsched.policies.gandiva.plan import Plan
from dlsched.policies.base import ClusterView

# a window whose start is this close to being due is looked at; observe's own test decides
_SLACK_S = 1e-6


class Windows:
    def __init__(self, window_s: float) -> None:
        self.window_s = window_s
        self._due: list[tuple] = []  # (window start, seq, job id, the window tuple)
        self._seq = 0
        self._dirty: set[str] = set()  # placement may differ from the one its window started with

    def clear(self) -> None:
        self._due.clear()
        self._dirty.clear()

    def adopt(self, plan: Plan) -> None:
        """A fresh plan: every job may have changed unseen; every open window is looked at when due."""
        self._dirty = set(plan.jobs)
        self._push(plan, [jid for jid, job in plan.jobs.items() if "win" in job.policy_data])

    def mark(self, jids) -> None:
        self._dirty.update(jids)

    def _push(self, plan: Plan, jids) -> None:
        due, jobs = self._due, plan.jobs
        for jid in jids:
            job = jobs[jid]
            win = job.policy_data["win"]
            if win[2][1] == "exclusive" and not job.spec.elastic:
                continue  # nothing reads its rate (see the module docstring): its window is never closed
            self._seq += 1
            heapq.heappush(due, (win[0], self._seq, jid, win))

    def round(self, view: ClusterView, plan: Plan, now: float) -> None:
        """``observe`` on the jobs it can act on (the same result as on every job)."""
        jobs = plan.jobs
        due, limit = self._due, now - self.window_s + _SLACK_S
        popped = []
        while due and due[0][0] <= limit:
            _, _, jid, win = heapq.heappop(due)
            job = jobs.get(jid)
            if job is not None and job.policy_data.get("win") is win:
                popped.append(jid)
        look = {jid for jid in self._dirty if jid in jobs}
        look.update(popped)
        self._dirty = set()
        started = observe(view, plan, now, self.window_s, sorted(look))
        self._push(plan, started)
        # due by the heap's slack but not by observe's own test: still open, look again later
        self._push(plan, set(popped).difference(started))

    def restart(self, view: ClusterView, plan: Plan, now: float, changed) -> None:
        self._push(plan, restart_windows(view, plan, now, changed))
