"""The fits recover parameters that generated a synthetic table (so the fit, not the data, is tested)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from dlsched.cluster.topology import Cluster
from dlsched.perf.calibration import fit as F
from dlsched.perf.calibration import packing as PK
from dlsched.perf.calibration.params import CalibratedParams
from dlsched.perf.parallel.cost import DEFAULT_PARAMS
from dlsched.workload.models import get_model
from dlsched.workload.readers.profiles import IterationRow, MemoryRow

# known "true" figures for bert on A100s: a slower GPU than the defaults, slower links, small-batch overhead
TRUE_EFF, TRUE_INTRA, TRUE_INTER, TRUE_K = 0.3, 0.5, 0.4, 6.0
PLACEMENTS = [(1, 1), (1, 2), (1, 4), (2, 2), (2, 4), (4, 4), (4, 2), (8, 2)]


@pytest.fixture(scope="module")
def cluster():
    return Cluster.load("crius-sim")


def _truth():
    return replace(DEFAULT_PARAMS, family_efficiency=(("A100-40G", "transformer", TRUE_EFF),),
                   link_scale=(("A100-40G", "transformer", TRUE_INTRA, TRUE_INTER),),
                   batch_overhead=(("A100-40G", "transformer", TRUE_K),))


def _synthetic_runs(cluster):
    rows = [IterationRow("bert", size, batch, "A100-40G", nodes, gpn, 1.0, k)
            for k, (size, batch, (nodes, gpn)) in enumerate(
                (s, b, p) for s in ("760M", "1.3B") for b in (128, 512) for p in PLACEMENTS)]
    runs, skipped = F.resolve_runs(rows, cluster)
    assert not skipped
    truth = _truth()
    measured = []
    for r in runs:
        t = F.price_run(r, truth)
        if t is not None:
            measured.append(replace(r, row=replace(r.row, iter_time_s=t)))
    return measured


def test_time_fit_recovers_known_parameters(cluster):
    runs = _synthetic_runs(cluster)
    assert len(runs) >= 20
    fitted = F.fit_times(runs, DEFAULT_PARAMS)
    key = ("A100-40G", "transformer")
    assert fitted.rows == len(runs) and fitted.out_of_memory == 0
    assert fitted.efficiency[key] == pytest.approx(TRUE_EFF, rel=0.05)
    assert fitted.batch_overhead[key] == pytest.approx(TRUE_K, rel=0.25)
    # the links are identified only through communication-bound rows: check what they price
    params = CalibratedParams(efficiency=fitted.efficiency, links=fitted.links,
                              batch_overhead=fitted.batch_overhead).cost_params()
    errors = sorted(abs(F.price_run(r, params) / r.row.iter_time_s - 1) for r in runs)
    # the weak ridge (F.RIDGE) pulls the link scales toward the spec's figures, so a few percent
    # remain on the rows where communication is a small share
    assert errors[len(errors) // 2] < 0.02 and errors[-1] < 0.05
    # and the defaults it started from are far off, so the fit did the work
    start = [abs(F.price_run(r, DEFAULT_PARAMS) / r.row.iter_time_s - 1) for r in runs]
    assert sorted(start)[len(start) // 2] > 0.3


def test_memory_fit_recovers_known_scales():
    rows, true = [], {"transformer": (0.5, 1.5), "moe": (0.8, 0.6)}
    reserve = 2e9
    line = 0
    for family, model, param in (("transformer", "bert", "1.3B"), ("transformer", "bert", "760M"),
                                 ("moe", "moe", "1.3B"), ("moe", "moe", "690M")):
        s, a = true[family]
        for batch in (128, 256):
            for gpus in (1, 2, 4, 8):
                st, act = F._dp_parts(get_model(model, param), batch, gpus, "A100-40G")
                line += 1
                rows.append(MemoryRow(model, param, batch, gpus, s * st + a * act + reserve, line))
    fitted = F.fit_memory(rows)
    for family, (s, a) in true.items():
        assert fitted.scales[family] == pytest.approx((s, a), rel=1e-4)
    assert fitted.reserved_bytes == pytest.approx(reserve, rel=1e-4)
    assert fitted.median_error < 1e-6


def test_headroom_lets_every_measured_run_fit(cluster):
    # a memory model 4x too large calls runs out of memory that were measured: the headroom fixes it
    runs = _synthetic_runs(cluster)
    big = replace(DEFAULT_PARAMS, memory_scale=(("transformer", 4.0, 4.0),))
    assert any(F.price_run(r, big) is None for r in runs)
    shrunk = F.fit_headroom(runs, big)["transformer"]
    assert shrunk[0] < 4.0
    fixed = replace(big, memory_scale=(("transformer", *shrunk),))
    assert all(F.price_run(r, fixed) is not None for r in runs)


def test_headroom_margin_is_the_memory_fits_over_statement(cluster):
    runs = _synthetic_runs(cluster)
    big = replace(DEFAULT_PARAMS, memory_scale=(("transformer", 4.0, 4.0),))
    plain = F.fit_headroom(runs, big)["transformer"]
    mem = F.MemoryFit({}, 0.0, 0, 0.0, over={"transformer": 0.25, "": 0.5})
    assert F.fit_headroom(runs, big, mem)["transformer"] == pytest.approx(tuple(x / 1.25 for x in plain))
    # a family without DP rows takes the pooled figure; an under-statement leaves no margin
    assert mem.margin("moe") == 0.5 and F.MemoryFit({}, 0.0, 0, 0.0, over={"cnn": -0.1}).margin("cnn") == 0.0


def test_activation_traffic_slows_narrow_models_most(cluster):
    """Memory-bound element-wise work grows as S h + a S^2 per layer, GEMMs as S h^2."""
    from dlsched.perf.parallel.hardware import Hardware, TierLinks
    from dlsched.perf.parallel.search import optimal_plan

    hw = Hardware.of("A100-40G", TierLinks.from_cluster(cluster, "A100-40G"))
    traffic = replace(DEFAULT_PARAMS, activation_passes=F.ACTIVATION_PASSES)
    slow = {}
    for param in ("760M", "6.7B"):
        model = get_model("bert", param)
        slow[param] = optimal_plan(model, 256, hw, 8, traffic)[0] / optimal_plan(model, 256, hw, 8)[0]
    assert slow["760M"] > slow["6.7B"] > 1.0
    assert DEFAULT_PARAMS.activation_passes == 0.0  # the analytic model has no such term


def test_packing_fit_recovers_known_figures():
    true_p = {"cnn": 0.4, "rnn": 1.2}
    true_s = {"cnn": 0.7, "rnn": 0.5}
    utils = {"cnn": (0.3, 0.5, 0.9, 0.99), "rnn": (0.4, 0.7, 0.95)}  # spread out: s and p separable
    pairs = []
    for fa, ua in utils.items():
        for fb, ub in utils.items():
            for i, u in enumerate(ua):
                for j, v in enumerate(ub):
                    q = PK.PackedPair(f"{fa}{i}", f"{fb}{j}", fa, fb, u, v, 1.0, 0)
                    pairs.append(q)
    speed = PK.predict(pairs, true_p, true_s)
    pairs = [replace(q, measured=float(m)) for q, m in zip(pairs, speed)]
    fitted = PK.fit_packing(pairs)
    again = PK.predict(pairs, fitted.contention, fitted.utilisation)
    assert max(abs(again / speed - 1)) < 0.005
    # what the model identifies: (1 + p_f) s_f s_g per pair of families (see packing.RIDGE)
    for f in true_p:
        for g in true_p:
            got = (1 + fitted.contention[f]) * fitted.utilisation[f] * fitted.utilisation[g]
            assert got == pytest.approx((1 + true_p[f]) * true_s[f] * true_s[g], rel=0.01)
    # and the defaults are far off (the fit did the work)
    assert max(abs(PK.predict(pairs, {}, {}) / speed - 1)) > 0.2


def test_spread_fit_is_the_median_per_halving():
    rows = [PK.SpreadRow("a", "V100", w, 0.8 ** math.log2(w), k) for k, w in enumerate((2, 4, 8))]
    assert PK.fit_spread(rows) == pytest.approx(0.8)
    assert PK.fit_spread([]) is None


def test_params_file_keeps_activation_passes(tmp_path):
    from dlsched.errors import InputError

    p = CalibratedParams(activation_passes=8.0)
    p.save(tmp_path / "p.json")
    back = CalibratedParams.load(tmp_path / "p.json")
    assert back.activation_passes == 8.0 and back.cost_params().activation_passes == 8.0
    data = p.to_json()
    data["activation_passes"] = -1
    with pytest.raises(InputError, match="activation_passes"):
        CalibratedParams.from_json(data, "x.json")
    del data["activation_passes"]  # files written before the term: none
    assert CalibratedParams.from_json(data, "x.json").activation_passes == 0.0
