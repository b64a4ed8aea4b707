"""Start-up stays cheap: `--version` and `simulate --list` import no heavy library.

The CPU-time figure is measured by benchmarks/bench_startup.py; this test checks the cause
(what gets imported), which does not depend on the machine's speed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dlsched.policies.names import declared_policy_names
from dlsched.policies.registry import policy_names

SRC = Path(__file__).resolve().parents[2] / "src"
HEAVY = ("numpy", "scipy", "pydantic", "rich", "yaml", "pandas", "networkx", "numba", "ray", "torch",
         "dlsched.workload.zoo", "dlsched.sim.engine", "dlsched.policies.base")

PROBE = """
import json, sys
from dlsched.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""


@pytest.mark.parametrize("argv", [["--version"], ["simulate", "--list"]])
def test_startup_imports_nothing_heavy(argv):
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, env=env,
                         check=True).stdout
    modules = json.loads(out.strip().splitlines()[-1])
    loaded = [m for m in HEAVY if m in modules]
    assert not loaded, f"{' '.join(argv)} imports {loaded}"


def test_listed_policy_names_match_the_registry():
    assert declared_policy_names() == policy_names()


def test_a_fcfs_run_imports_no_lp_solver():
    # make_policy imports only the module that registers the name: scipy (the LP policies'
    # solver, about 0.4 CPU s to import) is not paid by a FCFS run
    probe = ("import json, sys\nfrom dlsched.policies.registry import make_policy\n"
             "make_policy('fcfs-backfill')\nprint(json.dumps(sorted(sys.modules)))\n")
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env,
                         check=True).stdout
    modules = json.loads(out.strip().splitlines()[-1])
    assert "scipy" not in modules
    assert "dlsched.policies.gavel.policy" not in modules and "dlsched.policies.fcfs" in modules


def test_a_policy_home_is_the_module_every_source_names():
    from dlsched.policies.names import declared_policy_modules, policy_home

    homes = declared_policy_modules()
    assert {name: policy_home(name) for name in homes} == homes
    assert policy_home("no-such-policy") is None
