"""The network layer: link graphs, equal-cost paths, job traffic and flow-level contention.

See ``docs/network.md``.  ``FlowContention`` is what the simulator plugs in
(``--network flow``); ``dlsched net`` uses the same pieces on a list of placed jobs.
"""

from dlsched.network.contention import FlowContention
from dlsched.network.graph import Host, LinkGraph
from dlsched.network.lingjun import read_lingjun
from dlsched.network.paths import PathTable, ecmp_hash
from dlsched.network.topologies import clos, double_sided, from_cluster, tiered

__all__ = ["FlowContention", "Host", "LinkGraph", "PathTable", "clos", "double_sided", "ecmp_hash",
           "from_cluster", "read_lingjun", "tiered"]
