"""Dally's network-sensitive priority (section IV-B1) and the alternative readings it is tested against.

The formula was lost from the paper's text; ``../shared/seeds/README.md`` gives
the reading used here, INFERRED and labelled so:

    work completed          = iterations done / total iterations
    normalised running time = time in the run queue / (compute time per iteration x total iterations)
    priority                = work completed / normalised running time

Lower = the job suffered more network slowdown = offered resources first and
preempted last.  For a job that has run, it equals ideal compute time of the
iterations done over the wall time spent running them, a number in (0, 1].

Where the text is silent we choose: a job that has not run yet has completed no
work, so its priority is 0 (offered first, as a new job is in Tiresias's LAS).

Alternative readings (``reading`` option; the sensitivity experiment reruns the
comparison under each): "inverted" (normalised running time / work completed:
offers go first to the jobs that ran best), and "attained" (attained service in place
of work completed: GPU seconds held over the GPU seconds of the ideal run.  Substituted
literally into the ratio it is identically 1, since both it and the normalised running
time count wall time holding GPUs, so the reading uses the normalised attained service
alone, a 2D-LAS-like order).
"""

from __future__ import annotations

from dlsched.cluster.placement import ideal_gpus
from dlsched.policies.base import ClusterView, JobState, JobStatus

READINGS = ("inferred", "inverted", "attained")


def ideal_iteration_s(view: ClusterView, job: JobState) -> float:
    """Compute seconds per iteration with no communication (cached per job)."""
    got = job.policy_data.get("dally_ideal_iter_s")
    if got is None:
        t = view.cluster.type_id(job.spec.gpu_type) if job.spec.gpu_type else None
        got = float(view.perf.price(job.spec, ideal_gpus(view.cluster, job.spec.num_gpus, t)).compute)
        job.policy_data["dally_ideal_iter_s"] = got
    return got


def priority(view: ClusterView, job: JobState, now: float, reading: str = "inferred") -> float:
    run = job.run_time
    service = job.gpu_seconds
    if job.status == JobStatus.RUNNING:  # the engine settles lazily: add the stretch since
        run += max(0.0, now - job.updated_at)
        service += job.spec.num_gpus * max(0.0, now - job.updated_at)
    done = view.progress_of(job, now)
    if run <= 0.0 or done <= 0.0:
        return 0.0
    ideal = ideal_iteration_s(view, job) * job.total_iterations
    normalised_run = run / ideal
    if reading == "attained":
        return service / (job.spec.num_gpus * ideal)
    work = done / job.total_iterations
    if reading == "inverted":
        return normalised_run / work
    return work / normalised_run


def running_priorities(view: ClusterView, jobs, now: float, reading: str = "inferred") -> list[float]:
    """``priority`` of each of ``jobs``, all running: the same floats, worked out in one loop
    (a preemption round asks it of every running job, where the calls cost more than the sums)."""
    out = []
    append = out.append
    for job in jobs:
        # priority() and ClusterView.progress_of written out; max(0.0, x) is ``x if x > 0.0 else 0.0``
        updated = job.updated_at
        since = now - updated
        if not since > 0.0:
            since = 0.0
        run = job.run_time + since
        ready = job.ready_at
        start = ready if ready > updated else updated
        ran = now - start
        if not ran > 0.0:
            ran = 0.0
        total = job.total_iterations
        done = job.done_iterations + job.rate * ran
        cap = float(total)
        done = done if done < cap else cap  # min(cap, done)
        if run <= 0.0 or done <= 0.0:
            append(0.0)
            continue
        ideal_it = job.policy_data.get("dally_ideal_iter_s")
        ideal = (ideal_it if ideal_it is not None else ideal_iteration_s(view, job)) * total
        normalised_run = run / ideal
        if reading == "attained":
            append((job.gpu_seconds + job.spec.num_gpus * since) / (job.spec.num_gpus * ideal))
        elif reading == "inverted":
            append(normalised_run / (done / total))
        else:
            append((done / total) / normalised_run)
    return out
