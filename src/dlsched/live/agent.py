"""The job agent: what a PyTorch training script uses to be scheduled.

A script written against it looks like this::

    with TrainingAgent() as agent:
        model, opt = build()
        agent.track(model=model, optimizer=opt)   # restores from the last checkpoint, if any
        model = agent.wrap(model)                 # DistributedDataParallel when world size > 1
        for it in agent.iterations():             # stops at an iteration boundary on suspend
            train_one_step(model, opt, it)

The agent reports progress (iterations, time per iteration) to whoever runs
it, checkpoints every ``checkpoint_every`` iterations, on request and when
asked to stop, and restarts from the checkpoint with any world size (elastic
data parallelism: the global batch stays fixed and is split over the
workers, so a resize changes speed, not the training recipe).

Run inside the live runtime, the context (rank, world size, rendezvous,
checkpoint folder, control flags) comes from the worker actor; run by hand,
it comes from ``DLSCHED_*`` environment variables with single-process
defaults, so the same script also runs as a plain ``python script.py``.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Iterator

import torch
import torch.distributed as dist

from dlsched.live.checkpoints import CHECKPOINT_FILE, CHECKPOINT_META, read_checkpoint_meta  # noqa: F401
from dlsched.live.private import private_dir, write_private


class SegmentControl:
    """Flags set by the runtime and progress read by it; shared between threads of one worker."""

    def __init__(self):
        self.stop = threading.Event()
        self.checkpoint = threading.Event()
        self._lock = threading.Lock()
        self._progress: dict = {}
        # segments running on this worker's GPU beside this one (packing); the slot keeps it current
        self.cotenants = 0

    def publish(self, **values) -> None:
        with self._lock:
            self._progress.update(values)

    def progress(self) -> dict:
        with self._lock:
            return dict(self._progress)


@dataclass
class AgentContext:
    job_id: str = "local"
    segment: int = 0
    rank: int = 0
    world_size: int = 1
    total_iterations: int = 100
    batch_size: int = 32  # global
    checkpoint_dir: str = "checkpoints/local"
    checkpoint_every: int = 0  # iterations; 0 = only on stop, request and finish
    master_addr: str = "127.0.0.1"
    master_port: int = 29500
    timeout_s: float = 60.0  # collective timeout: a dead peer fails the segment within this
    args: dict = field(default_factory=dict)
    control: SegmentControl = field(default_factory=SegmentControl)

    @staticmethod
    def from_env() -> "AgentContext":
        e = os.environ
        return AgentContext(
            job_id=e.get("DLSCHED_JOB_ID", "local"),
            rank=int(e.get("RANK", 0)), world_size=int(e.get("WORLD_SIZE", 1)),
            total_iterations=int(e.get("DLSCHED_ITERATIONS", 100)),
            batch_size=int(e.get("DLSCHED_BATCH_SIZE", 32)),
            checkpoint_dir=e.get("DLSCHED_CHECKPOINT_DIR", "checkpoints/local"),
            checkpoint_every=int(e.get("DLSCHED_CHECKPOINT_EVERY", 0)),
            master_addr=e.get("MASTER_ADDR", "127.0.0.1"), master_port=int(e.get("MASTER_PORT", 29500)),
            args=json.loads(e.get("DLSCHED_ARGS", "{}")))


# per thread: a worker slot runs packed segments side by side, each script in its own thread
_local = threading.local()


def set_context(ctx: AgentContext | None) -> None:
    """Called by the worker actor in the segment's thread before it runs the script there."""
    _local.ctx = ctx


def _current() -> AgentContext | None:
    return getattr(_local, "ctx", None)


def _private_group(c: AgentContext, store: dist.TCPStore) -> dist.ProcessGroup:
    """A gloo process group of this segment's own, not torch's process-wide default group.

    Packed segments share a worker process, and torch allows one default
    group per process, so every segment builds its own group and passes it to
    DDP and its collectives explicitly.  (``ProcessGroup._register_backend`` is
    torch's internal API, checked with torch 2.13; the live tests exercise it.)
    """
    timeout = timedelta(seconds=c.timeout_s)
    prefixed = dist.PrefixStore(f"{c.job_id}/{c.segment}", store)
    backend = dist.ProcessGroupGloo(prefixed, c.rank, c.world_size, timeout)
    group = dist.ProcessGroup(prefixed, c.rank, c.world_size)
    group._register_backend(torch.device("cpu"), dist.ProcessGroup.BackendType.GLOO, backend)
    group._set_default_backend(dist.ProcessGroup.BackendType.GLOO)
    return group


def _rendezvous(c: AgentContext) -> dist.TCPStore:
    """The segment's rendezvous store, listening on the master address only.

    ``init_method="tcp://..."`` would have rank 0's store listen on every
    interface; here rank 0 binds the socket to ``master_addr`` itself and hands
    it to the store.  On a loopback master (an emulated cluster, or a plain
    run) gloo's own connections stay on the loopback interface too.
    """
    import socket

    if c.master_addr in ("127.0.0.1", "localhost"):
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    timeout = timedelta(seconds=c.timeout_s)
    if c.rank != 0:
        return dist.TCPStore(c.master_addr, c.master_port, c.world_size, False, timeout)
    sock = socket.socket(socket.AF_INET6 if ":" in c.master_addr else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((c.master_addr, c.master_port))
    sock.listen(128)
    # detach: the store owns the socket from here (Python must not close it under the store)
    return dist.TCPStore(c.master_addr, c.master_port, c.world_size, True, timeout,
                         master_listen_fd=sock.detach())


def _unwrap(obj):
    return obj.module if isinstance(obj, torch.nn.parallel.DistributedDataParallel) else obj


class TrainingAgent:
    def __init__(self, context: AgentContext | None = None):
        self.ctx = context or _current() or AgentContext.from_env()
        self.start_iteration = 0
        self.iteration = 0
        self.outcome: str | None = None
        self._tracked: dict = {}
        self._group: dist.ProcessGroup | None = None
        self._store: dist.TCPStore | None = None

    # ------------------------------------------------------------------ properties

    @property
    def rank(self) -> int:
        return self.ctx.rank

    @property
    def world_size(self) -> int:
        return self.ctx.world_size

    @property
    def batch_size(self) -> int:
        return self.ctx.batch_size

    @property
    def local_batch(self) -> int:
        """This worker's share of the global batch (elastic DP keeps the global batch fixed)."""
        return max(1, self.ctx.batch_size // self.ctx.world_size)

    @property
    def args(self) -> dict:
        return self.ctx.args

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> "TrainingAgent":
        c = self.ctx
        if c.world_size > 1:
            self._store = _rendezvous(c)  # kept: the group reaches its peers through it
            self._group = _private_group(c, self._store)
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if self._group is not None:
            try:
                if exc_type is None:
                    # leave together: a rank that tears the group down while its peer is still
                    # writing the checkpoint can leave that peer stuck in its own teardown
                    self._group.barrier().wait()
                self._group.shutdown()
            except Exception:  # a failed peer can leave the group half-torn; the process lives on
                pass
            self._group = None
            self._store = None
        if exc_type is None and self.outcome is None:
            self.outcome = "finished" if self.iteration >= self.ctx.total_iterations else "ended"
        elif exc_type is not None:
            self.outcome = "failed"
        self.ctx.control.publish(outcome=self.outcome, end_wall=time.time())
        return False

    def wrap(self, model: torch.nn.Module) -> torch.nn.Module:
        if self._group is not None:
            return torch.nn.parallel.DistributedDataParallel(model, process_group=self._group)
        return model

    # ------------------------------------------------------------------ checkpoints

    def track(self, **objects) -> int:
        """Name the objects checkpoints hold (anything with state_dict); restore them if a checkpoint exists.

        Returns the iteration training resumes from.
        """
        self._tracked.update(objects)
        path = Path(self.ctx.checkpoint_dir) / CHECKPOINT_FILE
        if path.exists():
            state = torch.load(path, map_location="cpu", weights_only=False)
            for name, obj in objects.items():
                if name in state["state"]:
                    _unwrap(obj).load_state_dict(state["state"][name])
            self.start_iteration = int(state["iteration"])
        self.iteration = self.start_iteration
        self.ctx.control.publish(iterations=self.iteration, start_iteration=self.start_iteration,
                                 checkpoint_iteration=self.start_iteration if path.exists() else None)
        return self.start_iteration

    def checkpoint(self) -> None:
        """Write a checkpoint of the tracked objects at the current iteration (rank 0 writes)."""
        if self.ctx.rank != 0:
            return
        folder = private_dir(self.ctx.checkpoint_dir)  # weights are the owner's alone (0700 / 0600)
        state = {"iteration": self.iteration, "world_size": self.ctx.world_size,
                 "state": {n: _unwrap(o).state_dict() for n, o in self._tracked.items()}}
        # write-then-rename: a crash mid-write never leaves a torn checkpoint behind
        tmp = folder / (CHECKPOINT_FILE + ".tmp")
        write_private(tmp, b"")
        torch.save(state, tmp)
        os.replace(tmp, folder / CHECKPOINT_FILE)
        meta = folder / (CHECKPOINT_META + ".tmp")
        write_private(meta, json.dumps({"iteration": self.iteration, "world_size": self.ctx.world_size,
                                        "segment": self.ctx.segment, "time": time.time()}).encode())
        os.replace(meta, folder / CHECKPOINT_META)
        self.ctx.control.publish(checkpoint_iteration=self.iteration)

    # ------------------------------------------------------------------ the loop

    def _flags(self) -> tuple[bool, bool]:
        """Stop / checkpoint flags agreed by all workers, so every rank stops at the same boundary."""
        ctl = self.ctx.control
        local = [int(ctl.stop.is_set()), int(ctl.checkpoint.is_set())]
        if self._group is not None:
            t = torch.tensor(local, dtype=torch.int32)
            opts = dist.AllreduceOptions()
            opts.reduceOp = dist.ReduceOp.MAX
            self._group.allreduce([t], opts).wait()
            local = t.tolist()
        return bool(local[0]), bool(local[1])

    def emulated_step_s(self) -> float:
        """This worker's share of ``args.step_time_s``, the emulated accelerator time of one
        global-batch step (0 when the job does not set it)."""
        return float(self.args.get("step_time_s", 0.0)) * self.local_batch / self.batch_size

    def packing_slowdown(self) -> float:
        """How much longer an emulated step takes while other segments share this worker's GPU.

        A fake GPU has no kernels to interfere, so a job states its packed
        interference in ``args.packed_slowdown``: its step takes that many
        times longer with any co-tenant (default 2.0, no gain from packing:
        two jobs at half speed each).  Gandiva's introspection reads the
        resulting *measured* rates; nothing here tells it the factor.
        """
        if not self.ctx.control.cotenants:
            return 1.0
        return max(1.0, float(self.args.get("packed_slowdown", 2.0)))

    def iterations(self, pace_s: float = 0.0) -> Iterator[int]:
        """Iteration numbers from the restored one to the total; returns early when asked to stop.

        ``pace_s`` holds each iteration's body to at least that long (sleeping for the rest),
        so CPU examples can stand in for a GPU's step time: pass ``emulated_step_s()``.  While
        the GPU is packed, the pace stretches by ``packing_slowdown()``.
        """
        c = self.ctx
        ctl = c.control
        total = c.total_iterations
        it = self.iteration
        first_done = None  # wall time after the first iteration: warm-up is left out of the rate
        while it < total:
            stop, ckpt = self._flags()
            if stop:
                self.checkpoint()
                self.outcome = "stopped"
                return
            if ckpt:
                self.checkpoint()
                ctl.checkpoint.clear()
            if it == self.start_iteration:
                ctl.publish(ready_wall=time.time())
            began = time.perf_counter()
            yield it
            if pace_s:  # the rest of this step's emulated accelerator time
                pace = pace_s * self.packing_slowdown()
                time.sleep(max(0.0, pace - (time.perf_counter() - began)))
            it += 1
            self.iteration = it
            now = time.time()
            if first_done is None:
                first_done = now
                ctl.publish(iterations=it, last_wall=now)
            else:
                ctl.publish(iterations=it, last_wall=now,
                            iter_time=(now - first_done) / (it - self.start_iteration - 1),
                            timed_iterations=it - self.start_iteration - 1)
            if c.checkpoint_every and it % c.checkpoint_every == 0 and it < total:
                self.checkpoint()
        self.checkpoint()  # final: a finished job is recognisable from its checkpoint alone
        self.outcome = "finished"
