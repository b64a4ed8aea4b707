"""How much memory a simulation needs, checked before it starts: a job count whose state would not
fit is refused at once (a billion-job run was killed by the kernel at 24 GB after minutes)."""

from __future__ import annotations

from dlsched.errors import InputError

# Peak resident memory per simulated job, measured with `benchmarks/bench_memory.py` (FCFS,
# synthetic Philly-like jobs on crius-sim; peak RSS 122 MiB at 20k jobs, 241 MiB at 100k: a
# slope of 1,568 bytes/job over a 92 MiB base).  The estimate keeps about 2.5x that slope for
# what other policies hold per job (Crius's shape tables, Gavel's weights), so it errs on the
# side of refusing; a 1,000,000-job run is estimated at about 4 GiB.
BYTES_PER_JOB = 4_000
BASE_BYTES = 256 * 2**20  # interpreter, numpy, scipy and the cluster before the first job
HEADROOM = 0.8  # refuse runs that would need more than this share of the available memory


def available_bytes() -> int | None:
    """Memory the run may use: MemAvailable from /proc/meminfo (None where unknown)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def estimated_bytes(n_jobs: int, runs: int = 1) -> int:
    """Peak memory of simulating ``n_jobs`` jobs (``runs`` results kept, as ``compare`` does)."""
    return BASE_BYTES + n_jobs * BYTES_PER_JOB * max(1, runs)


def check_memory(n_jobs: int, runs: int = 1, option: str = "--jobs", **where) -> None:
    """Refuse a run whose jobs' state would not fit in memory; ``where`` (file, line) names an input file."""
    need = estimated_bytes(n_jobs, runs)
    have = available_bytes()
    if have is not None and need > HEADROOM * have:
        raise InputError(f"{n_jobs:,} jobs would need about {need / 2**30:.1f} GiB "
                         f"({BYTES_PER_JOB:,} bytes per job{f' x {runs} runs' if runs > 1 else ''}); "
                         f"this machine has {have / 2**30:.1f} GiB available; simulate fewer jobs",
                         field=option, **where)
