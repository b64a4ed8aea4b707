"""dlsched.simulate / compare / load_results: the command line's runs, as data frames."""

from __future__ import annotations

import subprocess
import sys

import pytest

import dlsched
from dlsched.cli import main
from dlsched.errors import InputError

FLAGS = dict(cluster="crius-testbed", policy="tiresias", jobs=80, days=0.05, seed=3, placement="first-free",
             restore_base=7.0)


def test_same_keywords_same_bytes_as_the_command_line(tmp_path, capsys):
    dlsched.simulate(**FLAGS, out=tmp_path / "api")
    assert main(["simulate", "--cluster", "crius-testbed", "--policy", "tiresias", "--jobs", "80", "--days", "0.05",
                 "--seed", "3", "--placement", "first-free", "--restore-base", "7", "--quiet",
                 "--out", str(tmp_path / "cli")]) == 0
    for name in ("jobs.csv", "series.csv", "summary.json"):
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name


def test_parquet_holds_what_csv_holds_and_report_reads_it(tmp_path, capsys):
    as_csv = dlsched.simulate(**FLAGS, out=tmp_path / "c")
    as_pq = dlsched.simulate(**FLAGS, out=tmp_path / "p", out_format="parquet")
    assert not (tmp_path / "p" / "jobs.csv").exists() and (tmp_path / "p" / "jobs.parquet").exists()
    assert as_pq.jobs.equals(as_csv.jobs) and as_pq.series.equals(as_csv.series)
    assert main(["report", str(tmp_path / "c")]) == 0
    from_csv = capsys.readouterr().out
    assert main(["report", str(tmp_path / "p")]) == 0
    assert capsys.readouterr().out == from_csv


def test_compare_shares_jobs_and_loads_back(tmp_path):
    got = dlsched.compare(policies=["fcfs", "tiresias"], cluster="crius-testbed", jobs=60, days=0.05,
                          out=tmp_path / "cmp", option=["tiresias.round_s=30"])
    assert list(got) == ["fcfs", "tiresias"] and got["tiresias"].params["policy_options"]["round_s"] == 30.0
    assert sorted(got["fcfs"].jobs.job_id) == sorted(got["tiresias"].jobs.job_id)
    again = dlsched.load_results(tmp_path / "cmp")
    assert list(again) == ["fcfs", "tiresias"] and again.table().shape[0] == 2


@pytest.mark.parametrize("call, field", [
    (lambda: dlsched.simulate(jbos=3), "jbos"),
    (lambda: dlsched.simulate(policy="nope", jobs=3), None),
    (lambda: dlsched.simulate(jobs=3, out_format="xlsx"), "out_format"),
    (lambda: dlsched.simulate(spec={"workload": {"jobs": 3}}, seed=2), "spec"),
    (lambda: dlsched.compare(policies=[]), "policies"),
])
def test_bad_keywords_are_input_errors(call, field):
    with pytest.raises(InputError) as e:
        call()
    if field:
        assert e.value.field == field


def test_import_and_version_stay_cheap():
    code = "import sys, dlsched; assert 'pandas' not in sys.modules and 'dlsched.api' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
