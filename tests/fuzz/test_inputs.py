"""Fuzzed inputs of every kind: each case is read or refused with a dlsched error, never a traceback or a hang.

Seeded and bounded: 120 cases per kind by default (about a minute in all), ``--fuzz-cases 2000``
for the long run, ``--fuzz-seed`` to explore further.  A failing case's bytes are in the message,
so it reproduces.  Kinds: traces (every format with a fixture), throughput tables, the five
profile tables, cluster specs, experiment files, job files and tier profiles.
"""

from __future__ import annotations

import random
import shutil
import signal
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from dlsched.errors import DlschedError
from mutate import mutate

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
FIXTURES = REPO / "tests" / "fixtures" / "traces"
HANG_S = 10


@dataclass
class Kind:
    name: str
    seeds: Callable[[], list[tuple[str, bytes]]]  # (file name, bytes) of valid files
    load: Callable[[Path], object]
    csv: bool = True
    setup: Callable[[Path], None] = lambda folder: None  # files a case needs beside it
    check: Callable[[object], None] = lambda loaded: None  # what must hold of whatever was read
    counts: dict = field(default_factory=lambda: {"read": 0, "refused": 0})


def _head(path: Path, lines: int = 40) -> bytes:
    return b"\n".join(path.read_bytes().split(b"\n")[:lines]) + b"\n"


def _traces() -> list[tuple[str, bytes]]:
    skip = ("lingjun", "pai_job_table", "README")  # Lingjun needs its worker table as an option
    return [(p.name, _head(p)) for p in sorted(FIXTURES.iterdir()) if not p.name.startswith(skip)]


def _read_trace(path: Path):
    from dlsched.workload.readers import read_trace

    return read_trace(path, skip_bad_rows=len(path.name) % 2 == 0)


def _throughputs() -> list[tuple[str, bytes]]:
    table = SHARED / "anchors" / "traces" / "gavel-simulation-throughputs-isolated.csv"
    if table.is_file():
        return [("throughputs.csv", _head(table))]
    return [("throughputs.csv", b"job_type,scale_factor,v100_steps_per_s,p100_steps_per_s\n"
                                b"ResNet-50 (batch size 64),1,2.5,1.2\nLM (batch size 20),2,9.1,4.0\n")]


def _read_throughputs(path: Path):
    from dlsched.perf.measured.replay import read_throughputs

    return read_throughputs(path)


def _profiles() -> list[tuple[str, bytes]]:
    folder = SHARED / "anchors" / "profiles"
    return [(p.name, _head(p)) for p in sorted(folder.glob("*.csv"))] if folder.is_dir() else []


def _read_profile(path: Path):
    from dlsched.workload.readers.profiles import read_profile

    return read_profile(path)


def _clusters() -> list[tuple[str, bytes]]:
    specs = REPO / "src" / "dlsched" / "cluster" / "specs"
    return [(p.name, p.read_bytes()) for p in sorted(specs.glob("*.yaml")) if p.stat().st_size < 20_000]


def _read_cluster(path: Path):
    from dlsched.cluster.topology import Cluster

    return Cluster.load(path)


def _experiments() -> list[tuple[str, bytes]]:
    small = (b"name: fuzz\ncluster: crius-testbed\nworkload: {synthetic: {jobs: 20, days: 0.1}}\n"
             b"policies:\n  - fcfs\n  - name: crius\n    options: {depth: 2}\nseeds: [0, 1]\n"
             b"sweep:\n  policies.1.options.depth: [1, 2]\n")
    return [("crius-depth.yaml", (REPO / "examples" / "experiments" / "crius-depth.yaml").read_bytes()),
            ("small.yaml", small)]


def _read_experiment(path: Path):
    from dlsched.experiments.expfile import load_experiment

    return load_experiment(path)


def _jobfiles() -> list[tuple[str, bytes]]:
    return [(p.name, p.read_bytes()) for p in sorted((REPO / "examples").glob("*.yaml"))
            if b"script:" in p.read_bytes()]


def _job_scripts(folder: Path) -> None:
    for script in (REPO / "examples").glob("*_job.py"):
        shutil.copy(script, folder / script.name)


def _read_jobfile(path: Path):
    from dlsched.live.jobfile import load_jobs

    return load_jobs(path)


def _jobs_sound(jobs) -> None:
    """Loaded jobs make sense, and read back from the store exactly as ``submit`` writes them."""
    from dlsched.live.jobfile import LiveJob

    assert jobs and all(j.spec.num_gpus >= 1 and j.spec.total_iterations >= 1 for j in jobs)
    for j in jobs:
        assert LiveJob.from_json(j.to_json(), 0.0).to_json() == j.to_json()


def _tiers() -> list[tuple[str, bytes]]:
    return [("tiers.csv", b"model,params,machine_pct,rack_pct,network_pct\nresnet50,,1.5,4,12\n"
                          b"vgg16,,3,9%,27\ngpt,1.3B,2,6,20\n")]


def _read_tiers(path: Path):
    from dlsched.perf.comm.tier_profile import TierProfile

    return TierProfile.load(path)


KINDS = [Kind("trace", _traces, _read_trace), Kind("throughputs", _throughputs, _read_throughputs),
         Kind("profiles", _profiles, _read_profile), Kind("cluster", _clusters, _read_cluster, csv=False),
         Kind("experiment", _experiments, _read_experiment, csv=False),
         Kind("jobfile", _jobfiles, _read_jobfile, csv=False, setup=_job_scripts, check=_jobs_sound),
         Kind("tiers", _tiers, _read_tiers)]


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


@pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])
def test_fuzzed_inputs_are_read_or_refused(kind: Kind, tmp_path, request, capsys):
    cases = request.config.getoption("--fuzz-cases") or 120
    seed = request.config.getoption("--fuzz-seed") or 2026
    if kind.name == "profiles":
        pytest.importorskip("dlsched.workload.readers.profiles", reason="no profile-table readers")
    seeds = kind.seeds()
    if not seeds:
        pytest.skip(f"no seed files for {kind.name} (../shared/anchors absent)")
    kind.setup(tmp_path)
    for name, data in seeds:  # the seeds themselves are valid
        path = tmp_path / name
        path.write_bytes(data)
        kind.load(path)
    rng = random.Random(f"{seed}:{kind.name}")
    failures: list[str] = []
    old = signal.signal(signal.SIGALRM, _alarm)
    start = time.perf_counter()
    try:
        for i in range(cases):
            name, data = seeds[i % len(seeds)]
            case = mutate(rng, data, kind.csv)
            path = tmp_path / f"case{i}-{name}"
            path.write_bytes(case)
            signal.alarm(HANG_S)
            try:
                kind.check(kind.load(path))
                kind.counts["read"] += 1
            except DlschedError as e:
                kind.counts["refused"] += 1
                if str(path) not in str(e):  # an error must say which file it is about
                    failures.append(f"case {i}: the error does not name the file: {e}\n{case[:300]!r}")
            except _Hang:
                failures.append(f"case {i} hung over {HANG_S} s: {case[:300]!r}")
            except Exception:  # a traceback a user would see
                failures.append(f"case {i}: {traceback.format_exc(limit=3)[-1500:]}\n{case[:300]!r}")
            finally:
                signal.alarm(0)
            path.unlink()
    finally:
        signal.signal(signal.SIGALRM, old)
    with capsys.disabled():
        print(f"\nfuzz {kind.name}: {cases} cases (seed {seed}) in {time.perf_counter() - start:.1f} s: "
              f"{kind.counts['read']} read, {kind.counts['refused']} refused, {len(failures)} failed")
    assert not failures, "\n\n".join(failures[:5])
    # both outcomes occur: the mutations neither always break the files nor never touch them
    assert kind.counts["read"] >= cases // 100 and kind.counts["refused"] >= cases // 2, kind.counts
