"""``serve --submit --load``: the submitted jobs' arrivals moved to an offered load, priced by the
service's own perf model, as simulate's --load (no Ray needed to check it)."""

from __future__ import annotations

import pytest

from dlsched.cli import main


def _jobs():
    from dlsched.live.jobfile import LiveJob
    from dlsched.workload.job import JobSpec

    return [LiveJob(JobSpec(f"j{i}", 0.0, "resnet18", 1 + i % 2, total_iterations=2000 + 500 * i), "/x/train.py",
                    delay_s=30.0 * i) for i in range(6)]


@pytest.mark.parametrize("load", [0.5, 2.0])
def test_arrivals_move_to_the_load_and_sizes_stay(load):
    from dlsched.cluster.topology import Cluster
    from dlsched.commands.serve import at_load
    from dlsched.live.calibrated import MeasuredPerfModel
    from dlsched.workload.load import measure

    cluster = Cluster.load("crius-testbed")
    perf = MeasuredPerfModel(cluster)
    jobs = _jobs()
    moved, offered = at_load(jobs, cluster, perf, load)
    assert offered.offered_load == pytest.approx(load, rel=1e-3)
    again = measure([j.spec.with_(submit_time=j.delay_s) for j in moved], cluster, perf)
    assert again.offered_load == pytest.approx(load, rel=1e-3)
    assert [j.spec for j in moved] == [j.spec for j in jobs]  # only the delays move
    assert moved[0].delay_s == 0.0 and moved[-1].delay_s != jobs[-1].delay_s
    from dlsched.commands.serve import load_line

    assert f"offered load {load:.4g} " in load_line(offered)


def test_load_and_time_scale_together_are_refused_before_ray(tmp_path, capsys):
    assert main(["serve", "--submit", "x.yaml", "--load", "1", "--time-scale", "2", "--state", str(tmp_path)]) == 2
    assert "--load or --time-scale" in capsys.readouterr().err
    assert main(["serve", "--load", "1", "--state", str(tmp_path)]) == 2
    assert "--submit" in capsys.readouterr().err
