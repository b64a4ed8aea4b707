"""submit / status / cancel talk to the scheduler through its state; no Ray needed."""

from __future__ import annotations

import json

from dlsched.cli import main
from live_helpers import EXAMPLES


def test_submit_status_cancel(tmp_path, capsys):
    state = str(tmp_path / "st")
    assert main(["submit", str(EXAMPLES / "trace6.yaml"), "--state", state]) == 0
    assert "submitted j6" in capsys.readouterr().out
    assert main(["status", "--state", state, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["service"]["state"] == "never"  # submitted while no service has ever run
    assert [r["status"] for r in shown["jobs"]] == ["submitted"] * 6
    assert main(["cancel", "j2", "--state", state]) == 0
    assert "cancel requested" in capsys.readouterr().out
    assert main(["status", "--state", state]) == 0
    assert "j2" in capsys.readouterr().out


def test_errors_are_clear(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nscript: nope.py\nmodel: tiny-cnn\nnum_gpus: 1\niterations: 3\n")
    assert main(["submit", str(bad), "--state", str(tmp_path / "st")]) == 2
    err = capsys.readouterr().err
    assert f"{bad}, line 2, field 'script'" in err
    assert main(["status", "--state", str(tmp_path / "none")]) == 2
    assert "no scheduler state" in capsys.readouterr().err
    assert main(["submit", str(EXAMPLES / "cnn.yaml"), "--state", str(tmp_path / "st")]) == 0
    assert main(["cancel", "nosuch", "--state", str(tmp_path / "st")]) == 2
    assert "no job 'nosuch'" in capsys.readouterr().err
