"""The scheduler service: a policy driving real training segments on Ray.

One loop, every ``tick_s``:

1. take in due submissions and cancellations from the store;
2. poll the worker slots of every launched segment (progress, ready, finished,
   stopped, failed, or gone: a dead process shows as a new incarnation, a dead
   node as a node Ray reports not alive);
3. call the policy when something happened (arrival, completion, fault), at its
   round period, or at the wakeup it asked for;
4. apply the decision to the *logical* state at once through the execution
   core the simulator uses (``dlsched.core``: free map, job states, costs,
   accounting, records), and turn its actions into segment work;
5. actuate: a placed segment launches only when every GPU it needs is
   physically free (or, for a packed segment, holds only packed segments of
   its current co-tenants) and the job's previous segment has ended, so one
   GPU never runs two jobs unless they are packed on purpose, and one job
   never runs twice at once.  Time-sliced jobs take turns (``slicing.py``):
   each quantum the job whose turn ends is suspended at an iteration
   boundary and the next resumes from its checkpoint;
6. persist, sample the time series.

Start/resume/migrate/resize costs are therefore not modelled but paid: the
segment's ``ready_at`` is when its first iteration began.

Durability: every change is written to SQLite before or as it is acted on
(a segment is marked ``launching`` before its start is sent).  On start the
service rebuilds its state from the store and reconciles it with what the
slots report: segments still running are adopted, ones that finished while
it was away are finished, lost ones go back to the queue from their last
checkpoint, and any segment the store does not know as current is stopped.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from dlsched import defaults as D
from dlsched.core import Action, EngineCosts, ExecutionCore, RoundTimer
from dlsched.core.actions import MODE_FLIPS, PLACEMENTS
from dlsched.core.state import add_holder, gpu_share
from dlsched.errors import DlschedError
from dlsched.live.checkpoints import read_checkpoint_meta
from dlsched.live import models as _models  # noqa: F401  (zoo entries the perf model may price)
from dlsched.live.calibrated import MeasuredPerfModel
from dlsched.live.guards import GuardsMixin
from dlsched.live.private import private_file
from dlsched.live.jobfile import LiveJob
from dlsched.live.occupancy import PhysicalMap
from dlsched.live.raycluster import ClusterLayout, layout_from_ray
from dlsched.live.results import job_state, write_live_results
from dlsched.live.slicing import TurnKeeper
from dlsched.live.store import Store
from dlsched.policies.base import Allocation, Decision, JobPolicy, JobState


class ServiceError(DlschedError):
    pass


_START_WAIT_S = 30.0  # how long a launch waits for every slot to accept its rank
_PORT_HOLD_S = 120.0  # a rendezvous port handed out is not handed out again for this long


@dataclass
class ServiceConfig:
    tick_s: float = 0.2
    stop_timeout_s: float = 20.0  # a segment told to stop that has not ended by then is killed
    launch_timeout_s: float = 90.0  # a launched segment with no first iteration by then has failed
    node_check_s: float = 1.0
    collective_timeout_s: float = 30.0  # gloo timeout: how long a rank waits for a dead peer
    exit_when_done: bool = False  # leave once every submitted job has finished or been dropped
    idle_exit_s: float = 1.0
    out_dir: str | None = None  # write jobs.csv / series.csv / summary.json here
    max_time_s: float | None = None  # give up (jobs unfinished) after this long on the scheduler clock
    stop_workers_on_exit: bool = True  # with exit_when_done: free the Ray GPUs the slots hold
    namespace: str | None = None  # Ray namespace of the worker slots; default: one per state directory
    # a job whose runs fail this many times in a row without a new checkpoint is marked failed
    # (so a script that crashes at once runs max_restarts + 1 times, not forever)
    max_restarts: int = 3
    restart_backoff_s: float = 2.0  # wait before the n-th restart in a row: this x 2^(n-1), at most 60 s
    sample_s: float = 1.0  # the series' throughput is measured over windows of about this long
    heartbeat_s: float = 1.0  # how often the service writes its heartbeat to the store
    # time-sliced jobs take turns by this quantum; None: half the policy's ``quantum_s`` (so
    # Gandiva's profiling window spans a turn of each of two jobs), else the engine default
    slice_quantum_s: float | None = None
    comm: str | None = None  # communication policy to ask and record (live/comm_record.py); None: none
    comm_levels: int = 8
    comm_reserved: int = 2
    # a running segment whose rank 0 counts no iteration for this long is stalled: its GPUs are freed and
    # the job retried within max_restarts.  None: sized to the job's own measured iteration time
    # (stall_factor x, at least stall_min_s), so a slow job is not mistaken for a stuck one
    stall_timeout_s: float | None = None
    stall_factor: float = 20.0
    stall_min_s: float = 60.0


_RESTART_GRACE_S = 120.0  # a killed worker process gets this long to come back before it is killed again


@dataclass
class Segment:
    """One stretch of a job on a fixed set of GPUs."""

    job_id: str
    number: int
    gpus: tuple[int, ...]
    kind: str  # start | resume | migrate | resize | replan | slice-resume (a time-sliced job's turn)
    placed_at: float
    state: str = "waiting"  # waiting | launching | running | stopping (then ended)
    launched_at: float | None = None
    ready_at: float | None = None
    stop_sent_at: float | None = None
    iter_start: int = 0
    not_before: float = 0.0  # a re-planning cost the policy charged holds the launch until then
    killed_at: float | None = None  # when its hung worker processes were last restarted
    progress_at: float | None = None  # when rank 0's iteration count last moved (the watchdog's clock)
    progress_iter: float = -1.0
    outcomes: dict = field(default_factory=dict)  # rank -> finished|stopped|failed|lost once it ended
    rank0: dict | None = None  # rank 0's last status reply (progress, times)
    mode: str = "exclusive"  # the allocation's sharing mode: exclusive | packed | sliced
    launch: str | None = None  # this launch's token: a stop bars only the start it was meant for


def _lock(state_dir: Path):
    """One service per state directory: an flock that the kernel drops if the process dies."""
    f = open(private_file(state_dir / "serve.lock"), "w")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.close()
        raise ServiceError(f"another `dlsched serve` is running on {state_dir}") from None
    f.write(str(os.getpid()))
    f.flush()
    return f


class LiveService(GuardsMixin):
    def __init__(self, store: Store, policy: JobPolicy, config: ServiceConfig | None = None):
        import ray

        if not ray.is_initialized():
            raise ServiceError("connect to Ray first (dlsched.live.service.connect)")
        self.ray = ray
        self.store = store
        self.policy = policy
        self.cfg = config or ServiceConfig()
        self._lockfile = _lock(store.dir)
        ns = store.get_meta("namespace")
        if ns is None:
            ns = self.cfg.namespace or f"dlsched-{os.urandom(4).hex()}"
            store.set_meta("namespace", ns)
        self.namespace = ns
        layout_text = store.get_meta("layout")
        if layout_text is None:
            self.layout = layout_from_ray(ray.nodes())
            store.set_meta("layout", self.layout.to_json())
        else:  # the GPU ids the store refers to must keep their meaning across restarts
            self.layout = ClusterLayout.from_json(layout_text)
            if not {n.node_id for n in self.layout.nodes} & self._alive_nodes():
                self._replace_layout()
        old_policy = store.get_meta("policy")
        store.set_meta("policy", policy.name)
        self._init_state(self.layout.cluster())
        self._init_guards()
        if old_policy and old_policy != policy.name:
            store.event(store.now(), None, "policy-change", old=old_policy, new=policy.name)
        self._start_slots()
        self._recover()

    def _init_state(self, cluster) -> None:
        """The scheduler's in-memory state: the execution core and what the actuation tracks.

        Separate from Ray and the slots, so a test can drive the decision path
        with a fake agent layer.
        """
        self.cluster = cluster
        self.perf = MeasuredPerfModel(cluster)
        policy = self.policy
        # the execution core the simulator uses: same diff, costs, accounting and records; progress
        # is what the workers report (not fluid), and costs are paid for real, not modelled
        quantum = self.cfg.slice_quantum_s
        if quantum is None:
            quantum = policy.quantum_s / 2 if hasattr(policy, "quantum_s") else D.SLICE_QUANTUM_S
        self.turns = TurnKeeper(float(quantum))
        self.store.set_meta("slice_quantum_s", repr(float(quantum)))  # the fidelity check simulates it
        self.core = ExecutionCore(self.cluster, policy, self.perf, EngineCosts(slice_quantum_s=float(quantum)),
                                  fluid=False, error=ServiceError)
        self.free = self.core.free
        self.jobs: dict[str, JobState] = self.core.jobs
        self.rounds = RoundTimer(policy.period)
        self.comm = None
        if self.cfg.comm:  # asked on every start, stop and move; recorded, never programmed
            from dlsched.live.comm_record import CommRecorder
            self.comm = CommRecorder(cluster, self.cfg.comm, self.cfg.comm_levels, self.cfg.comm_reserved)
        self.live: dict[str, LiveJob] = {}
        self.segs: dict[str, Segment] = {}  # job -> its current segment (while placed)
        self.ending: dict[tuple[str, int], Segment] = {}  # segments told to stop / failed, still on GPUs
        self.phys = PhysicalMap()  # GPU id -> segments whose processes run there
        self.lost: set[int] = set()
        self.unready: set[int] = set()  # slots restarting after their process died: not launchable yet
        self.slots: dict[int, object] = {}
        self.incarnation: dict[int, str] = {}
        self.node_ip: dict[str, str] = {}
        self._wakeup: float | None = None
        self._dirty = True
        self._last_node_check = -math.inf
        self._idle_since: float | None = None
        self._restore_times: list[float] = []
        self._ports_given: dict[int, float] = {}  # rendezvous port -> when handed out (monotonic)

    # ================================================================== startup

    def _alive_nodes(self) -> set[str]:
        return {n["NodeID"] for n in self.ray.nodes() if n.get("Alive")}

    def _replace_layout(self) -> None:
        """None of the stored nodes is alive: the cluster was replaced (e.g. a new emulated one).

        Jobs that ran on the old cluster go back to the queue from their last
        checkpoint, as after a node loss, and the new cluster's layout is used
        from now on (GPU ids in the history keep their old meaning).
        """
        st = self.store
        now = st.now()
        # the old cluster went down with the service (an emulated one dies with its process): its jobs
        # stopped holding GPUs at the service's last heartbeat, not now, so the downtime is not run time
        beat = st.heartbeat()
        down_at = min(now, beat["wall"] - st.epoch) if beat else now
        layout = layout_from_ray(self.ray.nodes())
        with st.tx():
            rows = st.jobs("running")
            allocs = {row["job_id"]: Allocation.of(json.loads(row["allocation"]) if row["allocation"] else [],
                                                   mode=row["mode"]) for row in rows}
            holders: dict[int, set[str]] = {}  # a shared GPU's time is split between its holders
            for jid, alloc in allocs.items():
                add_holder(holders, jid, alloc)
            for row in rows:
                jid = row["job_id"]
                meta = read_checkpoint_meta(self._ckpt_dir(jid))
                done = float(meta["iteration"]) if meta else 0.0
                held = row["held_since"]
                if meta is not None and done >= row["total_iterations"]:
                    # its last iteration and final checkpoint came before the crash: it finished
                    end = min(down_at, max(held or 0.0, meta.get("time", 0.0) - st.epoch))
                    ran = max(0.0, end - held) if held is not None else 0.0
                    st.update_job(jid, status="finished", allocation=None, held_since=None, done_iterations=done,
                                  finish_time=end, run_time=row["run_time"] + ran,
                                  gpu_seconds=row["gpu_seconds"] + ran * gpu_share(allocs[jid], holders))
                    st.db.execute("UPDATE segments SET state='finished', ended_at=?, iter_end=? "
                                  "WHERE job_id=? AND ended_at IS NULL", (end, int(done), jid))
                    st.event(now, jid, "finish", segment=row["segment"], finish=end, recovered=True)
                    continue
                ran = max(0.0, down_at - held) if held is not None else 0.0
                st.update_job(jid, status="suspended", allocation=None, held_since=None, done_iterations=done,
                              restarts=row["restarts"] + 1, queued_since=now, run_time=row["run_time"] + ran,
                              gpu_seconds=row["gpu_seconds"] + ran * gpu_share(allocs[jid], holders))
                st.db.execute("UPDATE segments SET state=CASE WHEN launched_at IS NULL THEN 'abandoned' ELSE 'lost' END, "
                              "ended_at=? WHERE job_id=? AND ended_at IS NULL",
                              (now, jid))
                st.event(now, jid, "fault", reason="cluster replaced", resume_from=done)
            st.set_meta("layout", layout.to_json())
            st.event(now, None, "layout-change", old_nodes=len(self.layout.nodes), nodes=len(layout.nodes),
                     gpus=len(layout.slots))
        self.layout = layout

    def _start_slots(self) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from dlsched.live.worker import slot_actor_class

        alive = self._alive_nodes()
        cls = slot_actor_class()
        for n in self.layout.nodes:
            self.node_ip[n.node_id] = n.address
        for g, (node_id, local) in enumerate(self.layout.slots):
            if node_id not in alive:
                self.lost.add(g)
                continue
            name = f"gpu-{node_id[:16]}-{local}"  # by node, so a slot keeps its meaning across layouts
            try:
                self.slots[g] = self.ray.get_actor(name, namespace=self.namespace)
            except ValueError:
                self.slots[g] = cls.options(
                    name=name, namespace=self.namespace, lifetime="detached", get_if_exists=True,
                    scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False)).remote(g)
        refs = {g: a.hello.remote() for g, a in self.slots.items()}
        ready, _ = self.ray.wait(list(refs.values()), num_returns=len(refs), timeout=180)
        if len(ready) < len(refs):
            raise ServiceError("Ray could not start a worker on every GPU within 180 s (are the GPUs "
                               "held by another dlsched service or other Ray work?)")
        for g, ref in refs.items():
            self.incarnation[g] = self.ray.get(ref)["incarnation"]

    def _recover(self) -> None:
        """Rebuild state from the store and reconcile it with what the slots run."""
        st = self.store
        now = st.now()
        statuses = self._all_status()
        adopted: set[tuple[str, int]] = set()
        for row in st.jobs("pending", "running", "suspended"):
            live = LiveJob.from_json(row["body"], row["arrival"])
            job = job_state(live, row)
            self.core.adopt(job)
            self.live[job.job_id] = live
            if row["status"] != "running":
                continue
            gpus = job.allocation.gpus
            seg_row = next(s for s in st.segments(job.job_id) if s["segment"] == row["segment"])
            seg = Segment(job.job_id, row["segment"], gpus, seg_row["kind"], seg_row["placed_at"],
                          iter_start=seg_row["iter_start"] or 0, launched_at=seg_row["launched_at"],
                          ready_at=seg_row["ready_at"], mode=job.allocation.mode)
            self.segs[job.job_id] = seg
            if seg_row["state"] == "waiting" and not any(g in self.lost for g in gpus):
                continue  # never launched: actuate will launch it
            seen = [_record(statuses.get(g), seg) or {} for g in gpus]
            mine = [s for s in seen if s]
            if len(mine) == len(gpus) and all(s["state"] in ("running", "finished") for s in mine):
                seg.state = "running" if seg.ready_at is not None else "launching"
                for g in gpus:
                    self.phys.add(g, seg)
                adopted.add((job.job_id, seg.number))
                st.event(now, job.job_id, "adopt", segment=seg.number)
            else:  # launched before the crash and gone (or partly gone) since: back to the queue
                seg.state = "launching"
                for g, s in zip(gpus, seen):
                    if s.get("state") == "running":
                        self.phys.add(g, seg)
                meta = read_checkpoint_meta(self._ckpt_dir(job.job_id))
                if meta is not None and meta["iteration"] >= job.total_iterations:
                    # it reached its last iteration and final checkpoint before going: finished, not a fault
                    job.done_iterations = float(job.total_iterations)
                    self._finish(job, seg, {"end_wall": meta.get("time"), "iterations": job.total_iterations}, now)
                    continue
                self._fault(job, now, "lost while the scheduler was down")
        # anything still running that is not an adopted current segment must stop
        for g, s in statuses.items():
            for rec in s.get("segments", ()):
                if (rec["job_id"], rec["segment"]) not in adopted:
                    self._adopt_orphan(g, rec, now)
        for g in sorted(self.lost):
            self.free.allocate([g])  # a GPU on a dead node is held forever by "nobody"
        self.policy.reset()
        for job in self.jobs.values():
            self.policy.on_submit(job, now)
        st.event(now, None, "service-start", policy=self.policy.name, gpus=self.cluster.num_gpus,
                 active=len(self.jobs),
                 adopted=len(adopted), lost_gpus=len(self.lost))

    def _adopt_orphan(self, g: int, status: dict, now: float) -> None:
        """A slot runs a segment no job owns now: stop it and keep its GPU busy until it ends.

        ``status`` is one of the slot's segment records.
        """
        if status.get("state") != "running":
            return
        key = (status["job_id"], status["segment"])
        if any((s.job_id, s.number) == key for s in self.phys.on(g)):
            return  # already known to run here
        seg = self.ending.get(key)
        if seg is None:
            seg = Segment(key[0], key[1], (), "orphan", now, state="stopping")
            self.ending[key] = seg
        seg.gpus = tuple(sorted({*seg.gpus, g}))
        self.phys.add(g, seg)
        self.slots[g].stop.remote(*key)
        seg.stop_sent_at = now
        self.store.event(now, key[0], "stop-orphan", segment=key[1], gpu=g)

    # ================================================================== the loop

    def run(self) -> int:
        """Serve until stopped (KeyboardInterrupt / SIGTERM) or, with exit_when_done, until idle."""
        cfg = self.cfg
        try:
            while True:
                t0 = time.monotonic()
                if self.step():
                    break
                time.sleep(max(0.0, cfg.tick_s - (time.monotonic() - t0)))
        finally:
            self.close(kill_workers=cfg.exit_when_done and cfg.stop_workers_on_exit
                       and not self.jobs and not self._held)
        return 0

    def step(self) -> bool:
        """One tick; True when the service should leave."""
        cfg = self.cfg
        now = self.store.now()
        if self._run_start is None:
            self._run_start = now
        self._heartbeat(now)
        self._ingest(now)
        if now - self._last_node_check >= cfg.node_check_s:
            self._last_node_check = now
            self._check_nodes(now)
        self._poll(now)
        self._maybe_schedule(now)
        self._actuate(now)
        self._sample(now)
        if cfg.max_time_s is not None and now - self._run_start >= cfg.max_time_s:
            return True  # counted from this run's start, not from when the state was made
        if cfg.exit_when_done:
            due = self.store.db.execute("SELECT COUNT(*) FROM jobs WHERE status='submitted'").fetchone()[0]
            if not self.jobs and not self._held and not due and not self.ending:
                self._idle_since = self._idle_since if self._idle_since is not None else now
                return now - self._idle_since >= cfg.idle_exit_s
            self._idle_since = None
        return False

    def close(self, kill_workers: bool = False) -> None:
        if self._lockfile is not None:
            self._flush_series(self.store.now())
            self.store.beat(os.getpid(), stopped=True)
        if self.cfg.out_dir:
            self.write_results(self.cfg.out_dir)
        if kill_workers:
            for a in self.slots.values():
                self.ray.kill(a, no_restart=True)
            self.store.event(self.store.now(), None, "workers-stopped")
        if self._lockfile is not None:
            self._lockfile.close()
            self._lockfile = None

    def write_results(self, out_dir) -> Path:
        params = {"cluster": self.cluster.name, **self.policy.describe(), **self.perf.describe(),
                  "jobs": len(self.store.jobs()), "mean_restore_s": self.mean_restore()}
        if self.comm is not None:
            params["comm"] = self.comm.name
        written = write_live_results(self.store, out_dir, params, self.cluster.num_gpus)
        if self.comm is not None:
            from dlsched.live.comm_record import write_comm_csv
            write_comm_csv(self.store, out_dir)
        return written

    def mean_restore(self) -> float | None:
        return sum(self._restore_times) / len(self._restore_times) if self._restore_times else None

    # ================================================================== 1. submissions

    def _ingest(self, now: float) -> None:
        st = self.store
        wall = time.time()
        self._release_held(now)
        for row in st.jobs("submitted"):
            live0 = LiveJob.from_json(row["body"], 0.0)
            if wall < row["submitted_wall"] + live0.delay_s:
                continue
            arrival = row["submitted_wall"] + live0.delay_s - st.epoch
            live = LiveJob.from_json(row["body"], arrival)
            if self._hold_unschedulable(live, arrival, now):
                continue
            job = JobState(live.spec, live.spec.total_iterations, updated_at=now, queued_since=arrival)
            self.live[job.job_id] = live
            with st.tx():
                st.update_job(job.job_id, status="pending", arrival=arrival, queued_since=arrival)
                st.event(now, job.job_id, "submit", arrival=arrival)
            self.core.submit(job, now)
            self._dirty = True
        for row in st.db.execute("SELECT job_id, status FROM jobs WHERE cancel_requested=1 AND status IN "
                                 "('submitted','pending','running','suspended')").fetchall():
            jid = row[0]
            if row[1] == "submitted":
                st.update_job(jid, status="dropped", reason="cancelled by user", cancel_requested=0)
                continue
            if jid in self._held:  # waiting out a restart backoff: back in view, then dropped as usual
                self._unhold(jid, now)
            with st.tx():
                self._drop(self.jobs[jid], now, "cancelled by user")
                st.update_job(jid, cancel_requested=0)
            self._dirty = True

    # ================================================================== 2. polling

    def _all_status(self) -> dict[int, dict]:
        refs = {g: a.status.remote() for g, a in self.slots.items() if g not in self.lost}
        return self._collect(refs, timeout=30.0)

    def _collect(self, refs: dict, timeout: float) -> dict[int, dict]:
        """Replies by GPU; a dead actor answers {'dead': True}; a slow one is left out."""
        if not refs:
            return {}
        ready, _ = self.ray.wait(list(refs.values()), num_returns=len(refs), timeout=timeout)
        ready = set(ready)
        out = {}
        for g, ref in refs.items():
            if ref not in ready:
                continue
            try:
                out[g] = self.ray.get(ref)
            except self.ray.exceptions.RayError:  # died, restarting, or its node is gone
                out[g] = {"dead": True}
        return out

    def _poll(self, now: float) -> None:
        launched = [s for s in self.segs.values() if s.state in ("launching", "running")]
        launched += list(self.ending.values())
        refs = {}
        for seg in launched:
            for g in seg.gpus:
                if g not in self.lost and self.phys.holds(g, seg):
                    refs[g] = self.slots[g].status.remote()
        for g in self.unready - self.lost:
            refs.setdefault(g, self.slots[g].status.remote())
        # short: a worker stuck in native code must not stall the loop (stop_timeout_s deals with it)
        replies = self._collect(refs, timeout=1.0)
        for seg in launched:
            self._poll_segment(seg, replies, now)
        for g in sorted(self.unready):
            r = replies.get(g)
            if g in self.lost:
                self.unready.discard(g)
            elif r is not None and not r.get("dead") and g not in self.phys:
                self.unready.discard(g)  # back, as a fresh process
                self.incarnation[g] = r["incarnation"]
                for rec in r.get("segments", ()):
                    self._adopt_orphan(g, rec, now)

    def _rank_gone(self, g: int, reply: dict, seg: Segment) -> str | None:
        """Why this rank no longer runs the segment ('finished', 'stopped', 'failed', 'lost'), or None."""
        if reply.get("dead"):
            self.unready.add(g)
            return "lost"
        if reply["incarnation"] != self.incarnation.get(g):
            self.incarnation[g] = reply["incarnation"]
            return "lost"
        rec = _record(reply, seg)
        if rec is None:
            return "lost"
        if rec["state"] == "running":
            return None
        return rec["state"]

    def _poll_segment(self, seg: Segment, replies: dict, now: float) -> None:
        st = self.store
        for rank, g in enumerate(seg.gpus):
            if rank in seg.outcomes:
                continue
            if g in self.lost:
                seg.outcomes[rank] = "lost"
                continue
            reply = replies.get(g)
            if reply is None or not self.phys.holds(g, seg):
                continue
            why = self._rank_gone(g, reply, seg)
            rec = _record(reply, seg) or {}
            if rank == 0 and not reply.get("dead") and why != "lost":
                seg.rank0 = rec
                self._count_progress(seg, rec)
            if why is not None:
                seg.outcomes[rank] = why
                self.phys.remove(g, seg)
                if why == "failed" and rec.get("error"):
                    st.event(now, seg.job_id, "worker-error", segment=seg.number, gpu=g, error=rec["error"])
        outcomes = [seg.outcomes.get(r) for r in range(len(seg.gpus))]
        current = self.segs.get(seg.job_id) is seg
        job = self.jobs.get(seg.job_id)
        rank0 = seg.rank0
        if current and job is not None and rank0 is not None and outcomes[0] in (None, "finished"):
            self._progress(job, seg, rank0, now)
        if rank0 is not None and rank0.get("checkpoint_iteration"):
            st.checkpoint_seen(seg.job_id, int(rank0["checkpoint_iteration"]), seg.number, now)
        bad = [o for o in outcomes if o in ("failed", "lost")]
        if current and job is not None:
            if bad:
                self._fault(job, now, f"worker {'process or node lost' if 'lost' in bad else 'failed'}")
            elif all(o == "finished" for o in outcomes):
                self._finish(job, seg, rank0, now)
            elif all(o is not None for o in outcomes):  # stopped without being asked
                self._fault(job, now, "segment stopped unexpectedly")
            elif seg.state == "launching" and seg.launched_at is not None \
                    and now - seg.launched_at > self.cfg.launch_timeout_s:
                self._fault(job, now, "no first iteration within the launch timeout")
            elif (stalled := self._stalled(seg, job, now)) is not None:
                self._fault(job, now, f"stalled: no iteration for {stalled:.0f} s")
            return
        if not any(self.phys.holds(g, seg) for g in seg.gpus):
            decided = [o for o in outcomes if o]
            outcome = ("failed" if bad else decided[0]) if decided else "ended"
            self._end_segment(seg, now, outcome, rank0)
        elif seg.stop_sent_at is not None and now - seg.stop_sent_at > self.cfg.stop_timeout_s \
                and (seg.killed_at is None or now - seg.killed_at > _RESTART_GRACE_S):
            for g in seg.gpus:  # hung (e.g. waiting on a dead peer): restart the worker process
                if self.phys.holds(g, seg):
                    self.ray.kill(self.slots[g], no_restart=False)
                    self.unready.add(g)
            # once: a restarting worker answers no poll for seconds, and killing it again then
            # restarts it again, so it never comes back and the GPU stays held
            seg.killed_at = now
            st.event(now, seg.job_id, "kill-hung", segment=seg.number)

    def _stalled(self, seg: Segment, job: JobState, now: float) -> float | None:
        """Seconds since rank 0 last counted an iteration, if past the watchdog's limit; else None."""
        counted = (seg.rank0 or {}).get("iterations")
        if seg.state != "running" or counted is None:
            return None
        if counted != seg.progress_iter or seg.progress_at is None:
            seg.progress_iter, seg.progress_at = counted, now
            return None
        limit = self.cfg.stall_timeout_s
        if limit is None:
            per_iter = 1.0 / job.rate if job.rate > 0 else 0.0
            limit = max(self.cfg.stall_min_s, self.cfg.stall_factor * per_iter)
        quiet = now - seg.progress_at
        return quiet if quiet > limit else None

    def _progress(self, job: JobState, seg: Segment, r: dict, now: float) -> None:
        st = self.store
        if seg.state == "launching" and r.get("ready_wall"):
            seg.state = "running"
            seg.ready_at = min(now, r["ready_wall"] - st.epoch)
            if seg.kind != "slice-resume":
                job.ready_at = seg.ready_at
            if seg.kind != "start":
                self._restore_times.append(seg.ready_at - seg.placed_at)
            st.put_segment(job.job_id, seg.number, state="running", ready_at=seg.ready_at)
            self.core.ready(job, seg.ready_at)
            st.event(now, job.job_id, "ready", segment=seg.number, how=seg.kind,
                     overhead=seg.ready_at - seg.placed_at)
        done = float(r.get("iterations", job.done_iterations))
        rate = 1.0 / r["iter_time"] if r.get("iter_time") else job.rate
        if done != job.done_iterations or rate != job.rate:
            self.core.settle(job, now)
            job.done_iterations = min(done, float(job.total_iterations))
            job.rate = rate
            st.progress_sample(job.job_id, now, job.done_iterations, rate)
            st.update_job(job.job_id, done_iterations=job.done_iterations)

    # ================================================================== 3. nodes

    def _check_nodes(self, now: float) -> None:
        alive = self._alive_nodes()
        newly = [g for g, (node, _) in enumerate(self.layout.slots) if g not in self.lost and node not in alive]
        if not newly:
            return
        nodes = sorted({self.layout.slots[g][0] for g in newly})
        self.store.event(now, None, "node-lost", nodes=[n[:12] for n in nodes], gpus=newly)
        self.lost.update(newly)
        for g in newly:
            self.phys.clear(g)
            self.unready.discard(g)
        for job in list(self.jobs.values()):
            if job.allocation is not None and set(job.allocation.gpus) & set(newly):
                self._fault(job, now, "node lost")
        for key, seg in list(self.ending.items()):
            if not any(self.phys.holds(g, seg) for g in seg.gpus):
                self._end_segment(seg, now, "lost", None)
        self.free.allocate(newly)
        self._dirty = True

    # ================================================================== 4. scheduling

    def _maybe_schedule(self, now: float) -> None:
        p = self.policy
        due = self.rounds.fire(now)
        self.rounds.arm(now)
        if self._wakeup is not None and now >= self._wakeup:
            due = True
            self._wakeup = None
        if not (due or (self._dirty and p.schedule_on_events)):
            return
        self._dirty = False
        if not self.jobs:
            return
        self.core.view.now = now
        decision = p.schedule(self.core.view, now)
        self._apply(decision, now)

    def _apply(self, d: Decision, now: float) -> None:
        """The core applies the decision to the logical state; each action becomes segment work."""
        if d.wakeup is not None and d.wakeup > now:
            self._wakeup = d.wakeup if self._wakeup is None else min(self._wakeup, d.wakeup)
        if not d:
            return
        before = dict(self.jobs)  # dropped jobs leave the core's active set
        for a in self.core.apply(d, now):
            job = before[a.job_id]
            if a.kind == "drop":
                self._carry_out_drop(job, now, a.detail)
            elif a.kind == "suspend":
                with self.store.tx():  # the segment's stop and the job's suspension land together
                    self._retire_segment(job, now, "preempted")
                    self._persist(job, now, status="suspended", allocation=None, held_since=None)
                    self.store.event(now, job.job_id, "suspend", iterations=job.done_iterations)
            elif a.kind in PLACEMENTS:
                if a.old_gpus:
                    self._retire_segment(job, now, "moved")
                self._place(job, a, now)
            elif a.kind in MODE_FLIPS:
                self._flip(job, a, now)
            # "rate": live rates are measured, not priced

    def _flip(self, job: JobState, a: Action, now: float) -> None:
        """Same GPUs, new sharing mode (pack, unpack, slice-in, slice-out): the segment carries on.

        The slots hear of it before anything else launches there, so a packed
        newcomer is accepted beside it only once it is packed too.  Whether a
        time-sliced job runs now is the turn keeper's call (``_take_turns``).
        """
        seg = self.segs.get(job.job_id)
        if seg is None:
            return
        seg.mode = job.allocation.mode
        # a segment that ran in two modes measured neither: its iteration time is not a perf figure
        self.store.put_segment(job.job_id, seg.number, mode=seg.mode if seg.state == "waiting" else "mixed")
        if seg.state in ("launching", "running"):
            refs = [self.slots[g].set_mode.remote(job.job_id, seg.number, seg.mode)
                    for g in seg.gpus if self.phys.holds(g, seg)]
            self._collect(dict(enumerate(refs)), timeout=10.0)
        self.store.update_job(job.job_id, mode=seg.mode)
        self.store.event(now, job.job_id, a.kind, segment=seg.number, gpus=list(a.gpus), mode=seg.mode)

    def _take_turns(self, now: float) -> None:
        """Time-sliced jobs alternate on their GPUs: suspend those whose turn ended, queue the others'.

        A job off turn has its running segment stopped at an iteration boundary
        (with a checkpoint) and a new segment waiting; ``_actuate`` launches
        that one when its turn comes and the GPUs are free, restoring from the
        checkpoint.  The job stays placed all along: to the policy and the core
        it runs, time-sliced, as in the simulator.
        """
        sliced = {jid: seg.gpus for jid, seg in self.segs.items() if seg.mode == "sliced"}
        if not sliced and not self.turns.began:
            return
        order = {jid: (self.jobs[jid].spec.submit_time,) for jid in sliced if jid in self.jobs}
        on_turn = self.turns.update(sliced, order, now)
        for jid in sorted(set(sliced) - on_turn):
            seg = self.segs[jid]
            if seg.state not in ("launching", "running"):
                continue
            job = self.jobs[jid]
            self.core.settle(job, now)
            job.rate = 0.0  # off turn it makes no progress (the view must not extrapolate any)
            with self.store.tx():
                self._retire_segment(job, now, "turn over")
                self._new_segment(job, seg.gpus, "slice-resume", now, mode="sliced")
                self.store.event(now, jid, "slice-suspend", segment=seg.number,
                                 iterations=job.done_iterations)

    def _retire_segment(self, job: JobState, now: float, why: str) -> None:
        """The job's current segment stops being current: tell its workers to stop."""
        seg = self.segs.pop(job.job_id, None)
        if seg is None:
            return
        if self.comm is not None:
            self.comm.removed(self.store, now, job.job_id)
        if seg.state == "waiting":  # never launched: nothing to stop
            self.store.put_segment(job.job_id, seg.number, state="abandoned", ended_at=now)
            return
        seg.state = "stopping"
        seg.stop_sent_at = now
        self.ending[(seg.job_id, seg.number)] = seg
        for g in seg.gpus:
            if self.phys.holds(g, seg):
                self.slots[g].stop.remote(seg.job_id, seg.number, seg.launch)
        self.store.put_segment(job.job_id, seg.number, state="stopping")
        self.store.event(now, job.job_id, "stop", segment=seg.number, why=why)

    def _fault(self, job: JobState, now: float, reason: str) -> None:
        """A worker or node was lost: back to the queue from the last checkpoint."""
        with self.store.tx():
            self.core.suspend(job, now)
            self._retire_segment(job, now, "fault")
            meta = read_checkpoint_meta(self._ckpt_dir(job.job_id))
            job.done_iterations = float(meta["iteration"]) if meta else 0.0
            self._persist(job, now, status="suspended", allocation=None, held_since=None)
            self.store.event(now, job.job_id, "fault", reason=reason, resume_from=job.done_iterations)
        self._dirty = True
        self._after_fault(job, now, reason)  # restart limit and backoff

    def _drop(self, job: JobState, now: float, reason: str) -> None:
        """Remove a job for good outside a decision (a user's cancellation)."""
        self.core.drop(job, now, reason)
        self._carry_out_drop(job, now, reason)

    def _carry_out_drop(self, job: JobState, now: float, reason: str) -> None:
        with self.store.tx():
            self._retire_segment(job, now, "dropped")
            self._persist(job, now, status="dropped", allocation=None, held_since=None, reason=reason)
            self.store.event(now, job.job_id, "drop", reason=reason)

    def _finish(self, job: JobState, seg: Segment, rank0: dict | None, now: float) -> None:
        end = now
        if rank0 and rank0.get("end_wall"):
            end = min(now, max(seg.ready_at or 0.0, rank0["end_wall"] - self.store.epoch))
        with self.store.tx():  # never a finished segment of a job still marked running
            self.core.finish(job, end)
            self.segs.pop(job.job_id, None)
            self._end_segment(seg, now, "finished", rank0)
            self._persist(job, now, status="finished", allocation=None, held_since=None, finish_time=end)
            self.store.event(now, job.job_id, "finish", segment=seg.number, finish=end)
            if self.comm is not None:
                self.comm.removed(self.store, now, job.job_id)
        self._dirty = True
        if self.cfg.out_dir:
            self.write_results(self.cfg.out_dir)

    def _place(self, job: JobState, a: Action, now: float) -> None:
        """A new segment for a job the core placed; it launches once its GPUs are physically free.

        A cost the policy charged (Crius's re-planning time) holds the launch
        back that long, as the simulator holds back progress; the engine's
        default restore cost is not added: live pays the real one.
        """
        # a policy's own cost (Crius's re-planning) is held; one that only models the mechanisms live
        # carries out for real (Gandiva's suspend/resume and migration times) would be paid twice
        modelled = getattr(self.policy, "overhead_models_mechanisms", False)
        hold = a.cost_s if a.by_policy and not modelled else 0.0
        mode = job.allocation.mode
        with self.store.tx():
            number = self._new_segment(job, a.gpus, a.kind, now, hold=hold, mode=mode)
            self._persist(job, now, status="running", allocation=a.gpus, mode=mode, segment=number,
                          held_since=now)
            self.store.event(now, job.job_id, a.kind, segment=number, gpus=list(a.gpus), cost_s=a.cost_s,
                             **({"mode": mode} if mode != "exclusive" else {}),
                             **({"from": list(a.old_gpus)} if a.old_gpus else {}))
            if self.comm is not None:
                self.comm.placed(self.store, now, job.spec, a.gpus)

    def _new_segment(self, job: JobState, gpus: tuple[int, ...], kind: str, now: float, *, hold: float = 0.0,
                     mode: str = "exclusive") -> int:
        """A waiting segment becomes the job's current one; returns its number."""
        number = self._next_segment_number(job.job_id)
        self.segs[job.job_id] = Segment(job.job_id, number, gpus, kind, now, not_before=now + hold, mode=mode)
        if kind != "slice-resume":
            # until the first iteration is seen, the rate is the measured perf model's (set by the core).
            # A time-sliced job's turns leave ready_at alone: to the policy (and in the simulator) it
            # runs from its placement on, its turns and their switches showing in its measured rate
            job.ready_at = now + hold + (self.mean_restore() or 1.0)
        self.store.put_segment(job.job_id, number, kind=kind, gpus=gpus, placed_at=now, state="waiting", mode=mode)
        self.store.update_job(job.job_id, segment=number)
        return number

    def _next_segment_number(self, job_id: str) -> int:
        row = self.store.db.execute("SELECT MAX(segment) FROM segments WHERE job_id=?", (job_id,)).fetchone()
        return (row[0] or 0) + 1

    def _persist(self, job: JobState, now: float, **extra) -> None:
        self.store.update_job(job.job_id, done_iterations=job.done_iterations, first_start=job.first_start,
                              queued_since=job.queued_since, queued_time=job.queued_time, run_time=job.run_time,
                              gpu_seconds=job.gpu_seconds, restarts=job.restarts, migrations=job.migrations,
                              resizes=job.resizes, **extra)

    # ================================================================== 5. actuation

    def _ckpt_dir(self, job_id: str) -> Path:
        return self.store.checkpoint_root / job_id

    def _actuate(self, now: float) -> None:
        self._take_turns(now)

        def current(s: Segment) -> bool:
            return self.segs.get(s.job_id) is s

        for seg in list(self.segs.values()):
            if seg.state != "waiting" or now < seg.not_before:
                continue
            if seg.mode == "sliced" and seg.job_id not in self.turns.began:
                continue  # time-sliced: waits for its turn
            if any(g in self.lost or g in self.unready or not self.phys.can_join(g, seg, current)
                   for g in seg.gpus):
                continue  # a previous occupant has not stopped yet, or the worker is restarting
            if any(k[0] == seg.job_id for k in self.ending):
                continue  # this job's previous segment still runs: never run it twice
            self._launch(self.jobs[seg.job_id], seg, now)

    def _launch(self, job: JobState, seg: Segment, now: float) -> None:
        live = self.live[job.job_id]
        meta = read_checkpoint_meta(self._ckpt_dir(job.job_id))
        seg.iter_start = int(meta["iteration"]) if meta else 0
        job.done_iterations = float(seg.iter_start)
        rank0 = seg.gpus[0]
        try:
            port = self.ray.get(self.slots[rank0].free_port.remote(), timeout=10)
        except (self.ray.exceptions.RayError, TimeoutError):
            return  # the slot is restarting, busy or its node is going; the next tick sees which
        if port in self._ports_given and time.monotonic() - self._ports_given[port] < _PORT_HOLD_S:
            return  # handed to a segment whose rank 0 may not have bound it yet: ask again next tick
        self._ports_given = {p: t for p, t in self._ports_given.items()
                             if time.monotonic() - t < _PORT_HOLD_S}
        self._ports_given[port] = time.monotonic()
        addr = self.node_ip.get(self.layout.slots[rank0][0]) or "127.0.0.1"
        seg.state = "launching"
        seg.launched_at = now
        seg.launch = uuid.uuid4().hex
        self.store.put_segment(job.job_id, seg.number, state="launching", launched_at=now, iter_start=seg.iter_start)
        base = {"job_id": job.job_id, "segment": seg.number, "world_size": len(seg.gpus),
                "total_iterations": job.total_iterations, "batch_size": job.spec.batch_size,
                "checkpoint_dir": str(self._ckpt_dir(job.job_id)), "checkpoint_every": live.checkpoint_every,
                "master_addr": addr, "master_port": port, "timeout_s": self.cfg.collective_timeout_s,
                "args": live.args, "script": live.script, "mode": seg.mode, "launch": seg.launch,
                # a start that reaches its slot after we stopped waiting for it must not run
                "start_by": time.time() + _START_WAIT_S}
        refs = {}
        for rank, g in enumerate(seg.gpus):
            self.phys.add(g, seg)
            refs[g] = self.slots[g].start.remote({**base, "rank": rank})
        replies = self._collect(refs, timeout=_START_WAIT_S + 1.0)
        for g, r in replies.items():
            if r.get("incarnation"):
                self.incarnation[g] = r["incarnation"]  # the process that now runs this rank
        refused = [g for g in seg.gpus if not replies.get(g, {}).get("ok")]
        if refused:
            self.store.event(now, job.job_id, "launch-refused", segment=seg.number, gpus=refused,
                             replies={str(g): replies.get(g) for g in refused})
            for g in refused:
                r = replies.get(g)
                if r is None:
                    continue  # no answer: it may run the segment; polling tells, and it is stopped
                self.phys.remove(g, seg)
                if r.get("dead"):
                    self.unready.add(g)
                elif r.get("running"):  # something we lost track of runs there: stop it first
                    self._adopt_orphan(g, {"state": "running", "job_id": r["running"][0],
                                           "segment": r["running"][1]}, now)
            self._fault(job, now, "a worker refused the segment")
            return
        self.store.event(now, job.job_id, "launch", segment=seg.number, iter_start=seg.iter_start)

    def _end_segment(self, seg: Segment, now: float, outcome: str, rank0: dict | None) -> None:
        self.ending.pop((seg.job_id, seg.number), None)
        fields = {"state": outcome, "ended_at": now}
        if rank0 and not rank0.get("dead"):
            if rank0.get("iterations") is not None:
                fields["iter_end"] = int(rank0["iterations"])
            if rank0.get("iter_time"):
                fields["iter_time"] = rank0["iter_time"]
                fields["timed_iterations"] = rank0.get("timed_iterations", 0)
                job = self.live.get(seg.job_id)
                row = self.store.db.execute("SELECT mode FROM segments WHERE job_id=? AND segment=?",
                                            (seg.job_id, seg.number)).fetchone()
                if job is not None:
                    self.perf.observe(job.spec.model, len(seg.gpus), rank0["iter_time"],
                                      rank0.get("timed_iterations", 0), mode=row[0] if row else seg.mode)
        if seg.kind != "orphan":
            self.store.put_segment(seg.job_id, seg.number, **fields)
        self.store.event(now, seg.job_id, "segment-end", segment=seg.number, outcome=outcome)

    # ================================================================== 6. series

    def _sample(self, now: float) -> None:
        """Series rows from measured progress (ThroughputMeter), never from priced rates."""
        for row in self.meter.sample(now, self._series_state()):
            self.store.series_sample(*row)
        self.meter.forget({(s.job_id, s.number) for s in self.segs.values()} | set(self.ending))


def _record(reply: dict | None, seg: Segment) -> dict | None:
    """A slot's status record of this segment (a slot lists every segment it runs or recently ran)."""
    if not reply or reply.get("dead"):
        return None
    # the launch must match too: a slot remembers ended runs of earlier services, whose
    # (job, segment) can be this one's
    return next((r for r in reply.get("segments", ())
                 if r["job_id"] == seg.job_id and r["segment"] == seg.number
                 and (seg.launch is None or r.get("launch") == seg.launch)), None)


def connect(address: str | None, namespace: str = "dlsched") -> None:
    """Join a Ray cluster by address (``auto`` finds a local one); no address: caller starts one."""
    import ray

    from dlsched.live.raycluster import is_loopback, stay_on_loopback

    if is_loopback(address):  # an emulated cluster (ours or a test's): keep the driver on 127.0.0.1 too
        stay_on_loopback()
    if not ray.is_initialized():
        ray.init(address=address, namespace=namespace, log_to_driver=False,
                 logging_level="WARNING", configure_logging=False)
