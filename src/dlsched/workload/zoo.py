"""Model definitions (placeholder: one model until the full zoo lands)."""

from dlsched.workload.models import Layer, ModelInfo, register

register(ModelInfo("resnet50", "cnn", "image classification",
                   (Layer("body", 25_557_032, 4.1e9),), default_batch=32), "resnet-50")
from dlsched.workload import zoo_large  # noqa: E402,F401  (large scalable models)
