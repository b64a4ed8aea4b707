"""Which placed jobs meet on a network link, kept between a policy's calls.

``base.shares_links`` answers from scratch: every flow of every placed job, link by link, at every
call.  A policy is asked at every arrival, completion and move, and between two calls only a few jobs
arrive, leave or change paths, so ``Meetings`` keeps each job's network links and each link's jobs,
updates them for the jobs whose ``CommJob`` (``build_view`` reuses it while a job's traffic and price
are unchanged) or picks changed, and recomputes the answer only for the jobs on the links those
touched.  The answer is ``shares_links``'s, set for set (tested against it).
"""

from __future__ import annotations

from dlsched.comm.base import CommView, network_links_of


class Meetings:
    """``shares_links(view, picks)`` over a run's successive views of one fabric (see the module)."""

    def __init__(self) -> None:
        self._fabric = None
        self._of: dict[str, tuple] = {}  # job -> (its CommJob, its picks or None, its network links)
        self._on: dict[int, set[str]] = {}  # network link -> jobs on it
        self._out: dict[str, frozenset[str]] = {}  # job -> the other jobs it meets

    def __call__(self, view: CommView, picks: dict[str, dict[int, int]] | None = None) -> dict[str, frozenset[str]]:
        """For every job of ``view``, the other jobs its flows meet on a network link, under ``picks``
        (job -> flow index -> candidate) where given, else the flows' present paths.  The sets are
        shared with later answers: read them, do not change them."""
        if self._fabric is not view.network_links:
            self._fabric, self._of, self._on, self._out = view.network_links, {}, {}, {}
        picks = picks or {}
        of, on = self._of, self._on
        touched: set[int] = set()
        changed: list[str] = []
        for j in [j for j in of if j not in view.jobs]:  # gone: off their links
            gone = of.pop(j)[2]
            for l in gone:
                self._leave(l, j)
            touched |= gone
            self._out.pop(j, None)
        for j, job in view.jobs.items():
            mine = picks.get(j) or None
            got = of.get(j)
            if got is not None and got[0] is job and got[1] == mine:
                continue
            links = self._links(view, job, mine)
            old = got[2] if got is not None else frozenset()
            of[j] = (job, dict(mine) if mine else None, links)  # a copy: the caller's dict may change
            if links == old and j in self._out:
                continue
            for l in old - links:
                self._leave(l, j)
            for l in links - old:
                on.setdefault(l, set()).add(j)
            touched |= old | links
            changed.append(j)
        # a job's answer changes only if one of its links gained or lost a job: those links' jobs
        again = set(changed)
        for l in touched:
            again.update(on.get(l, ()))
        for j in again:
            self._out[j] = self._meets(j)
        return {j: self._out[j] for j in view.jobs}

    def _leave(self, l: int, j: str) -> None:
        s = self._on[l]
        s.discard(j)
        if not s:
            del self._on[l]

    @staticmethod
    def _links(view: CommView, job, mine: dict[int, int] | None) -> frozenset[int]:
        mine = mine or {}
        out: set[int] = set()
        for i, f in enumerate(job.flows):
            out.update(network_links_of(view, f.candidates, mine.get(i, f.chosen)))
        return frozenset(out)

    def _meets(self, j: str) -> frozenset[str]:
        on = self._on
        out: set[str] = set()
        for l in self._of[j][2]:
            members = on[l]
            if len(members) > 1:
                out |= members
        out.discard(j)
        return frozenset(out)
