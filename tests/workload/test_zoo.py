"""Model zoo totals against published figures (FLOPs = 2 x multiply-accumulates)."""

from __future__ import annotations

import pytest

from dlsched.workload.models import get_model, model_names

# (name, published parameters, published GMACs or None, source)
PUBLISHED = [
    ("resnet18", 11.69e6, 1.82, "torchvision model table"),
    ("resnet50", 25.56e6, 4.1, "He et al. 2016 / torchvision"),
    ("vgg11", 132.86e6, 7.6, "torchvision"),
    ("vgg16", 138.36e6, 15.5, "Simonyan & Zisserman 2015 / torchvision"),
    ("alexnet", 61.1e6, 0.71, "torchvision"),
    ("mobilenet_v3_large", 5.48e6, 0.22, "Howard et al. 2019, Table 3 (219 M MAdds)"),
    ("inception_v3", 27.16e6, 5.7, "torchvision (with auxiliary head)"),
    ("bert-base", 110e6, None, "Devlin et al. 2019"),
    ("bert-large", 340e6, None, "Devlin et al. 2019"),
    ("gpt2-small", 124e6, None, "Radford et al. 2019 (HF count)"),
    ("gpt2-medium", 355e6, None, "Radford et al. 2019 (HF count)"),
    ("gpt2-large", 774e6, None, "Radford et al. 2019"),
    ("gpt2-xl", 1558e6, None, "Radford et al. 2019"),
    ("transformer", 65e6, None, "Vaswani et al. 2017, Table 3 (base)"),
    ("lstm_lm", 66e6, None, "Zaremba et al. 2014 (large)"),
    ("cyclegan", 2 * 11.378e6 + 2 * 2.765e6, None, "Zhu et al. 2017 (pytorch-CycleGAN printout)"),
]


@pytest.mark.parametrize("name,params,gmacs,source", PUBLISHED)
def test_totals_match_published(name, params, gmacs, source):
    m = get_model(name)
    assert m.params == pytest.approx(params, rel=0.035), source
    if gmacs is not None:
        assert m.fwd_flops == pytest.approx(2e9 * gmacs, rel=0.03), source


def test_exact_torchvision_counts():
    # Our builders reproduce torchvision's parameter counts exactly.
    assert get_model("resnet50").params == 25_557_032
    assert get_model("resnet18").params == 11_689_512
    assert get_model("vgg16").params == 138_357_544
    assert get_model("alexnet").params == 61_100_840
    assert get_model("mobilenet_v3_large").params == 5_483_032
    assert get_model("inception_v3").params == 27_161_264


def test_largest_tensor_structure():
    vgg = get_model("vgg16")
    fc6 = next(lyr for lyr in vgg.layers if lyr.name == "fc6")
    assert fc6.params == 25088 * 4096 + 4096  # 102.8 M
    assert vgg.largest_tensor_fraction == pytest.approx(0.743, abs=0.002)
    # ResNet-50's largest tensor is a 3x3x512x512 convolution (+ batch norm), not a whole block.
    r50 = get_model("resnet50")
    assert max(lyr.params for lyr in r50.layers) == 3 * 3 * 512 * 512 + 2 * 512
    assert len(r50.layers) == 1 + 16 * 3 + 4 + 1  # stem, 16 bottlenecks, 4 projections, fc


def test_every_required_model_and_alias_resolves():
    for name in ("ResNet-18", "resnet-50", "VGG11", "vgg16", "alexnet", "mobilenetv3", "inception-v3",
                 "bert-base", "BERT-large", "gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "gnmt",
                 "lstm-lm", "deepspeech2", "Transformer", "LM", "Recommendation", "CycleGAN", "A3C", "IMAGE"):
        assert get_model(name).params > 0


def test_sized_families_still_work():
    # The Crius families registered by zoo_large are not shadowed by the everyday zoo.
    assert get_model("bert", "1.3B").name == "bert-1.3b"
    assert get_model("bert-large").name == "bert-large"


def test_layers_are_well_formed():
    for name in model_names():
        m = get_model(name)
        assert m.layers and all(lyr.params >= 0 and lyr.fwd_flops >= 0 for lyr in m.layers), name
        assert m.default_batch >= 1 and m.bytes_per_param in (2, 4)


def test_mixed_precision_only_for_large_transformers():
    assert get_model("bert-large").bytes_per_param == 2
    assert get_model("gpt2-xl").bytes_per_param == 2
    assert get_model("resnet50").bytes_per_param == 4
    assert get_model("resnet50").gradient_bytes == 4 * 25_557_032


def test_models_are_built_on_first_lookup_only():
    """Start-up registers every name and alias but builds only the models a run looks up."""
    import subprocess
    import sys

    code = ("from dlsched.workload import models; names = models.model_names(); "
            "m = models.get_model('moe', '2.4B'); r = models.get_model('resnet-50'); "
            "print(len(names), sorted(models._ZOO), m.name, r.name)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    assert int(out[0]) > 30
    assert out[1:] == ["['moe-2.4b',", "'resnet50']", "moe-2.4b", "resnet50"]


def test_every_lazy_entry_builds_the_model_it_names():
    from dlsched.workload import zoo, zoo_large
    from dlsched.workload.models import get_model, model_names

    for name, aliases, _ in zoo._MODELS:
        assert get_model(name).name == name
        assert all(get_model(a) is get_model(name) for a in aliases)
    for fam in zoo_large._FAMILIES:
        for key in fam.table:
            name, aliases = zoo_large._names(fam, key)
            assert name in model_names() and get_model(name).variant == key
            assert all(get_model(a) is get_model(name) for a in aliases)
