"""docs/api.md's tutorial runs as written: every ```python block, in order, in one namespace,
in a scratch folder (the blocks write runs/...)."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def blocks() -> list[str]:
    return BLOCK.findall(DOC.read_text())


def test_the_tutorial_has_blocks():
    assert len(blocks()) >= 6


def test_the_tutorial_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__tutorial__"}
    for i, code in enumerate(blocks(), start=1):
        exec(compile(code, f"{DOC.name} block {i}", "exec"), namespace)
    out = capsys.readouterr().out
    assert "Results(policy='fcfs', jobs=100)" in out and "unknown keyword 'jbos'" in out
    assert (tmp_path / "runs" / "tutorial" / "jobs.parquet").is_file()
