"""Job YAML: the examples parse; mistakes are reported with file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlsched.errors import InputError
from dlsched.live.jobfile import load_jobs, parse_jobs

from live_helpers import EXAMPLES


def test_examples_parse():
    jobs = load_jobs(EXAMPLES / "trace6.yaml")
    assert [j.spec.job_id for j in jobs] == ["j1", "j2", "j3", "j4", "j5", "j6"]
    assert jobs[5].delay_s == 1.0 and jobs[0].spec.num_gpus == 2
    assert all(j.script.endswith(("cnn_job.py", "transformer_job.py")) for j in jobs)
    for name in ("cnn.yaml", "transformer.yaml"):
        (job,) = load_jobs(EXAMPLES / name)
        assert job.spec.total_iterations > 0 and job.checkpoint_every > 0


def _err(text: str) -> InputError:
    with pytest.raises(InputError) as e:
        parse_jobs(text, "job.yaml", base=EXAMPLES)
    return e.value


def test_errors_name_file_line_and_field():
    e = _err("name: a\nscript: cnn_job.py\nmodel: tiny-cnn\nnum_gpus: 0\niterations: 5\n")
    assert (e.file, e.line, e.field) == ("job.yaml", 4, "num_gpus")
    e = _err("jobs:\n  - name: a\n    script: cnn_job.py\n    model: no-such-model\n    num_gpus: 1\n"
             "    iterations: 5\n")
    assert (e.line, e.field) == (4, "jobs.0.model") and "unknown model" in str(e)
    e = _err("name: a\nscript: missing.py\nmodel: tiny-cnn\nnum_gpus: 1\niterations: 5\n")
    assert (e.line, e.field) == (2, "script") and "no such script" in str(e)
    e = _err("name: a\nscript: cnn_job.py\nmodel: tiny-cnn\nnum_gpus: 1\niterations: 5\ncolour: red\n")
    assert (e.line, e.field) == (6, "colour")
    e = _err("jobs:\n  - {name: a, script: cnn_job.py, model: tiny-cnn, num_gpus: 1, iterations: 5}\n"
             "  - {name: a, script: cnn_job.py, model: tiny-cnn, num_gpus: 1, iterations: 5}\n")
    assert e.line == 3 and "duplicate" in str(e)
    e = _err("name: [unclosed\n")
    assert e.file == "job.yaml" and "malformed YAML" in str(e)


def test_submit_rejects_a_known_job_id(tmp_path):
    from dlsched.live.store import Store

    store = Store(tmp_path)
    jobs = load_jobs(EXAMPLES / "cnn.yaml")
    store.submit(jobs)
    with pytest.raises(InputError, match="already submitted"):
        store.submit(jobs)
    assert [r["status"] for r in store.jobs()] == ["submitted"]


def test_a_script_outside_the_job_files_folder_is_refused(tmp_path, monkeypatch):
    from dlsched.live.jobfile import SCRIPT_DIRS_ENV, load_jobs

    monkeypatch.delenv(SCRIPT_DIRS_ENV, raising=False)
    sub = tmp_path / "jobs"
    sub.mkdir()
    (tmp_path / "outside.py").write_text("print('x')\n")
    (sub / "inside.py").write_text("print('x')\n")
    up = "../" * len(sub.resolve().parts)  # past the root: the system's own files
    for script in ("../outside.py", up + "etc/hostname", str(tmp_path / "outside.py")):
        (sub / "j.yaml").write_text(f"name: a\nscript: {script}\nmodel: tiny-cnn\nnum_gpus: 1\niterations: 5\n")
        if not (sub / script).exists():
            continue
        with pytest.raises(InputError, match="outside the job file's folder") as e:
            load_jobs(sub / "j.yaml")
        assert e.value.line == 2 and e.value.field == "script"
    (sub / "j.yaml").write_text("name: a\nscript: ../outside.py\nmodel: tiny-cnn\nnum_gpus: 1\niterations: 5\n")
    assert load_jobs(sub / "j.yaml", allow=[tmp_path])[0].script == str(tmp_path / "outside.py")
    monkeypatch.setenv(SCRIPT_DIRS_ENV, str(tmp_path))
    assert len(load_jobs(sub / "j.yaml")) == 1
    (sub / "j.yaml").write_text("name: a\nscript: inside.py\nmodel: tiny-cnn\nnum_gpus: 1\niterations: 5\n")
    monkeypatch.delenv(SCRIPT_DIRS_ENV)
    assert len(load_jobs(sub / "j.yaml")) == 1
