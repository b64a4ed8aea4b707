"""The worker actor: one per (fake) GPU, running the job segments the scheduler places there.

A ``GpuSlot`` is a detached, named Ray actor pinned to its node and holding
one Ray GPU, so Ray's own accounting agrees with the scheduler's GPU ids.
Slots outlive the scheduler process (a scheduler restart finds them by name
and asks what they run) and are restarted by Ray if their process dies; a
new ``incarnation`` tells the scheduler that whatever ran there is gone.

A segment is one stretch of a job on a fixed set of GPUs: the slot runs the
job's script in a background thread with the agent's context set, so the
actor keeps answering ``status``/``stop`` while training runs.  A slot runs
one segment at a time, except that packed segments (``mode`` "packed", the
scheduler's ``Allocation.mode``) run side by side, each in its own thread:
a second segment is accepted only when it and everything running are packed
members of this GPU.  Time-sliced segments take turns (the scheduler stops
one before it starts the next), so to the slot they are one at a time.
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
from dataclasses import dataclass

import ray


_KEEP_ENDED = 16  # ended segments remembered, so the scheduler's next poll still sees how each ended


@dataclass
class _Run:
    """One segment on this slot: what was asked, its control flags, how it is doing."""

    seg: dict
    control: object
    mode: str = "exclusive"  # exclusive | packed | sliced (the scheduler's Allocation.mode)
    state: str = "running"  # running | finished | stopped | failed
    error: str = ""

    @property
    def key(self) -> tuple[str, int]:
        return self.seg["job_id"], self.seg["segment"]


class GpuSlot:
    def __init__(self, gpu_id: int):
        # one CPU thread per worker: an emulated cluster runs many workers on few cores
        import torch

        torch.set_num_threads(1)
        _warm_up()
        self.gpu_id = gpu_id
        self.incarnation = uuid.uuid4().hex
        self._lock = threading.Lock()
        self._runs: dict[tuple[str, int], _Run] = {}  # running, then the last few ended, oldest first
        # stops that reached us before their segment's start (the actor serves calls
        # concurrently): a start for one of these must not run it.  Keyed by the launch too:
        # slots outlive services, and (job, segment) recurs across services (a fresh state
        # folder numbers segments afresh), so a stop that found nothing here -- say
        # because this process had just restarted -- must not bar a later, unrelated launch
        self._stopped_early: set[tuple[str, int, str | None]] = set()

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
        """Every segment this slot runs or recently ran, with its progress.

        ``state`` is "running" while any segment runs, else the last one's end
        (or "idle"): a summary for people; the scheduler reads ``segments``.
        """
        with self._lock:
            segs = [{"job_id": r.seg["job_id"], "segment": r.seg["segment"], "rank": r.seg["rank"],
                     "mode": r.mode, "launch": r.seg.get("launch"), "state": r.state, "error": r.error,
                     **r.control.progress()}
                    for r in self._runs.values()]
        running = [x for x in segs if x["state"] == "running"]
        state = "running" if running else (segs[-1]["state"] if segs else "idle")
        return {"incarnation": self.incarnation, "pid": os.getpid(), "state": state, "segments": segs}

    def _running(self) -> list[_Run]:
        return [r for r in self._runs.values() if r.state == "running"]

    # ------------------------------------------------------------------ commands

    def start(self, seg: dict) -> dict:
        """Run a segment: seg has job_id, segment, rank, world_size, script, mode, and the agent's settings."""
        from dlsched.live.agent import AgentContext, SegmentControl

        key = (seg["job_id"], seg["segment"])
        mode = seg.get("mode", "exclusive")
        with self._lock:
            if seg.get("start_by") is not None and time.time() > seg["start_by"]:
                # the scheduler stopped waiting for this call and counts the segment as not started
                return {"ok": False, "incarnation": self.incarnation, "why": "start arrived too late"}
            early = (*key, seg.get("launch"))
            if early in self._stopped_early:
                self._stopped_early.discard(early)
                return {"ok": False, "incarnation": self.incarnation, "why": "stopped before it started"}
            running = self._running()
            if running and not (mode == "packed" and all(r.mode == "packed" for r in running)):
                # never two jobs on one slot unless all are packed on purpose: the scheduler must
                # wait for the old segment to end
                r = running[0]
                return {"ok": False, "incarnation": self.incarnation, "running": list(r.key),
                        "why": f"busy with {r.key[0]}#{r.key[1]} ({r.mode}); asked for a {mode} segment"}
            control = SegmentControl()
            run = _Run(dict(seg), control, mode)
            self._runs.pop(key, None)
            self._runs[key] = run
            self._forget_ended()
            self._count_cotenants()
            ctx = AgentContext(job_id=seg["job_id"], segment=seg["segment"], rank=seg["rank"],
                               world_size=seg["world_size"], total_iterations=seg["total_iterations"],
                               batch_size=seg["batch_size"], checkpoint_dir=seg["checkpoint_dir"],
                               checkpoint_every=seg["checkpoint_every"], master_addr=seg["master_addr"],
                               master_port=seg["master_port"], timeout_s=seg.get("timeout_s", 60.0),
                               args=seg.get("args", {}), control=control)
            control.publish(launch_wall=time.time())
            threading.Thread(target=self._run, args=(run, seg["script"], ctx), daemon=True,
                             name=f"seg-{seg['job_id']}-{seg['segment']}").start()
        return {"ok": True, "incarnation": self.incarnation}

    def set_mode(self, job_id: str, segment: int, mode: str) -> bool:
        """The scheduler changed a running segment's sharing mode (pack, unpack, slice-in/out)."""
        with self._lock:
            run = self._runs.get((job_id, segment))
            if run is None or run.state != "running":
                return False
            run.mode = mode
            return True

    def stop(self, job_id: str, segment: int, launch: str | None = None) -> bool:
        """Stop a segment; ``launch`` names the start it answers (the service's per-launch token)."""
        return self._signal(job_id, segment, "stop", launch)

    def request_checkpoint(self, job_id: str, segment: int) -> bool:
        return self._signal(job_id, segment, "checkpoint")

    def _signal(self, job_id: str, segment: int, event: str, launch: str | None = None) -> bool:
        """Set one of a running segment's control events; False if that segment is not ours."""
        with self._lock:
            run = self._runs.get((job_id, segment))
            if run is not None and launch is not None and run.seg.get("launch") != launch:
                run = None  # another launch's record (an earlier service's): not the one meant
            if run is not None:
                getattr(run.control, event).set()
                return True
            if event == "stop":
                if len(self._stopped_early) > 1024:  # segment numbers only grow; old ones never come
                    self._stopped_early.clear()
                self._stopped_early.add((job_id, segment, launch))
        return False

    def exit(self) -> None:
        """Leave for good (scheduler shutdown); Ray then frees this GPU."""
        ray.actor.exit_actor()

    def _forget_ended(self) -> None:
        ended = [k for k, r in self._runs.items() if r.state != "running"]
        for k in ended[:max(0, len(ended) - _KEEP_ENDED)]:
            del self._runs[k]

    def _count_cotenants(self) -> None:
        """Tell every running segment how many others share the GPU (the agent's packed pace)."""
        running = self._running()
        for r in running:
            r.control.cotenants = len(running) - 1

    # ------------------------------------------------------------------ the segment thread

    def _run(self, run: _Run, script: str, ctx) -> None:
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
            run.state = state
            run.error = error
            run.control.publish(end_wall=time.time())
            self._count_cotenants()


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
