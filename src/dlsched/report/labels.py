"""Labels for runs shown side by side: the policy name, and where two runs share it, the
shortest part of their directories that tells them apart ("fcfs (a/compare)", "fcfs (b/compare)")."""

from __future__ import annotations

from pathlib import Path


def unique_labels(names: list[str], dirs: list[Path]) -> list[str]:
    labels = list(names)
    for name in set(names):
        idx = [i for i, n in enumerate(names) if n == name]
        if len(idx) < 2:
            continue
        parts = [Path(dirs[i]).resolve().parts for i in idx]
        depth = 1
        # the shortest trailing run of path parts that differs for every run of this name
        while depth < max(len(p) for p in parts) and len({p[-depth:] for p in parts}) < len(parts):
            depth += 1
        for i, p in zip(idx, parts):
            tail = [x for x in p[-depth:] if x != name] or list(p[-depth:])
            labels[i] = f"{name} ({'/'.join(tail)})"
    # a label can still repeat when the same directory is given twice: number those
    seen: dict[str, int] = {}
    for i, lab in enumerate(labels):
        seen[lab] = seen.get(lab, 0) + 1
        if seen[lab] > 1:
            labels[i] = f"{lab} #{seen[lab]}"
    return labels
