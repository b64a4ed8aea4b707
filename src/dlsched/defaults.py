"""Run and engine cost defaults, in one place and free of imports.

``SimConfig`` (the simulator), ``EngineCosts`` (the execution core), ``RunSpec`` (a run) and
the command line's flags all take their defaults from here; the CLI reads them without
importing the engine or the run layer, so start-up stays cheap.
"""

CLUSTER = "crius-sim"
# the embedded default workload is the benchmark trace: 13,000 Philly-like jobs in two weeks
JOBS = 13000
DAYS = 14.0
PLACEMENTS = ("packed", "first-free")  # how job policies place jobs (cluster/oblivious.py)

START_OVERHEAD_S = 0.0  # launching a job the first time
# resume/migrate/resize/replan: a fixed part (Gandiva: suspend-resume under 1 s, migration seconds) ...
RESTORE_BASE_S = 5.0
RESTORE_S_PER_GB = 2.0  # ... plus this per GB of model state (weights + optimizer)
CHECKPOINT_INTERVAL_S = None  # None: checkpoint at every preemption, no work lost
SLICE_QUANTUM_S = 60.0  # time-sliced ("sliced") jobs take turns by this quantum (Gandiva's default) ...
SLICE_SWITCH_S = 1.0  # ... each turn paying a suspend + resume (Gandiva: < 1 s each way)
