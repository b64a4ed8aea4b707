"""The execution core both engines share: cluster state, decisions applied as actions, records.

- ``state.ExecutionCore``: free map, job states, queue; ``apply(decision, now) -> [Action]``
- ``actions.Action``: what an engine must carry out (plain data)
- ``costs``: classifying a change and its default cost
- ``events.CoreEvent``: the event log
- ``contention.Contention``: the network model's hook
- ``rounds.RoundTimer``: the policy's rounds
- ``records.job_record``: the one ``JobRecord`` builder
"""

from dlsched.core.actions import Action
from dlsched.core.contention import Contention
from dlsched.core.costs import EngineCosts
from dlsched.core.events import CoreEvent
from dlsched.core.rounds import RoundTimer
from dlsched.core.state import ExecutionCore

__all__ = ["Action", "Contention", "CoreEvent", "EngineCosts", "ExecutionCore", "RoundTimer"]
