"""A small read-only HTML status page for ``dlsched serve``: jobs, their state and GPUs, occupancy, events.

It listens on 127.0.0.1 only (anyone with a login on this machine can read
it; nobody else can reach it) and reads the state store through its own
read-only SQLite connection per request, in its own thread, so it never
holds the service's connection or blocks its rounds (WAL lets readers in
while the service writes).  The page fetches ``/status.json`` every two
seconds and redraws its tables in place.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

DEFAULT_PORT = 8470
RECENT_EVENTS = 40


def snapshot(db_path: Path) -> dict:
    """What the page shows, read from the store (read-only: this never writes)."""
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=5.0)
    db.row_factory = sqlite3.Row
    try:
        jobs = [{"job_id": r["job_id"], "status": r["status"],
                 "gpus": json.loads(r["allocation"]) if r["allocation"] else [],
                 "done": round(r["done_iterations"], 1), "total": r["total_iterations"],
                 "restarts": r["restarts"], "migrations": r["migrations"], "reason": r["reason"]}
                for r in db.execute("SELECT * FROM jobs ORDER BY rowid")]
        last = db.execute("SELECT time, busy, running, queued, throughput FROM series "
                          "ORDER BY rowid DESC LIMIT 1").fetchone()
        start = db.execute("SELECT detail FROM events WHERE kind='service-start' ORDER BY id DESC LIMIT 1").fetchone()
        events = [{"time": round(r["time"], 2), "job_id": r["job_id"] or "", "kind": r["kind"],
                   "detail": _detail(r["detail"])}
                  for r in db.execute("SELECT * FROM events ORDER BY id DESC LIMIT ?", (RECENT_EVENTS,))]
    finally:
        db.close()
    detail = json.loads(start["detail"]) if start else {}
    return {"policy": detail.get("policy", ""), "gpus": detail.get("gpus"),
            "time": last["time"] if last else 0.0, "busy": last["busy"] if last else 0,
            "running": last["running"] if last else 0, "queued": last["queued"] if last else 0,
            "throughput": last["throughput"] if last else 0.0, "jobs": jobs, "events": events}


def _detail(text: str) -> str:
    """An event's JSON detail as ``key=value`` pairs, times rounded to what a person reads."""
    try:
        d = json.loads(text)
    except ValueError:
        return text
    if not isinstance(d, dict):
        return str(d)
    return ", ".join(f"{k}={round(v, 2) if isinstance(v, float) else v}" for k, v in sorted(d.items()))


PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>dlsched serve</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<noscript><meta http-equiv="refresh" content="5"></noscript>
<style>
body{font-family:system-ui,sans-serif;margin:1.5rem auto;max-width:1100px;padding:0 1rem;color:#1d2330;background:#fafbfc}
h1{font-size:1.4rem;margin:0}h2{font-size:1.1rem;margin-top:1.5rem}.meta{color:#667;font-size:.9rem}
table{border-collapse:collapse;font-size:.86rem;background:#fff;width:100%}
th,td{padding:.3rem .5rem;border:1px solid #dde;text-align:left}th{background:#eef1f6}
.bar{height:18px;background:#e4e8ef;border-radius:4px;overflow:hidden;max-width:520px}
.bar>div{height:100%;background:#3b7ddd}
.running{color:#17803d;font-weight:600}.pending,.suspended,.submitted{color:#a56a00}
.finished{color:#555}.dropped{color:#b3261e}
</style></head><body>
<h1>dlsched serve</h1><p class="meta" id="meta">loading...</p>
<h2>Cluster occupancy</h2><div class="bar"><div id="occ" style="width:0%"></div></div>
<p class="meta" id="occtext"></p>
<h2>Jobs</h2><table><thead><tr><th>job</th><th>state</th><th>GPUs</th><th>progress</th>
<th>restarts</th><th>migrations</th><th>note</th></tr></thead><tbody id="jobs"></tbody></table>
<h2>Recent events</h2><table><thead><tr><th>time (s)</th><th>job</th><th>event</th><th>detail</th></tr></thead>
<tbody id="events"></tbody></table>
<script>
"use strict";
function cell(tr, text, cls) { const td = document.createElement("td"); td.textContent = text;
  if (cls) td.className = cls; tr.appendChild(td); }
function fill(id, rows, cols) { const body = document.getElementById(id); body.replaceChildren();
  for (const r of rows) { const tr = document.createElement("tr"); cols(tr, r); body.appendChild(tr); } }
function show(s) {
  const total = s.gpus || 0, pct = total ? Math.round(100 * s.busy / total) : 0;
  document.getElementById("meta").textContent = "policy " + (s.policy || "?") + " | " + total + " GPUs | t = "
    + s.time.toFixed(1) + " s | refreshed " + new Date().toLocaleTimeString();
  document.getElementById("occ").style.width = pct + "%";
  document.getElementById("occtext").textContent = s.busy + " of " + total + " GPUs busy (" + pct + "%), "
    + s.running + " running, " + s.queued + " queued, " + s.throughput.toFixed(1) + " samples/s";
  fill("jobs", s.jobs, (tr, j) => { cell(tr, j.job_id); cell(tr, j.status, j.status);
    cell(tr, j.gpus.join(", ")); cell(tr, j.done + " / " + j.total); cell(tr, j.restarts);
    cell(tr, j.migrations); cell(tr, j.reason); });
  fill("events", s.events, (tr, e) => { cell(tr, e.time); cell(tr, e.job_id); cell(tr, e.kind);
    cell(tr, e.detail); });
}
async function refresh() {
  try { const r = await fetch("status.json", {cache: "no-store"}); if (r.ok) show(await r.json()); }
  catch (e) { document.getElementById("meta").textContent = "service not reachable; retrying"; }
}
show(__INITIAL__);
setInterval(refresh, 2000);
</script></body></html>
"""


def script_json(value) -> str:
    """JSON safe inside an HTML <script>: no text in it can close the script or open a comment.

    ``</script>`` ends a script wherever it appears, and ``<!--`` followed by ``<script>``
    switches the HTML parser to a state where the real ``</script>`` no longer ends it; with
    ``<``, ``>`` and ``&`` written as JSON escapes, a job's error text is only ever data.
    """
    text = json.dumps(value)  # ensure_ascii: U+2028 and U+2029 come out escaped already
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(ch, esc)
    return text


class _Handler(BaseHTTPRequestHandler):
    db_path: Path  # set on the subclass made per page
    allowed_hosts: frozenset[str]  # Host headers that name this server

    def do_GET(self):  # noqa: N802 (http.server's name)
        path = self.path.split("?")[0]
        if self.headers.get("Host", "").lower() not in self.allowed_hosts:
            # a page on another site whose name was re-pointed at 127.0.0.1 (DNS rebinding) sends its own
            # name here: refusing any Host but our address keeps other sites' scripts from reading the page
            self._send(421, "text/plain", b"unexpected Host header: this page answers only to its own address\n")
            return
        try:
            if path in ("/", "/index.html"):
                body = PAGE.replace("__INITIAL__", script_json(snapshot(self.db_path)))
                self._send(200, "text/html; charset=utf-8", body.encode())
            elif path == "/status.json":
                self._send(200, "application/json", json.dumps(snapshot(self.db_path)).encode())
            elif path == "/favicon.ico":
                self._send(204, "image/x-icon", b"")
            else:
                self._send(404, "text/plain", b"not found\n")
        except sqlite3.Error as e:
            self._send(503, "text/plain", f"state store not readable: {e}\n".encode())

    def _send(self, code: int, ctype: str, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):  # requests are not the service's log
        pass


class StatusPage:
    """The page's HTTP server on 127.0.0.1:``port`` (0 picks a free port), in a daemon thread."""

    def __init__(self, db_path, port: int = DEFAULT_PORT, host: str = "127.0.0.1"):
        handler = type("Handler", (_Handler,), {"db_path": Path(db_path)})
        self.server = ThreadingHTTPServer((host, port), handler)
        bound = self.server.server_address[1]
        names = {host, "127.0.0.1", "localhost"} if host in ("127.0.0.1", "localhost") else {host}
        handler.allowed_hosts = frozenset({f"{n}:{bound}" for n in names} | ({*names} if bound == 80 else set()))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="dlsched-status-page", daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
