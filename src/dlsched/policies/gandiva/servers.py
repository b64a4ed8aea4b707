"""Placement across servers without regard to racks: Gandiva as a network-agnostic scheduler.

Gandiva's node allocation (OSDI 2018, section 4.2.1) knows servers and the
PCIe/socket tiers inside them, nothing above: a job too big for one server, or
one that finds no server with room, takes free GPUs on the fewest servers,
wherever they sit.  Dally (section II, V-A) runs it that way ("network-agnostic";
"the lack of awareness of the various network tiers ... often end[s] up ...
mapping the job across multiple racks").  With ``racks`` on (our default)
Gandiva instead places and migrates by the full tier order (``pick_gpus``),
which tells one rack from several: a rack-aware Gandiva.
"""

from __future__ import annotations

from dlsched.cluster.topology import Tier


def fewest_servers(freemap, nodes, n: int) -> list[int] | None:
    """``n`` free GPUs on the fewest of ``nodes``, most free first, ties by node id (racks ignored)."""
    node_free = freemap._nf  # the free map's own fast view, as placement.py reads it
    order = sorted((-int(node_free[nd]), nd) for nd in nodes if node_free[nd] > 0)
    got: list[int] = []
    for neg, nd in order:
        got += freemap.free_ids_of_node(nd, min(-neg, n - len(got)))
        if len(got) == n:
            return got
    return None


def locality(plan, gpus: tuple[int, ...]) -> tuple:
    """How tight a placement is, as the policy tells it (lower is tighter): the tier; without racks,
    every placement over several servers is one tier, tighter the fewer servers it spans."""
    t = plan.tier(gpus)
    if plan.racks or t < Tier.RACK:
        return (t, 0)
    return (Tier.RACK, len({plan.node_of(g) for g in gpus}))


def tightest(plan, type_id: int | None, n: int) -> tuple:
    """The ``locality`` no placement of ``n`` GPUs of a type can beat."""
    largest = plan.largest_node(type_id)
    if n <= largest:
        return (plan.tightest_tier(type_id), 0)
    return (Tier.RACK, 0) if plan.racks else (Tier.RACK, -(-n // largest))
