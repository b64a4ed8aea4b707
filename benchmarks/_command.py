"""Run one ``dlsched`` command in a child interpreter and measure the whole process.

What a user waits for is the command (imports, trace, run, outputs written, exit), so the
benchmarks time that, not an in-process path.  CPU time is the child's user + sys and peak
memory its maximum resident set, both from ``os.wait4``; a run past ``timeout_s`` wall is
killed, and what it used until then is reported as a lower bound.  ``cpu_limit_s`` bounds
the child's own CPU time instead (``RLIMIT_CPU``): on a shared machine a wall limit cuts a
run short after very different amounts of work.
"""

from __future__ import annotations

import math
import os
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


@dataclass
class Measured:
    cpu_s: float  # user + sys of the child
    wall_s: float
    peak_gib: float
    rc: int | None  # None: killed at the timeout
    output: str

    @property
    def timed_out(self) -> bool:
        return self.rc is None


def env() -> dict:
    """This checkout's sources first, one BLAS thread (as ``dlsched`` itself asks)."""
    e = dict(os.environ)
    e["PYTHONPATH"] = str(SRC) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    return e


def run_dlsched(args: list[str], timeout_s: float | None = None, log=None, profile=None,
                cpu_limit_s: float | None = None) -> Measured:
    """``python -m dlsched.cli *args`` to completion or ``timeout_s`` wall seconds
    (under cProfile, written to ``profile``, when given)."""
    out = open(log, "w+") if log else subprocess.DEVNULL
    t0 = time.perf_counter()
    prof = ["-m", "cProfile", "-o", str(profile)] if profile else []
    def limit():
        if cpu_limit_s is not None:  # SIGXCPU at the limit, SIGKILL a little after
            lim = int(math.ceil(cpu_limit_s))
            resource.setrlimit(resource.RLIMIT_CPU, (lim, lim + 5))

    p = subprocess.Popen([sys.executable, *prof, "-m", "dlsched.cli", *args], env=env(),
                         stdout=out, stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=limit)
    rc: int | None = None
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            rc = os.waitstatus_to_exitcode(status)
            if cpu_limit_s is not None and rc in (-signal.SIGXCPU, -signal.SIGKILL):
                rc = None  # stopped at the CPU limit
            break
        if timeout_s is not None and time.perf_counter() - t0 > timeout_s:
            os.killpg(p.pid, signal.SIGKILL)  # its own session: nothing of ours is touched
            _, _, ru = os.wait4(p.pid, 0)
            break
        time.sleep(0.05)
    p.returncode = rc if rc is not None else -9  # reaped above: Popen must not wait again
    wall = time.perf_counter() - t0
    text = ""
    if log:
        out.seek(0)
        text = out.read()
        out.close()
    kib = ru.ru_maxrss  # KiB on Linux
    return Measured(ru.ru_utime + ru.ru_stime, wall, kib / 2**20, rc, text)
