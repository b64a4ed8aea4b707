"""docs/extending.md's walk, run as written: its Python file saved, its shell commands run in order."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "extending.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(), flags=re.S)


def test_the_walk_from_an_empty_file_to_a_compare_report(tmp_path):
    (policy,) = _blocks("python")
    name = policy.splitlines()[0].removeprefix("# ").strip()
    (tmp_path / name).write_text(policy)
    (tmp_path / "examples").symlink_to(ROOT / "examples")  # the doc's commands run from the checkout root
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    commands = [line for block in _blocks("bash") for line in block.splitlines() if line.strip()]
    assert len(commands) == 4
    outputs = []
    for line in commands:
        args = shlex.split(line)
        assert args[0] == "dlsched"
        done = subprocess.run([sys.executable, "-m", "dlsched.cli", *args[1:]], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, (line, done.stderr)
        outputs.append(done.stdout)
    assert "smallest_first.py:SmallestFirst: queued jobs by GPUs asked for" in outputs[0]
    table = outputs[2]
    rows = {r.split()[0]: r.split() for r in table.splitlines() if r.split() and r.split()[0] in
            ("fcfs", "fcfs-backfill", "smallest-first")}
    assert set(rows) == {"fcfs", "fcfs-backfill", "smallest-first"}
    assert rows["smallest-first"][4] != rows["fcfs"][4]  # average JCT differs: the burst queues
    assert (tmp_path / "runs" / "mine" / "smallest-first" / "jobs.csv").is_file()
    assert (tmp_path / "runs" / "mine" / "report.html").stat().st_size > 10_000
