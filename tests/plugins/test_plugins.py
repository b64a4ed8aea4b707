"""Extension without editing the package: policies, comm policies, readers, perf models and clusters
from a file outside the package (``file.py:Attr``), a module (``module:Attr``) or an installed
distribution's entry point, through one ``Registry`` type."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dlsched.cli import main
from dlsched.errors import InputError
from dlsched.registry import Registry, is_reference

ROOT = Path(__file__).resolve().parents[2]
SJF = ROOT / "examples" / "plugins" / "sjf.py"
SMALL = ["--cluster", "crius-testbed", "--jobs", "60", "--days", "0.2", "--quiet"]


def _cli(args, cwd, env_extra=None):
    env = {**os.environ, **(env_extra or {})}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env_extra or {}).get("PYTHONPATH", "").split(os.pathsep)
                                        + [str(ROOT / "src")] if p)
    return subprocess.run([sys.executable, "-m", "dlsched.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_reference_syntax():
    assert is_reference("x.py:SJF") and is_reference("pkg.mod:SJF") and is_reference("dir/x.py")
    assert not is_reference("fcfs") and not is_reference("fcfs-backfill") and not is_reference("a:")


def test_file_policy_runs_in_simulate_and_compare(tmp_path, capsys):
    ref = f"{SJF}:SJF"
    assert main(["simulate", *SMALL, "--policy", ref, "--out", str(tmp_path / "one")]) == 0
    summary = json.loads((tmp_path / "one" / "summary.json").read_text())
    assert summary["summary"]["finished"] == 60
    prov = json.loads((tmp_path / "one" / "provenance.json").read_text())
    (plugin,) = [p for p in prov["plugins"] if p["kind"] == "policy"]
    assert plugin["origin"] == "file" and plugin["source"] == f"{SJF}:SJF" and len(plugin["sha256"]) == 64
    assert main(["compare", *SMALL, "--policies", f"fcfs,{ref}", "--option", f"{ref}.max_starts=5",
                 "--out", str(tmp_path / "cmp")]) == 0
    assert {p.name for p in (tmp_path / "cmp").iterdir() if p.is_dir()} == {"fcfs", "sjf"}
    doc = json.loads((tmp_path / "cmp" / "sjf" / "summary.json").read_text())
    assert doc["params"]["policy_options"] == {"max_starts": 5}
    assert "sjf" in capsys.readouterr().out


def test_file_policy_in_an_experiment_file_is_relative_to_it(tmp_path):
    plug = tmp_path / "plug"
    plug.mkdir()
    (plug / "sjf.py").write_text(SJF.read_text())
    (tmp_path / "exp.yaml").write_text(textwrap.dedent("""\
        name: plugin
        cluster: crius-testbed
        workload: {synthetic: {jobs: 30, days: 0.2}}
        policies: [fcfs, {name: plug/sjf.py:SJF, options: {max_starts: 3}}]
        seeds: [0]
        """))
    assert main(["run", str(tmp_path / "exp.yaml"), "--out", str(tmp_path / "out"), "--workers", "1"]) == 0
    found = {p.parent.name for p in (tmp_path / "out").rglob("summary.json")}
    assert {"fcfs", "sjf"} <= found


def test_policies_lists_a_file_plugin_with_its_origin_and_options(capsys):
    assert main(["policies", f"{SJF}:SJF"]) == 0
    out = capsys.readouterr().out
    assert "shortest job first" in out and "[file:" in out and "--option max_starts=<int>" in out


@pytest.mark.parametrize("body, expect", [
    ("def broken(:\n", "line 1"),
    ("raise RuntimeError('boom')\n", "RuntimeError: boom"),
    ("class NotAPolicy:\n    pass\n", "no schedule(view, now) method"),
])
def test_bad_plugin_files_are_input_errors_naming_the_file(tmp_path, body, expect):
    path = tmp_path / "bad.py"
    path.write_text(body)
    from dlsched.policies.registry import policy_class

    attr = "NotAPolicy" if "NotAPolicy" in body else "X"
    with pytest.raises(InputError) as e:
        policy_class(f"{path}:{attr}")
    assert expect in str(e.value)
    assert str(path) in str(e.value) or "NotAPolicy" in str(e.value)


def test_unknown_names_and_files(tmp_path):
    from dlsched.policies.registry import policy_class

    with pytest.raises(InputError, match="no such plugin file"):
        policy_class(f"{tmp_path}/missing.py:X")
    with pytest.raises(InputError, match="unknown attribute"):
        policy_class(f"{SJF}:Nope")
    with pytest.raises(InputError, match="cannot import module"):
        policy_class("no_such_module_xyz:X")
    with pytest.raises(InputError, match="unknown policy 'nope'"):
        policy_class("nope")


def test_a_file_without_attr_picks_its_one_policy():
    from dlsched.policies.registry import policy_class

    assert policy_class(str(SJF)).__name__ == "SJF"


def _write_distribution(site: Path) -> None:
    """A distribution 'dlsched-extras' as pip would leave it: a module and a dist-info with entry points."""
    (site / "extras_plugins.py").write_text(textwrap.dedent(f'''\
        from pathlib import Path
        import importlib.util
        _spec = importlib.util.spec_from_file_location("extras_sjf", {str(SJF)!r})
        _mod = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(_mod)

        class LongestFirst(_mod.SJF):
            name = "ljf"
            summary = "longest job first (a plugin test)"
            def schedule(self, view, now):
                return super().schedule(view, now)

        def ecmp_again():
            from dlsched.comm.ecmp import Ecmp
            return Ecmp()
        ecmp_again.summary = "ECMP, from a plugin"

        def simple_model(cluster):
            from dlsched.perf.base import SimplePerfModel
            return SimplePerfModel(cluster)

        def read_tiny(path, skip_bad_rows=False, **options):
            import dataclasses
            from dlsched.workload.readers import read_trace
            load = read_trace(path, fmt="dlsched", skip_bad_rows=skip_bad_rows)
            return dataclasses.replace(load, jobs=[dataclasses.replace(j, job_id="tiny-" + j.job_id)
                                                   for j in load.jobs])
        read_tiny.columns = {{"job_id", "submit_time", "model", "num_gpus", "tiny_marker"}}

        CLUSTER = Path(__file__).with_name("tiny-cluster.yaml")
        '''))
    (site / "tiny-cluster.yaml").write_text(textwrap.dedent("""\
        name: tiny
        node_groups:
          - {name: v100, gpu: V100, nodes: 2, gpus_per_node: 4, intra: {kind: nvlink}, nic_gbps: 100, nodes_per_rack: 2}
        network: {topology: tiered}
        """))
    info = site / "dlsched_extras-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dlsched-extras\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent("""\
        [dlsched.policies]
        ljf = extras_plugins:LongestFirst
        [dlsched.comm_policies]
        ecmp-again = extras_plugins:ecmp_again
        [dlsched.perf_models]
        simple-again = extras_plugins:simple_model
        [dlsched.readers]
        tiny = extras_plugins:read_tiny
        [dlsched.clusters]
        tiny = extras_plugins:CLUSTER
        """))


def test_installed_entry_points_of_every_kind(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    _write_distribution(site)
    env = {"PYTHONPATH": str(site)}
    listed = _cli(["policies"], tmp_path, env)
    assert listed.returncode == 0, listed.stderr
    assert "ljf: longest job first" in listed.stdout and "[entry point: dlsched-extras==0.1" in listed.stdout
    assert "ecmp-again: ECMP, from a plugin" in listed.stdout
    names = _cli(["simulate", "--list"], tmp_path, env)
    assert "ljf" in names.stdout.split("clusters:")[0] and "tiny" in names.stdout.split("clusters:")[1]
    trace = tmp_path / "t.csv"
    trace.write_text("job_id,submit_time,model,num_gpus,duration,tiny_marker\n"
                     "a,0,resnet50,2,600,x\nb,10,resnet50,4,900,x\nc,20,vgg16,1,300,x\n")
    run = _cli(["simulate", "--cluster", "tiny", "--trace", str(trace), "--policy", "ljf", "--perf", "simple-again",
                "--comm", "ecmp-again", "--out", str(tmp_path / "r"), "--quiet"], tmp_path, env)
    assert run.returncode == 0, run.stderr
    doc = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert doc["summary"]["finished"] == 3
    prov = json.loads((tmp_path / "r" / "provenance.json").read_text())
    kinds = {p["kind"]: p for p in prov["plugins"]}
    assert kinds["policy"]["source"] == "dlsched-extras==0.1: extras_plugins:LongestFirst"
    assert {"policy", "communication policy", "perf model", "trace format"} <= set(kinds)
    ids = [line.split(",")[0] for line in (tmp_path / "r" / "jobs.csv").read_text().splitlines()[1:]]
    assert sorted(ids) == ["tiny-a", "tiny-b", "tiny-c"]  # detected by its header, read by the plugin


def test_a_registry_never_lets_a_plugin_shadow_a_builtin():
    reg = Registry("thing", "dlsched.no_such_group", "--thing")
    reg.add("a", "json:dumps")
    assert reg.get("a").__name__ == "dumps" and reg.entry("a").origin == "built-in"
    assert reg.names() == ["a"]
    with pytest.raises(InputError, match="unknown thing 'b'; known: a"):
        reg.get("b")
