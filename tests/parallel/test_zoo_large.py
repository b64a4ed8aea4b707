"""Large-model zoo: sizes match Table 2 labels, lookups by family and size, expert tagging."""

from __future__ import annotations

import csv

import pytest

from dlsched.workload.models import get_model
from dlsched.workload.zoo_large import (MOE_SPECS, TRANSFORMER_SPECS, WRESNET_SPECS, layer_traits,
                                        large_models, table2_models)


def _billions(label: str) -> float:
    return float(label[:-1]) / (1000 if label.endswith("M") else 1)


@pytest.mark.parametrize("family,table", [("bert", TRANSFORMER_SPECS), ("gpt", TRANSFORMER_SPECS),
                                          ("moe", MOE_SPECS), ("wide_resnet", WRESNET_SPECS)])
def test_parameter_totals_match_size_labels(family, table):
    for label in table:
        m = get_model(family, label)
        assert m.variant == label
        assert m.params / 1e9 == pytest.approx(_billions(label), rel=0.05), (family, label)


def test_table2_has_every_size_of_the_paper():
    sizes = {(m.name.split("-")[0], round(m.params / 1e9, 1)) for m in table2_models()}
    want = {("wide_resnet", x) for x in (0.5, 1.0, 2.0, 4.0, 6.7)} | \
           {("bert", x) for x in (0.8, 1.3, 2.7, 6.7)} | {("moe", x) for x in (0.7, 1.3, 2.4, 10.2, 26.7)}
    assert sizes == want


def test_other_spellings_resolve_to_the_same_model():
    assert get_model("bert", "0.76B") is get_model("bert", "760M")
    assert get_model("wide_resnet", "1.0B") is get_model("wide_resnet", "1B")
    assert get_model("wresnet", "500M") is get_model("wide_resnet", "0.5B")
    assert get_model("moe", "0.69B").name == "moe-690m"


def test_expert_layers_are_tagged_and_carry_all_to_all_traffic():
    m = get_model("moe", "2.4B")
    traits = layer_traits(m)
    experts = [i for i, lyr in enumerate(m.layers) if lyr.name.startswith("expert.")]
    assert len(experts) == 8  # every other of 16 layers (GShard)
    assert all(traits[i].a2a_bytes > 0 for i in experts)
    assert all(t.a2a_bytes == 0 for i, t in enumerate(traits) if i not in experts)
    # experts hold most of the parameters
    assert sum(m.layers[i].params for i in experts) > 0.9 * m.params


def test_operator_figures_are_positive_and_consistent():
    for m in large_models():
        assert all(lyr.params >= 0 and lyr.fwd_flops > 0 and lyr.activation_bytes > 0 for lyr in m.layers)
        assert len(layer_traits(m)) == len(m.layers)


def test_every_trace_model_size_resolves(shared_dir):
    path = shared_dir / "anchors" / "traces" / "arena-philly.csv"
    if not path.exists():
        pytest.skip(f"{path} not present")
    with path.open() as f:
        pairs = {(r["model"], r["param_num"]) for r in csv.DictReader(f)}
    for model, size in pairs:
        m = get_model(model, size)
        assert m.params / 1e9 == pytest.approx(_billions(size), rel=0.05)
