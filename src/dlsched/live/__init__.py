"""The live runtime: the same policies driving real PyTorch training on a Ray cluster.

Modules, one purpose each:

- ``raycluster``: start an emulated multi-node Ray cluster with fake GPUs, and read
  any Ray cluster's nodes into a ``ClusterSpec`` plus a GPU-id -> (node, slot) map.
- ``agent``: the helper a training script uses (progress, checkpoints, stop at an
  iteration boundary, elastic restarts with torch.distributed/gloo).
- ``worker``: the Ray actor that owns one (fake) GPU and runs job segments on it.
- ``store``: durable scheduler state in SQLite (WAL).
- ``jobfile``: the job YAML schema with line-accurate errors.
- ``service``: the scheduler loop (ingest, poll, schedule, apply, reconcile).
- ``results``: job records and time series in the simulator's results format.
- ``calibrated``: a perf model measured from a live run, for the fidelity check.

Nothing here imports torch except ``agent`` (which runs inside the workers), so
the scheduler process stays light.
"""
