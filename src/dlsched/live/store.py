"""Durable scheduler state in SQLite (WAL mode).

Everything the scheduler must not forget lives here: submitted jobs and
their accounting, each run segment (where, when, from which iteration),
checkpoints seen, per-job progress samples, events (what the records and
tests inspect) and the cluster time series.  ``submit``/``status``/``cancel``
talk to the running service only through this file: WAL lets them read and
write while the service does, and a submission survives the service being
down.

Times are seconds on the scheduler clock: wall time minus the ``epoch``
written when the store is created, so a restarted service continues the
same time axis.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path

from dlsched.errors import InputError
from dlsched.live.private import private_dir, private_file

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
    job_id TEXT PRIMARY KEY,
    body TEXT NOT NULL,                 -- LiveJob as JSON
    submitted_wall REAL NOT NULL,
    arrival REAL,                       -- scheduler clock; NULL until the service takes it in
    status TEXT NOT NULL,               -- submitted|pending|running|suspended|finished|dropped|failed|unschedulable
    total_iterations INTEGER NOT NULL,
    done_iterations REAL NOT NULL DEFAULT 0,
    checkpoint_iteration INTEGER NOT NULL DEFAULT 0,
    allocation TEXT,                    -- JSON list of GPU ids while placed
    mode TEXT NOT NULL DEFAULT 'exclusive', -- the allocation's sharing mode: exclusive|packed|sliced
    segment INTEGER NOT NULL DEFAULT 0, -- the latest segment number
    first_start REAL, finish_time REAL,
    queued_since REAL NOT NULL DEFAULT 0, queued_time REAL NOT NULL DEFAULT 0,
    run_time REAL NOT NULL DEFAULT 0, gpu_seconds REAL NOT NULL DEFAULT 0,
    restarts INTEGER NOT NULL DEFAULT 0, migrations INTEGER NOT NULL DEFAULT 0,
    resizes INTEGER NOT NULL DEFAULT 0,
    held_since REAL,                    -- when it last got GPUs (run_time accounting)
    reason TEXT NOT NULL DEFAULT '',
    cancel_requested INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS segments (
    job_id TEXT NOT NULL, segment INTEGER NOT NULL,
    kind TEXT NOT NULL,                 -- start|resume|migrate|resize|replan|slice-resume
    gpus TEXT NOT NULL,
    placed_at REAL NOT NULL, launched_at REAL, ready_at REAL, ended_at REAL,
    iter_start INTEGER, iter_end INTEGER,
    iter_time REAL, timed_iterations INTEGER,
    state TEXT NOT NULL,                -- waiting|launching|running|stopping|finished|stopped|failed|abandoned
    mode TEXT NOT NULL DEFAULT 'exclusive', -- sharing mode it ran in; 'mixed' if it changed while it ran
    PRIMARY KEY (job_id, segment)
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL, job_id TEXT, kind TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS checkpoints (
    job_id TEXT NOT NULL, iteration INTEGER NOT NULL, segment INTEGER NOT NULL, time REAL NOT NULL,
    PRIMARY KEY (job_id, iteration)
);
CREATE TABLE IF NOT EXISTS progress (
    job_id TEXT NOT NULL, time REAL NOT NULL, iterations REAL NOT NULL, rate REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS series (
    time REAL NOT NULL, busy INTEGER NOT NULL, running INTEGER NOT NULL, queued INTEGER NOT NULL,
    throughput REAL NOT NULL
);
"""

ACTIVE = ("pending", "running", "suspended")
# a job in one of these will not run again: nothing to wait for
ENDED = ("finished", "dropped", "failed", "unschedulable")


class Store:
    def __init__(self, state_dir: str | Path):
        self.dir = private_dir(state_dir)  # 0700: jobs, errors and checkpoints are the owner's alone
        self.path = private_file(self.dir / "state.sqlite")  # 0600; SQLite gives -wal and -shm its mode
        # autocommit; multi-statement changes go through tx() so they land together
        self.db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable across process crashes
        self.db.executescript(SCHEMA)  # idempotent (IF NOT EXISTS); runs outside any transaction
        for table in ("jobs", "segments"):  # a store from before live GPU sharing
            if "mode" not in {r[1] for r in self.db.execute(f"PRAGMA table_info({table})")}:
                self.db.execute(f"ALTER TABLE {table} ADD COLUMN mode TEXT NOT NULL DEFAULT 'exclusive'")
        self.db.execute("INSERT OR IGNORE INTO meta VALUES ('epoch', ?)", (repr(time.time()),))
        self.epoch = float(self.get_meta("epoch"))
        # called with (time, job_id, kind, detail) after every event: the service's live feedback
        self.listener = None

    @property
    def checkpoint_root(self) -> Path:
        return self.dir / "checkpoints"

    def close(self) -> None:
        self.db.close()

    def now(self) -> float:
        return time.time() - self.epoch

    @contextmanager
    def tx(self):
        """One transaction; nested uses join the outermost one (it commits or rolls back all)."""
        if self.db.in_transaction:
            yield self.db
            return
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # ------------------------------------------------------------------ meta

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else row[0]

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                        (key, value))

    # ------------------------------------------------------------------ service heartbeat

    def beat(self, pid: int, stopped: bool = False) -> None:
        """The service is alive (written every few ticks); ``stopped`` when it leaves cleanly."""
        self.set_meta("heartbeat", json.dumps({"wall": time.time(), "pid": pid, "host": socket.gethostname(),
                                               "stopped": stopped}))

    def heartbeat(self) -> dict | None:
        """The last heartbeat, with its ``age_s``; None if no service ever ran on this state."""
        text = self.get_meta("heartbeat")
        if text is None:
            return None
        hb = json.loads(text)
        return {**hb, "age_s": max(0.0, time.time() - hb["wall"])}

    def layout_json(self) -> str | None:
        """The cluster layout the service stored on its first start (None before that)."""
        return self.get_meta("layout")

    # ------------------------------------------------------------------ client side

    def submit(self, jobs, source: str = "") -> None:
        """Add jobs (LiveJob) atomically; a job id already known is an error naming it."""
        wall = time.time()
        with self.tx():
            for job in jobs:
                jid = job.spec.job_id
                if self.db.execute("SELECT 1 FROM jobs WHERE job_id=?", (jid,)).fetchone():
                    raise InputError(f"job '{jid}' was already submitted to this scheduler", file=source or None,
                                     field="name")
                self.db.execute("INSERT INTO jobs (job_id, body, submitted_wall, status, total_iterations) "
                                "VALUES (?, ?, ?, 'submitted', ?)",
                                (jid, job.to_json(), wall, job.spec.total_iterations))

    def request_cancel(self, job_id: str) -> str:
        row = self.db.execute("SELECT status FROM jobs WHERE job_id=?", (job_id,)).fetchone()
        if row is None:
            raise InputError(f"no job '{job_id}' in {self.path}")
        if row[0] in ENDED:
            return row[0]
        self.db.execute("UPDATE jobs SET cancel_requested=1 WHERE job_id=?", (job_id,))
        return "cancel requested"

    # ------------------------------------------------------------------ jobs

    def jobs(self, *statuses: str) -> list[dict]:
        if statuses:
            q = f"SELECT * FROM jobs WHERE status IN ({','.join('?' * len(statuses))}) ORDER BY rowid"
            rows = self.db.execute(q, statuses).fetchall()
        else:
            rows = self.db.execute("SELECT * FROM jobs ORDER BY rowid").fetchall()
        return [dict(r) for r in rows]

    def update_job(self, job_id: str, **fields) -> None:
        if "allocation" in fields and fields["allocation"] is not None and not isinstance(fields["allocation"], str):
            fields["allocation"] = json.dumps(list(fields["allocation"]))
        cols = ", ".join(f"{k}=?" for k in fields)
        self.db.execute(f"UPDATE jobs SET {cols} WHERE job_id=?", (*fields.values(), job_id))

    # ------------------------------------------------------------------ segments, events, samples

    def put_segment(self, job_id: str, segment: int, **fields) -> None:
        if "gpus" in fields and not isinstance(fields["gpus"], str):
            fields["gpus"] = json.dumps(list(fields["gpus"]))
        exists = self.db.execute("SELECT 1 FROM segments WHERE job_id=? AND segment=?",
                                 (job_id, segment)).fetchone()
        if exists:
            cols = ", ".join(f"{k}=?" for k in fields)
            self.db.execute(f"UPDATE segments SET {cols} WHERE job_id=? AND segment=?",
                            (*fields.values(), job_id, segment))
        else:
            names = ["job_id", "segment", *fields]
            self.db.execute(f"INSERT INTO segments ({','.join(names)}) VALUES ({','.join('?' * len(names))})",
                            (job_id, segment, *fields.values()))

    def segments(self, job_id: str | None = None) -> list[dict]:
        if job_id is None:
            rows = self.db.execute("SELECT * FROM segments ORDER BY placed_at, job_id, segment").fetchall()
        else:
            rows = self.db.execute("SELECT * FROM segments WHERE job_id=? ORDER BY segment", (job_id,)).fetchall()
        return [dict(r) for r in rows]

    def event(self, t: float, job_id: str | None, kind: str, **detail) -> None:
        self.db.execute("INSERT INTO events (time, job_id, kind, detail) VALUES (?, ?, ?, ?)",
                        (t, job_id, kind, json.dumps(detail, sort_keys=True)))
        if self.listener is not None:
            self.listener(t, job_id, kind, detail)

    def events(self, kind: str | None = None) -> list[dict]:
        q = "SELECT * FROM events" + (" WHERE kind=?" if kind else "") + " ORDER BY id"
        rows = self.db.execute(q, (kind,) if kind else ()).fetchall()
        return [{**dict(r), "detail": json.loads(r["detail"])} for r in rows]

    def checkpoint_seen(self, job_id: str, iteration: int, segment: int, t: float) -> None:
        self.db.execute("INSERT OR IGNORE INTO checkpoints VALUES (?, ?, ?, ?)", (job_id, iteration, segment, t))

    def progress_sample(self, job_id: str, t: float, iterations: float, rate: float) -> None:
        self.db.execute("INSERT INTO progress VALUES (?, ?, ?, ?)", (job_id, t, iterations, rate))

    def series_sample(self, t: float, busy: int, running: int, queued: int, thr: float) -> None:
        self.db.execute("INSERT INTO series VALUES (?, ?, ?, ?, ?)", (t, busy, running, queued, thr))

    def series(self) -> list[tuple]:
        return [tuple(r) for r in self.db.execute("SELECT * FROM series ORDER BY rowid").fetchall()]
