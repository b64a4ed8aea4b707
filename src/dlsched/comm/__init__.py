"""Communication policies: which path and strict-priority level each placed job's flows get.

- ``base``: the contract (``CommPolicy.assign(view) -> {job: Assignment(level, paths)}``)
- ``scheduled.ScheduledContention``: the core's contention hook, calling a policy on every change
- ``crux`` (with ``correction``, ``compression``, ``paths``) and the baselines ``ecmp``,
  ``sincronia``, ``varys``, ``taccl``, ``cassini``; ``registry`` names them
"""

from dlsched.comm.base import Assignment, CommFlow, CommJob, CommPolicy, CommView
from dlsched.comm.registry import COMM_POLICIES, make_comm_policy
from dlsched.comm.scheduled import ScheduledContention

__all__ = ["Assignment", "CommFlow", "CommJob", "CommPolicy", "CommView", "COMM_POLICIES",
           "make_comm_policy", "ScheduledContention"]
