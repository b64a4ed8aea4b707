"""The reference data folder: --data, then $DLSCHED_DATA, then ../shared or ./shared from the
working directory; never the package's own location."""

from __future__ import annotations

import pytest

from dlsched import shared_data
from dlsched.cli import split_data_option


@pytest.fixture(autouse=True)
def _no_choice():
    before = shared_data.chosen()
    shared_data.set_data_dir(None)
    yield
    shared_data.set_data_dir(before)


def test_beside_the_working_directory_then_inside_it(tmp_path):
    checkout = tmp_path / "repo"
    checkout.mkdir()
    assert shared_data.shared_dir(cwd=checkout, env={}) == tmp_path / "shared"  # named though missing
    (checkout / "shared").mkdir()
    assert shared_data.shared_dir(cwd=checkout, env={}) == checkout / "shared"
    (tmp_path / "shared").mkdir()
    assert shared_data.shared_dir(cwd=checkout, env={}) == tmp_path / "shared"


def test_environment_then_data_option_win(tmp_path):
    (tmp_path / "shared").mkdir()
    env = {shared_data.ENV: str(tmp_path / "elsewhere")}
    assert shared_data.shared_dir(cwd=tmp_path / "x", env=env) == tmp_path / "elsewhere"
    shared_data.set_data_dir(tmp_path / "given")
    assert shared_data.shared_dir(cwd=tmp_path / "x", env=env) == tmp_path / "given"


def test_never_from_the_package_location(tmp_path):
    places = [p for p, _ in shared_data.candidates(cwd=tmp_path, env={})]
    assert all(tmp_path in p.parents or p.parent == tmp_path.parent for p in places)


@pytest.mark.parametrize("argv, data, rest", [
    (["--data", "/d", "reproduce", "crius"], "/d", ["reproduce", "crius"]),
    (["reproduce", "crius", "--quick", "--data=/d"], "/d", ["reproduce", "crius", "--quick"]),
    (["--jobs", "5"], None, ["--jobs", "5"]),
])
def test_data_is_global_wherever_given(argv, data, rest):
    assert split_data_option(argv) == (data, rest)


def test_main_applies_data_for_the_command_and_restores_it(tmp_path, monkeypatch, capsys):
    from dlsched import cli

    seen = []
    monkeypatch.setattr(cli, "_main", lambda argv, data, entry=False: seen.append(shared_data.shared_dir()) or 0)
    assert cli.main(["--data", str(tmp_path), "policies"]) == 0
    assert seen == [tmp_path] and shared_data.chosen() is None
