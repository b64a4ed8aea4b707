"""A checker for the Chrome trace-event format (the JSON object form), as ui.perfetto.dev reads it.

Rules checked (trace-event format spec, "JSON Object Format" and the event types used here):
every event is an object with ``name`` (str), ``ph`` (one of the phases below), ``pid`` and
``tid`` (ints); every non-metadata event has a numeric microsecond ``ts`` >= 0; complete
events ("X") have a numeric ``dur`` >= 0; "B"/"E" pairs balance per track; instant events
have scope ``s`` in g/p/t; metadata ("M") names processes and threads with ``args.name``;
on each track, events appear in non-decreasing ``ts`` order and complete events either nest
or do not overlap (a viewer draws a track as a stack).
"""

from __future__ import annotations

PHASES = {"X", "B", "E", "i", "I", "M"}


def check_trace(doc) -> list[str]:
    """Problems found (empty when the trace is valid)."""
    errs: list[str] = []
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        return ["top level must be an object with a 'traceEvents' list"]
    tracks: dict[tuple[int, int], list[dict]] = {}
    for n, ev in enumerate(doc["traceEvents"]):
        where = f"event {n} ({ev.get('name')!r})" if isinstance(ev, dict) else f"event {n}"
        if not isinstance(ev, dict):
            errs.append(f"{where}: not an object")
            continue
        if not isinstance(ev.get("name"), str):
            errs.append(f"{where}: 'name' must be a string")
        if ev.get("ph") not in PHASES:
            errs.append(f"{where}: phase {ev.get('ph')!r} not one of {sorted(PHASES)}")
            continue
        for k in ("pid", "tid"):
            if not isinstance(ev.get(k), int) or isinstance(ev.get(k), bool):
                errs.append(f"{where}: '{k}' must be an integer")
        if ev["ph"] == "M":
            if ev["name"] not in ("process_name", "thread_name", "thread_sort_index", "process_sort_index"):
                errs.append(f"{where}: unknown metadata event")
            elif not isinstance(ev.get("args"), dict):
                errs.append(f"{where}: metadata needs 'args'")
            continue
        ts = ev.get("ts")
        if not isinstance(ts, (int, float)) or isinstance(ts, bool) or ts < 0:
            errs.append(f"{where}: 'ts' must be a number of microseconds >= 0")
            continue
        if ev["ph"] == "X":
            dur = ev.get("dur")
            if not isinstance(dur, (int, float)) or dur < 0:
                errs.append(f"{where}: complete event needs 'dur' >= 0")
                continue
        if ev["ph"] in ("i", "I") and ev.get("s", "t") not in ("g", "p", "t"):
            errs.append(f"{where}: instant scope must be g, p or t")
        tracks.setdefault((ev.get("pid"), ev.get("tid")), []).append(ev)
    for key, evs in tracks.items():
        last = -1.0
        open_b = 0
        stack: list[float] = []  # end times of the complete events enclosing the current one
        for ev in evs:
            if ev["ts"] < last:
                errs.append(f"track {key}: ts goes back from {last} to {ev['ts']} ({ev['name']!r})")
            last = ev["ts"]
            if ev["ph"] == "B":
                open_b += 1
            elif ev["ph"] == "E":
                open_b -= 1
                if open_b < 0:
                    errs.append(f"track {key}: 'E' without 'B'")
            elif ev["ph"] == "X":
                end = ev["ts"] + ev["dur"]
                while stack and stack[-1] <= ev["ts"] + 1e-6:
                    stack.pop()
                if stack and end > stack[-1] + 1e-3:
                    errs.append(f"track {key}: {ev['name']!r} at {ev['ts']} overlaps its enclosing slice")
                stack.append(end)
        if open_b:
            errs.append(f"track {key}: {open_b} 'B' without 'E'")
    return errs
