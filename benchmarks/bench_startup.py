"""Start-up cost of the command line (issue 21: under 0.3 CPU s for `dlsched --version` and
`dlsched simulate --list`).

Each command runs in a fresh interpreter (``python -m dlsched.cli ...`` with this checkout's
``src`` first on the path); CPU time is user + sys of that child process, from
``resource.getrusage(RUSAGE_CHILDREN)``, the best of ``--repeat`` runs.  A bare interpreter
(``python -c pass``) is measured the same way, to show how much of the figure is Python's own.
``--importtime`` prints the ten slowest imports of each command (``python -X importtime``).

    python benchmarks/bench_startup.py [--repeat 5] [--importtime]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
TARGET_CPU_S = 0.3
COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "dlsched --version": ["-m", "dlsched.cli", "--version"],
    "dlsched simulate --list": ["-m", "dlsched.cli", "simulate", "--list"],
}


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def cpu_of(args: list[str]) -> float:
    """User + sys CPU seconds of one child interpreter running ``args``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, *args], env=_env(), check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def slowest_imports(args: list[str], top: int = 10) -> list[tuple[str, float]]:
    """The ``top`` imports with the largest cumulative time (ms), from ``-X importtime``."""
    err = subprocess.run([sys.executable, "-X", "importtime", *args], env=_env(), check=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True).stderr
    rows = []
    for line in err.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((parts[2].strip(), int(parts[1]) / 1000))
    return sorted(rows, key=lambda r: -r[1])[:top]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--importtime", action="store_true", help="also list the slowest imports")
    args = ap.parse_args()
    results = {}
    for name, cmd in COMMANDS.items():
        runs = [cpu_of(cmd) for _ in range(args.repeat)]
        r = {"cpu_s_best": round(min(runs), 3), "cpu_s_median": round(sorted(runs)[len(runs) // 2], 3)}
        if name.startswith("dlsched"):
            r["target_cpu_s"] = TARGET_CPU_S
            r["under_target"] = min(runs) < TARGET_CPU_S
        if args.importtime:
            r["slowest_imports_ms"] = [[m, round(ms, 1)] for m, ms in slowest_imports(cmd)]
        results[name] = r
    print(json.dumps({"params": {"python": platform.python_version(), "machine": platform.machine(),
                                 "repeat": args.repeat, "cpu": "user + sys of the child process"},
                      "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
