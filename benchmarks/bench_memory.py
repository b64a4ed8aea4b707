"""Peak memory per simulated job: the figure behind ``--jobs``'s up-front memory check.

Runs `dlsched simulate` (FCFS, the benchmark trace, crius-sim) in a fresh process
for each job count and reads the process's peak resident set (ru_maxrss).  The slope between
two counts is the bytes per job; ``dlsched/memory.py`` keeps ``BYTES_PER_JOB`` above it.

    python benchmarks/bench_memory.py [N1 N2]     (default 20000 100000)

The jobs are ``--workload benchmark``, the default workload before it moved to an offered load
(docs/workloads.md), passed explicitly so the figure stays comparable with earlier passes.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile

CHILD = """
import resource, sys
from dlsched.cli import main
rc = main(["simulate", "--workload", "benchmark", "--jobs", sys.argv[1], "--quiet", "--out", sys.argv[2]])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
sys.exit(rc)
"""


def peak_bytes(n: int) -> int:
    with tempfile.TemporaryDirectory(prefix="dlsched-mem-") as out:
        done = subprocess.run([sys.executable, "-c", CHILD, str(n), out], capture_output=True, text=True, check=True)
    return int(done.stdout.strip().splitlines()[-1])


def main() -> None:
    from dlsched.memory import BASE_BYTES, BYTES_PER_JOB

    n1, n2 = (int(a) for a in sys.argv[1:3]) if len(sys.argv) > 2 else (20_000, 100_000)
    p1, p2 = peak_bytes(n1), peak_bytes(n2)
    slope = (p2 - p1) / (n2 - n1)
    print(f"peak RSS: {n1:,} jobs {p1 / 2**20:.0f} MiB, {n2:,} jobs {p2 / 2**20:.0f} MiB")
    print(f"slope {slope:,.0f} bytes/job; base {(p1 - slope * n1) / 2**20:.0f} MiB")
    print(f"preflight estimate uses {BYTES_PER_JOB:,} bytes/job + {BASE_BYTES / 2**20:.0f} MiB "
          f"({'covers' if BYTES_PER_JOB >= slope else 'UNDER'} the measured slope)")


if __name__ == "__main__":
    main()
