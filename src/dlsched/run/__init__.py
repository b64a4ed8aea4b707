"""Assembling a run: its specification (``RunSpec``) and the builders that turn one into a simulator.

Every way of starting a simulation (``dlsched simulate`` and ``compare``, ``dlsched.simulate``,
experiment files, reproductions) describes it as a ``RunSpec`` and builds it here, so a run
described one way can be rerun any other way: ``summary.json`` keeps the spec under
``params.spec``.
"""

from dlsched.run.spec import (ClusterSpec, EngineSpec, NetworkSpec, PerfSpec, PolicySpec, RunSpec,
                              WorkloadSpec)

__all__ = ["ClusterSpec", "EngineSpec", "NetworkSpec", "PerfSpec", "PolicySpec", "RunSpec", "WorkloadSpec"]
