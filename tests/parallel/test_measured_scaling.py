"""The Crius authors' measured iteration times and the script that sets ours beside them.

Only plumbing is checked here (the data parse, every row resolves, nothing is
dropped silently); how close the model comes is measured by
experiments/crius/measured_scaling.py and reported in docs/perf-model.md, not asserted.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

from dlsched.cluster import Cluster
from dlsched.cluster.gpus import gpu_type
from dlsched.perf.parallel import CellEstimator
from dlsched.workload.models import get_model

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "crius" / "measured_scaling.py"


@pytest.fixture(scope="module")
def ms():
    spec = importlib.util.spec_from_file_location("measured_scaling", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def est():
    return CellEstimator(Cluster.load("crius-revision"))


def test_csv_cites_its_source_and_parses(ms):
    head = [ln for ln in ms.CSV.read_text().splitlines() if ln.startswith("#")]
    text = "\n".join(head)
    assert "sjtu-epcc/arena" in text and "65573a223f2b63d3092ccad313a746a0c45f01be" in text
    assert "Apache" in text and "avg_iter_s" in text
    rows = ms.load_rows()
    assert len(rows) == 198  # every record of the file
    assert len({(r.group, r.hosts, r.gpus_per_host) for r in rows}) == len(rows)
    assert all(r.iter_s > 0 and r.batch > 0 and r.n_gpus in (1, 2, 4, 8, 16) for r in rows)


def test_every_row_maps_to_a_zoo_model_and_a_catalogue_gpu(ms):
    for r in ms.load_rows():
        m = get_model(r.model, r.params)
        assert m.variant is not None
        assert gpu_type(r.gpu).name in ("H100", "L20")


def test_revision_cluster_and_l20():
    c = Cluster.load("crius-revision")
    assert {(n.gpu.name, n.num_gpus) for n in c.nodes} == {("H100", 8), ("L20", 16)}
    l20 = gpu_type("l20")
    assert (l20.memory_gib, l20.fp16_tflops, l20.mem_bw_gbs) == (48, 119.5, 864)


def test_compare_prices_or_explains_every_row(ms, est):
    rows = ms.load_rows()
    extra = [ms.Measured("gpt9", "1B", 128, "h100", 1, 1, 1.0),  # not in the zoo
             ms.Measured("bert", "1.3B", 128, "k9000", 1, 1, 1.0),  # not in the catalogue
             ms.Measured("bert", "1.3B", 128, "V100", 1, 1, 1.0),  # catalogue, not this cluster
             ms.Measured("bert", "6.7B", 512, "l20", 1, 1, 1.0)]  # does not fit one L20
    priced, unpriced = ms.compare(rows + extra, est)
    assert len(priced) + len(unpriced) == len(rows) + len(extra)
    assert all(math.isfinite(p.ours_s) and p.ours_s > 0 and p.plan for p in priced)
    reasons = {(r.model, r.gpu): why for r, why in unpriced}
    assert "unknown model" in reasons[("gpt9", "h100")]
    assert "k9000" in reasons[("bert", "k9000")] and "V100" in reasons[("bert", "V100")]
    assert "out of memory" in reasons[("bert", "l20")]
    # speedups: one entry per priced row, the group's smallest count first at 1.0
    sp = ms.speedups(priced)
    assert sum(len(e) for e in sp.values()) == len(priced)
    assert all(e[0][1] == e[0][2] == 1.0 for e in sp.values())
