"""Workload: job specs, the model zoo, trace readers, feasibility checks, synthetic generators."""

from dlsched.workload.job import JobSpec
from dlsched.workload.models import Layer, ModelInfo, get_model, model_names, register

__all__ = ["JobSpec", "Layer", "ModelInfo", "get_model", "model_names", "register"]
