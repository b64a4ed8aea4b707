"""Crius's parallelism model: plans, stage determination, agile Cell estimation, tuning.

See docs/crius-parallelism.md for what is modelled and why.
"""

from dlsched.perf.parallel.cost import (
                                        CostParams,
                                        StageCost,
                                        iteration_time,
                                        memory_per_gpu,
                                        pipeline_time,
                                        plan_time,
                                        stage_cost,
)
from dlsched.perf.parallel.estimator import Cell, CellEstimator
from dlsched.perf.parallel.hardware import Hardware, TierLinks, peak_flops
from dlsched.perf.parallel.partition import (
                                        balanced_partition,
                                        stage_counts,
                                        stage_gpus,
                                        stage_partition,
)
from dlsched.perf.parallel.perf_model import AdaptivePerfModel
from dlsched.perf.parallel.plan import Plan, StagePlan, StageSplit
from dlsched.perf.parallel.profile import ModelProfile, profile
from dlsched.perf.parallel.search import (
                                        CellEstimate,
                                        SearchResult,
                                        cell_optimum,
                                        estimate_cell,
                                        optimal_plan,
                                        search_split,
                                        tune_cell,
)
from dlsched.perf.parallel.space import (
                                        degree_options,
                                        endpoint_options,
                                        half_options,
                                        plan_space,
                                        space_size,
)

__all__ = [
                                        "AdaptivePerfModel",
                                        "Cell",
                                        "CellEstimate",
                                        "CellEstimator",
                                        "CostParams",
                                        "Hardware",
                                        "ModelProfile",
                                        "Plan",
                                        "SearchResult",
                                        "StageCost",
                                        "StagePlan",
                                        "StageSplit",
                                        "TierLinks",
                                        "balanced_partition",
                                        "cell_optimum",
                                        "degree_options",
                                        "endpoint_options",
                                        "estimate_cell",
                                        "half_options",
                                        "iteration_time",
                                        "memory_per_gpu",
                                        "optimal_plan",
                                        "peak_flops",
                                        "pipeline_time",
                                        "plan_space",
                                        "plan_time",
                                        "profile",
                                        "search_split",
                                        "space_size",
                                        "stage_cost",
                                        "stage_counts",
                                        "stage_gpus",
                                        "stage_partition",
                                        "tune_cell",
]
