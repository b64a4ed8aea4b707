"""The columnar CSV writer writes the same bytes as formatting each field through the csv module."""

from __future__ import annotations

import csv
import io
import math
import random

import pytest

from dlsched.cluster import Cluster
from dlsched.policies.registry import make_policy
from dlsched.report.columns import fmt_value, write_rows
from dlsched.report.io import write_results
from dlsched.report.records import JobRecord
from dlsched.sim import SimConfig, Simulator
from dlsched.workload.synthetic import philly_like


def _reference(rows) -> str:
    """The writer before the columnar one: ``fmt_value`` per field, then ``csv.writer``."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for row in rows:
        w.writerow([fmt_value(v) for v in row])
    return buf.getvalue()


@pytest.fixture(params=["numpy", "compiled"])
def compiled(request):
    """Both writers: numpy's byte matrices and the compiled one (report/csv_kernel.py)."""
    if request.param == "compiled":
        pytest.importorskip("numba")
    return request.param == "compiled"


def _columnar(rows, compiled=False) -> str:
    buf = io.BytesIO()
    write_rows(buf, [list(c) for c in zip(*rows)] if rows else [], "utf-8", compiled=compiled)
    return buf.getvalue().decode("utf-8")


def _hard_floats(rng: random.Random, n: int) -> list:
    """Values near every edge of the fast path: halves at the 7th decimal, exponent form,
    15-17 digits, zeros of both signs, non-finite values, None."""
    edge = [0.0, -0.0, 1e-4, 9.99999e-5, 5e-7, -5e-7, 4.9999999e-7, 0.0078125, 2.675, 1e9, 999999999.9999995,
            123456789.123456789, 1e15, 1e16, -1e-9, 1.5e-6, 2.5e-6, math.inf, -math.inf, math.nan, None,
            0.1 + 0.2, 1 / 3, 2.0**53, 1e-300, 5e-324]
    out = list(edge)
    for _ in range(n):
        e = rng.choice([rng.uniform(-8, 12), rng.uniform(-4, 9)])
        v = rng.choice([-1, 1]) * 10 ** e
        r = rng.random()
        if r < 0.2:
            v = round(v, rng.randint(0, 9))
        elif r < 0.4:
            v = (math.floor(v * 1e6) + 0.5) / 1e6  # a half at the seventh decimal, as near as a double gets
        elif r < 0.45:
            v = float(rng.randint(-10**6, 10**6)) / 64
        out.append(v)
    return out


def test_float_columns_match_the_csv_module(compiled):
    rng = random.Random(7)
    vals = _hard_floats(rng, 20_000)
    assert set(map(type, vals)) == {float, type(None)}  # the fast path's column, not the mixed one
    rows = [(v, 0) for v in vals]  # two fields: csv quotes the empty field of a one-field row
    assert _columnar(rows, compiled) == _reference(rows)


def test_mixed_and_quoted_columns_match(compiled):
    rows = [("a,b", 1, 2.5, None, 'say "hi"', True, 3),
            ("plain", 2, 3, 1.0, "line\nbreak", False, 4.25),
            ("", -3, None, -0.0, "cr\rhere", None, "x"),
            ("ünï", 10**20, 1e-5, 5e-324, "", 0, -7)]
    assert _columnar(rows, compiled) == _reference(rows)


def test_results_files_equal_the_old_writer(tmp_path, compiled, monkeypatch):
    from dlsched.report import io as report_io

    monkeypatch.setattr(report_io, "COMPILED_ROWS", 0 if compiled else 10**12)
    cluster = Cluster.load("crius-sim")
    jobs = philly_like(cluster, n_jobs=600, days=0.7, seed=3)
    res = Simulator(cluster, make_policy("fcfs-backfill"), jobs, config=SimConfig(seed=3)).run()
    out = write_results(tmp_path, res.records, res.series, res.summary, {})
    header = ",".join(JobRecord.columns()) + "\n"
    assert (out / "jobs.csv").read_text() == header + _reference([r.row() for r in res.records])
    cols = res.series.columns()
    assert (out / "series.csv").read_text() == ",".join(cols) + "\n" + _reference(list(zip(*cols.values())))


def test_int_string_and_empty_columns_match(compiled):
    rng = random.Random(3)
    ints = [0, -1, 9, 10, -10**17, 10**17 - 1] + [rng.randint(-10**12, 10**12) for _ in range(2000)]
    strs = ["a", "", "b,c", "n\0ul", "x" * 40] + [str(rng.random()) for _ in range(len(ints) - 5)]
    rows = [(i, s, None, float(i), "") for i, s in zip(ints, strs)]
    assert _columnar(rows, compiled) == _reference(rows)
    rows = [(i, s) for i, s in zip(ints, strs) if "\0" not in s]
    assert _columnar(rows, compiled) == _reference(rows)
