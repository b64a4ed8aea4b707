"""The worker actor: one per (fake) GPU, running one job segment at a time.

A ``GpuSlot`` is a detached, named Ray actor pinned to its node and holding
one Ray GPU, so Ray's own accounting agrees with the scheduler's GPU ids.
Slots outlive the scheduler process (a scheduler restart finds them by name
and asks what they run) and are restarted by Ray if their process dies; a
new ``incarnation`` tells the scheduler that whatever ran there is gone.

A segment is one stretch of a job on a fixed set of GPUs: the slot runs the
job's script in a background thread with the agent's context set, so the
actor keeps answering ``status``/``stop`` while training runs.
"""

from __future__ import annotations

import os
import runpy
import socket
import sys
import threading
import time
import traceback
import uuid

import ray


class GpuSlot:
    def __init__(self, gpu_id: int):
        # one CPU thread per worker: an emulated cluster runs many workers on few cores
        import torch

        torch.set_num_threads(1)
        _warm_up()
        self.gpu_id = gpu_id
        self.incarnation = uuid.uuid4().hex
        self._lock = threading.Lock()
        self._seg: dict | None = None  # what runs (or last ran) here
        self._control = None
        self._state = "idle"  # idle | running | finished | stopped | failed
        self._error = ""
        self._thread: threading.Thread | None = None
        # stops that reached us before their segment's start (the actor serves calls
        # concurrently): a start for one of these must not run it
        self._stopped_early: set[tuple[str, int]] = set()

    # ------------------------------------------------------------------ queries

    def hello(self) -> dict:
        return {"incarnation": self.incarnation, "pid": os.getpid(), "gpu_id": self.gpu_id,
                "node_ip": ray.util.get_node_ip_address()}

    def free_port(self) -> int:
        """A free TCP port on this node for the segment's rendezvous (rank 0's slot is asked)."""
        with socket.socket() as s:
            s.bind((ray.util.get_node_ip_address(), 0))  # the address ranks will reach, not every interface
            return s.getsockname()[1]

    def status(self) -> dict:
        with self._lock:
            out = {"incarnation": self.incarnation, "pid": os.getpid(), "state": self._state,
                   "error": self._error}
            if self._seg is not None:
                out.update(job_id=self._seg["job_id"], segment=self._seg["segment"], rank=self._seg["rank"])
            if self._control is not None:
                out.update(self._control.progress())
            return out

    # ------------------------------------------------------------------ commands

    def start(self, seg: dict) -> dict:
        """Run a segment: seg has job_id, segment, rank, world_size, script, and the agent's settings."""
        from dlsched.live.agent import AgentContext, SegmentControl

        with self._lock:
            if seg.get("start_by") is not None and time.time() > seg["start_by"]:
                # the scheduler stopped waiting for this call and counts the segment as not started
                return {"ok": False, "incarnation": self.incarnation, "why": "start arrived too late"}
            if (seg["job_id"], seg["segment"]) in self._stopped_early:
                self._stopped_early.discard((seg["job_id"], seg["segment"]))
                return {"ok": False, "incarnation": self.incarnation, "why": "stopped before it started"}
            if self._state == "running":
                # never two jobs on one slot: the scheduler must wait for the old segment to end
                return {"ok": False, "incarnation": self.incarnation,
                        "running": [self._seg["job_id"], self._seg["segment"]],
                        "why": f"busy with {self._seg['job_id']}#{self._seg['segment']}"}
            self._control = SegmentControl()
            self._seg = dict(seg)
            self._state = "running"
            self._error = ""
            ctx = AgentContext(job_id=seg["job_id"], segment=seg["segment"], rank=seg["rank"],
                               world_size=seg["world_size"], total_iterations=seg["total_iterations"],
                               batch_size=seg["batch_size"], checkpoint_dir=seg["checkpoint_dir"],
                               checkpoint_every=seg["checkpoint_every"], master_addr=seg["master_addr"],
                               master_port=seg["master_port"], timeout_s=seg.get("timeout_s", 60.0),
                               args=seg.get("args", {}), control=self._control)
            self._control.publish(launch_wall=time.time())
            self._thread = threading.Thread(target=self._run, args=(seg["script"], ctx), daemon=True,
                                            name=f"seg-{seg['job_id']}-{seg['segment']}")
            self._thread.start()
        return {"ok": True, "incarnation": self.incarnation}

    def stop(self, job_id: str, segment: int) -> bool:
        return self._signal(job_id, segment, "stop")

    def request_checkpoint(self, job_id: str, segment: int) -> bool:
        return self._signal(job_id, segment, "checkpoint")

    def _signal(self, job_id: str, segment: int, event: str) -> bool:
        """Set one of the running segment's control events; False if that segment is not ours."""
        with self._lock:
            if self._seg and self._seg["job_id"] == job_id and self._seg["segment"] == segment:
                getattr(self._control, event).set()
                return True
            if event == "stop":
                if len(self._stopped_early) > 1024:  # segment numbers only grow; old ones never come
                    self._stopped_early.clear()
                self._stopped_early.add((job_id, segment))
        return False

    def exit(self) -> None:
        """Leave for good (scheduler shutdown); Ray then frees this GPU."""
        ray.actor.exit_actor()

    # ------------------------------------------------------------------ the segment thread

    def _run(self, script: str, ctx) -> None:
        from dlsched.live import agent

        agent.set_context(ctx)
        saved_argv = sys.argv
        sys.argv = [script]
        state, error = "failed", ""
        try:
            runpy.run_path(script, run_name="__main__")
            outcome = ctx.control.progress().get("outcome")
            if outcome in ("finished", "stopped"):
                state = outcome
            else:
                error = f"script returned without finishing its iterations (agent outcome {outcome!r})"
        except BaseException as e:  # the script's failure is the segment's, never the slot's
            # the traceback's last lines: where the script failed as well as why
            lines = "".join(traceback.format_exception(type(e), e, e.__traceback__)).strip().splitlines()
            error = "\n".join(lines[-12:])[-2000:]
        finally:
            sys.argv = saved_argv
            agent.set_context(None)
        with self._lock:
            self._state = state
            self._error = error
            self._control.publish(end_wall=time.time())


def _warm_up() -> None:
    """Pay torch's first-use costs (lazy imports, kernel set-up) when the slot starts, not in a job.

    Otherwise the first segment on every slot starts about a second later than
    later ones, and start overheads would depend on which slot a job lands on.
    """
    import io

    import torch
    import torch.distributed  # noqa: F401
    import torch.nn.functional as F

    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.Flatten(), torch.nn.LazyLinear(2))
    enc = torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    for opt_cls in (torch.optim.SGD, torch.optim.AdamW):
        opt = opt_cls(list(model.parameters()) + list(enc.parameters()), lr=0.01) \
            if opt_cls is torch.optim.SGD else opt_cls(enc.parameters(), lr=0.01)
        loss = F.cross_entropy(model(torch.randn(2, 3, 5, 5)), torch.tensor([0, 1]))
        loss = loss + enc(torch.randn(2, 4, 8)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        torch.save({"m": model.state_dict(), "o": opt.state_dict()}, io.BytesIO())


def slot_actor_class():
    """The Ray actor class (built lazily so importing this module does not need a Ray session)."""
    # max_restarts: a killed worker process comes back empty (new incarnation) on the same node;
    # max_task_retries=0: a call in flight when it died fails instead of silently re-running
    return ray.remote(num_cpus=0, num_gpus=1, max_restarts=-1, max_task_retries=0,
                      max_concurrency=4)(GpuSlot)
