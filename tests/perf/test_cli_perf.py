"""``dlsched perf`` prints a table per tier and reports bad names clearly."""

from __future__ import annotations

from dlsched.cli import main


def test_perf_command_table(capsys):
    assert main(["perf", "resnet50", "8", "--cluster", "dally-2racks"]) == 0
    out = capsys.readouterr().out
    for word in ("machine", "rack", "network", "comm share", "resnet50"):
        assert word in out


def test_perf_command_variant_and_options(capsys):
    assert main(["perf", "gpt", "16", "--params", "1.3B", "--cluster", "crius-sim", "--no-overlap",
                 "--algorithm", "ring", "--bucket-mb", "0"]) == 0
    assert "gpt-1.3b" in capsys.readouterr().out


def test_perf_command_errors(capsys):
    assert main(["perf", "no-such-model", "8"]) == 2
    assert "unknown model" in capsys.readouterr().err
    assert main(["perf", "resnet50", "8", "--cluster", "gandiva-100", "--gpu-type", "H100"]) == 2
    assert main(["perf", "resnet50", "0"]) == 2
