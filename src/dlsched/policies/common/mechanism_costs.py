"""What suspending, resuming and migrating a job cost, as Gandiva measured them (OSDI 2018, section 5).

Policies whose own paper measures these mechanisms pay them on top of the one
cost rule (``replan_costs``): the larger of the two, never less than the rule.
Gandiva and the time-slicing policy built from its mechanisms share these
figures; the defaults are the paper's (suspend + resume 0.1 s for the smallest
job to about 1 s for the largest; a migration 1 s to 3.5 s, a second more for a
checkpoint sent to another server).
"""

from __future__ import annotations

from dataclasses import dataclass

from dlsched.cluster.topology import Cluster
from dlsched.core.costs import state_gb
from dlsched.policies.base import Allocation, JobState


@dataclass(frozen=True)
class MeasuredMechanisms:
    suspend_min_s: float = 0.1
    suspend_max_s: float = 1.0
    suspend_s_per_gb: float = 0.4
    migrate_min_s: float = 1.0
    migrate_max_s: float = 3.5
    migrate_s_per_gb: float = 0.5
    migrate_inter_server_s: float = 1.0

    def suspend_resume_s(self, job: JobState) -> float:
        return min(self.suspend_max_s, self.suspend_min_s + self.suspend_s_per_gb * state_gb(job.spec))

    def migrate_s(self, cluster: Cluster, job: JobState, old: Allocation, new: Allocation) -> float:
        old_nodes = {int(cluster.gpu_node[g]) for g in old.gpus}
        new_nodes = {int(cluster.gpu_node[g]) for g in new.gpus}
        inter = self.migrate_inter_server_s if old_nodes != new_nodes else 0.0
        return min(self.migrate_max_s, self.migrate_min_s + self.migrate_s_per_gb * state_gb(job.spec) + inter)

    def seconds(self, cluster: Cluster, job: JobState, old: Allocation | None, new: Allocation,
                kind: str) -> float | None:
        """The mechanism's own time for a change, None where it measures none (the rule alone applies)."""
        if kind == "resume":
            return self.suspend_resume_s(job)
        if kind not in ("migrate", "resize") or old is None:
            return None
        if kind == "migrate" and job.policy_data.get("rotating"):
            return self.suspend_resume_s(job)  # a time-sliced job resumed on another GPU of its server
        return self.migrate_s(cluster, job, old, new)


def rule_or_mechanism(rule: float | None, own: float | None) -> float | None:
    """The larger of the rule's charge and the mechanism's measured time (either may be None)."""
    if rule is None:
        return own
    return rule if own is None else max(rule, own)
