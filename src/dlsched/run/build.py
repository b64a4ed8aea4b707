"""Builders: a ``RunSpec`` turned into the objects that run it.

Each builder is a plain function of the spec (and what an earlier builder made), so a caller
that needs only part of a run (the live service needs a cluster and a policy; a reproduction
its own jobs on the spec's cluster and perf model) takes only that part.  Everything a run
needs, in the order it must be checked, is ``prepare``: a bad policy name or option fails
before a trace is read, and a bad trace before the (possibly long) run.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dlsched.run.spec import EngineSpec, NetworkSpec, PolicySpec, RunSpec

if TYPE_CHECKING:  # the engine, cluster and perf models load on use: start-up stays cheap
    from dlsched.cluster.topology import Cluster
    from dlsched.sim.engine import SimConfig, Simulator


def build_cluster(spec: RunSpec) -> Cluster:
    """The topology alone: a shipped name, a YAML path or an inline spec (the placement mode is
    the run's, given to the engine, and never stored on the cluster)."""
    from dlsched.cluster.topology import Cluster

    name = spec.cluster.name
    if isinstance(name, dict):
        from dlsched.cluster.spec import ClusterSpec

        return Cluster(ClusterSpec.model_validate(name))
    return Cluster.load(name)


def build_policy(policy: PolicySpec):
    from dlsched.policies.registry import make_policy

    built = make_policy(policy.name, **policy.options)
    if policy.wake_every is None:
        return built
    from dlsched.run.wake import WakeEvery

    return WakeEvery(built, policy.wake_every)


def build_perf(spec: RunSpec, cluster: Cluster):
    from dlsched.perf.default import default_perf_model
    from dlsched.perf.measured.replay import with_throughputs

    from dlsched.errors import InputError

    if spec.perf.options:  # a plugin factory with keywords (checked by PerfSpec: not a built-in name)
        return with_throughputs(_perf_from_factory(spec, cluster), spec.perf.throughputs, policy=spec.policy.name)
    try:
        base = default_perf_model(cluster, spec.perf.model, tier_profile=spec.perf.tier_profile,
                                  perf_params=spec.perf.params)
    except InputError:
        raise
    except ValueError as e:  # an unknown model name: a mistake in what was given, not a crash
        raise InputError(str(e), field="perf.model") from None
    return with_throughputs(base, spec.perf.throughputs, policy=spec.policy.name)


def _perf_from_factory(spec: RunSpec, cluster: Cluster):
    from dlsched.errors import InputError
    from dlsched.perf.default import PERF

    factory = PERF.get(spec.perf.model)
    try:
        return factory(cluster, **spec.perf.options)
    except TypeError as e:  # a keyword the factory does not take
        raise InputError(f"perf model {spec.perf.model!r}: {e}", field="perf.options") from None


def sim_config(engine: EngineSpec, seed: int, record_events: bool = True) -> SimConfig:
    """``record_events``: keep the core's event log (about 4 objects a job), which only a timeline
    reads; no result depends on it, so it is the caller's choice, not the spec's."""
    from dlsched.sim.engine import SimConfig

    return SimConfig(seed=seed, debug=engine.debug, max_time=engine.max_time,
                     checkpoint_interval_s=engine.checkpoint_interval, start_overhead_s=engine.start_overhead,
                     restore_base_s=engine.restore_base, restore_s_per_gb=engine.restore_per_gb,
                     record_events=record_events, slice_quantum_s=engine.slice_quantum,
                     slice_switch_s=engine.slice_switch, slice_switch_s_per_gb=engine.slice_switch_per_gb,
                     slice_switch_max_s=engine.slice_switch_max)


def build_contention(network: NetworkSpec, seed: int, cluster: Cluster, links: str = "full"):
    """A fresh flow-contention model for one run, or None when jobs are priced alone (``links``: the
    flow model's link report, ``full`` or ``summary``; what links.csv holds, not what the run does)."""
    if not network.contended:
        return None
    from dlsched.comm.fabric import contention_for

    flow = contention_for(cluster, seed=seed, charge_self_collisions=network.charge_self_collisions, links=links)
    if network.comm is None:
        return flow
    from dlsched.comm import ScheduledContention, make_comm_policy
    from dlsched.errors import InputError

    try:
        policy = make_comm_policy(network.comm, network.comm_levels, network.comm_reserved, seed)
    except ValueError as e:
        raise InputError(f"--comm {network.comm} --comm-levels {network.comm_levels} --comm-reserved "
                         f"{network.comm_reserved}: {e}") from None
    return ScheduledContention(flow, policy)


@dataclass
class Prepared:
    """What runs share: one cluster, perf model and job list; each policy then gets a fresh
    simulator (``simulator``), as ``compare`` runs several on the same input."""

    spec: RunSpec
    cluster: object
    perf: object
    jobs: list
    info: dict  # where the jobs came from, what was skipped or grown: into summary.json's params

    def simulator(self, policy_spec: PolicySpec | None = None, policy=None, record_events: bool = True,
                  links: str = "full") -> Simulator:
        from dlsched.sim.engine import Simulator

        spec = self.spec
        policy = policy if policy is not None else build_policy(policy_spec or spec.policy)
        if hasattr(self.perf, "for_policy"):  # a replay whose rules depend on the policy (arena_replay.py)
            self.perf.for_policy((policy_spec or spec.policy).name)
        config = sim_config(spec.engine, spec.seed, record_events)
        return Simulator(self.cluster, policy, self.jobs, perf=self.perf, config=config,
                         contention=build_contention(spec.network, spec.seed, self.cluster, links),
                         placement=spec.cluster.placement)


@contextmanager
def data_dir(spec: RunSpec):
    """The spec's reference-data folder in effect (``--data``) while its run is built and run."""
    if spec.data is None:
        yield
        return
    from pathlib import Path

    from dlsched.shared_data import chosen, set_data_dir, shared_dir

    if not Path(spec.data).is_dir():  # moved, or another machine: say so rather than fail
        import sys

        print(f"dlsched: note: the run's data folder {spec.data} is not here; reading reference data "
              f"from {shared_dir()}", file=sys.stderr)
        yield
        return
    before = chosen()
    set_data_dir(spec.data)
    try:
        yield
    finally:
        set_data_dir(before)


def prepare(spec: RunSpec, cluster: Cluster | None = None, perf=None) -> Prepared:
    """``cluster``: the spec's cluster already built (runs that share one share its caches: the
    Cell estimator, shape indexes); ``perf``: the spec's perf model already built, likewise."""
    with data_dir(spec):
        return _prepare(spec, cluster, perf)


def _prepare(spec: RunSpec, cluster, perf) -> Prepared:
    from dlsched.run.jobs import load_jobs

    if cluster is None:
        cluster = build_cluster(spec)
    elif _shipped(spec.cluster.name) not in (None, cluster.name):
        from dlsched.errors import InputError

        raise InputError(f"the cluster given ({cluster.name}) is not the spec's ({spec.cluster.name})",
                         field="cluster.name")
    if perf is None:
        perf = build_perf(spec, cluster)
    jobs, info = load_jobs(spec.workload, spec.seed, cluster, perf)
    return Prepared(spec, cluster, perf, jobs, info)


def _shipped(name) -> str | None:
    from dlsched.cluster.shipped import shipped_name

    return None if isinstance(name, dict) else shipped_name(name)


def build_simulator(spec: RunSpec) -> tuple[Simulator, dict]:
    """One run's simulator and its jobs' info (the policy is checked before any job is read)."""
    policy = build_policy(spec.policy)
    prep = prepare(spec)
    return prep.simulator(policy=policy), prep.info
