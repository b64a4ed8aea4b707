"""The run summary's percentile is numpy's, float for float, without importing numpy.ma."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from dlsched.report.summary import percentile

QS = (0, 1, 25, 50, 95, 99, 99.9, 100, 33.3)


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))


@pytest.mark.parametrize("seed", range(6))
def test_equals_numpy_on_random_arrays(seed):
    rng = np.random.default_rng(seed)
    for n in (1, 2, 3, 7, 20, 101, 1000):
        for x in (rng.exponential(5000.0, n), rng.integers(0, 5, n).astype(float) * 300.0,  # ties
                  np.round(rng.normal(0, 1e6, n), 3)):
            for q in QS:
                assert percentile(x, q) == float(np.percentile(x, q)), (n, q)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's own inf - inf
def test_equals_numpy_at_the_edges():
    cases = [np.array([0.0]), np.array([-0.0, -0.0]), np.array([1.0, np.inf]), np.array([np.inf, np.inf]),
             np.array([3.0, np.nan, 1.0]), np.array([-np.inf, 2.0, 5.0]), np.array([1e308, -1e308, 1e308])]
    for x in cases:
        for q in QS:
            want = float(np.percentile(x, q))
            assert _same(percentile(x, q), want), (x, q, want)


def test_a_run_summary_does_not_import_numpy_ma():
    code = ("import sys, numpy as np; from dlsched.report.summary import percentile; "
            "percentile(np.array([1.0, 5.0, 2.0]), 95); print('numpy.ma' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.split() == ["False"]
