"""Run one piece of work in a forked child while the caller does another: the second core.

A million-job run writes about 230 MB of CSV, formatting a few million fields in Python and numpy
after the simulation has finished; on a machine with a spare core, half of that can run beside the
other half.  A forked child sees the run's objects as they are (copy on write, nothing pickled),
does its part, and leaves with ``os._exit`` (no teardown of the copied heap).

The cyclic collector is kept off in both processes while the child lives (``gc.freeze`` before
the fork): a collection walks every tracked object and writes to its header, which would copy
every page of the heap into whichever process collected.

Where ``os.fork`` does not exist, where the caller asks for one process (``DLSCHED_WRITE_PROCS=1``),
or where threads other than the main one run (a fork copies no other thread, and a lock one
of them held would stay held in the child), the work runs in the caller, one after the other.
"""

from __future__ import annotations

import gc
import os
import threading
import traceback
from typing import Callable


def can_fork() -> bool:
    return (hasattr(os, "fork") and os.environ.get("DLSCHED_WRITE_PROCS", "2") != "1"
            and threading.active_count() == 1)


def private_kib() -> int | None:
    """This process's own (not shared) dirty memory, KiB: what a forked child added to the total."""
    try:
        with open("/proc/self/smaps_rollup") as f:
            for line in f:
                if line.startswith("Private_Dirty:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


class Forked:
    """``Forked(work)`` starts ``work()`` in a child (or runs it at once where it cannot fork);
    ``wait()`` returns when it is done and raises if it failed, with the child's traceback."""

    def __init__(self, work: Callable[[], None]):
        self.pid: int | None = None
        self.child_private_kib: int | None = None  # the child's own memory when it finished
        if not can_fork():
            work()
            return
        self._frozen = gc.isenabled()
        gc.disable()
        gc.freeze()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: do the work, report, leave without any teardown
            os.close(r)
            code = 0
            try:
                work()
                msg = f"ok {private_kib() or 0}"
            except BaseException:  # noqa: BLE001 - everything goes back to the parent
                msg = "error " + traceback.format_exc()
                code = 1
            try:
                os.write(w, msg.encode("utf-8", "replace"))
            finally:
                os._exit(code)
        os.close(w)
        self.pid, self._r = pid, r

    def wait(self) -> None:
        if self.pid is None:
            return
        chunks = []
        while True:
            b = os.read(self._r, 65536)
            if not b:
                break
            chunks.append(b)
        os.close(self._r)
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        gc.unfreeze()
        if self._frozen:
            gc.enable()
        msg = b"".join(chunks).decode("utf-8", "replace")
        if status != 0 or not msg.startswith("ok"):
            raise OSError(f"writing results in a child process failed (status {status}):\n{msg}")
        self.child_private_kib = int(msg.split()[1]) or None
