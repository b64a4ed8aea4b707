"""Helpers shared by the live-runtime tests."""

from __future__ import annotations

from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NAMESPACE = "dlsched-tests"


def run_service(state_dir, policy, job_files=(), *, on_tick=None, listener=None, **cfg):
    """Run a service in this process until every job is done; returns the service.

    ``on_tick(service)`` runs after every scheduler step (fault injection);
    ``listener`` is set as the store's event listener (what ``serve`` prints).
    """
    import time

    from dlsched.live.jobfile import load_jobs
    from dlsched.live.service import LiveService, ServiceConfig
    from dlsched.live.store import Store

    store = Store(state_dir)
    store.listener = listener
    config = ServiceConfig(exit_when_done=True, namespace=NAMESPACE, stop_workers_on_exit=False,
                           max_time_s=cfg.pop("max_time_s", 240.0), **cfg)
    service = LiveService(store, policy, config)
    for f in job_files:
        store.submit(load_jobs(f))
    try:
        while not service.step():
            if on_tick is not None:
                on_tick(service)
            time.sleep(config.tick_s)
    finally:
        service.close()
    return service


def check_all_finished(store, expected: dict[str, int]) -> None:
    """Every job finished exactly once with exactly its iterations, and never ran twice at once."""
    rows = {r["job_id"]: r for r in store.jobs()}
    assert set(rows) == set(expected)
    for jid, total in expected.items():
        assert rows[jid]["status"] == "finished", (jid, rows[jid]["status"], rows[jid]["reason"])
        assert rows[jid]["done_iterations"] == total
    finishes = [e["job_id"] for e in store.events("finish")]
    assert sorted(finishes) == sorted(expected)  # none finished twice
    for jid in expected:
        segs = [s for s in store.segments(jid) if s["launched_at"] is not None]
        for a, b in zip(segs, segs[1:]):
            assert a["ended_at"] is not None and b["launched_at"] >= a["ended_at"], (jid, a, b)
        last = segs[-1]
        assert last["state"] == "finished" and last["iter_end"] == expected[jid]


def final_checkpoint(store, job_id: str) -> int:
    from dlsched.live.checkpoints import read_checkpoint_meta

    return read_checkpoint_meta(store.checkpoint_root / job_id)["iteration"]
