"""``dlsched report ... --html OUT``: one self-contained HTML page from one or more results directories.

The figures are PNGs embedded as base64 data URIs, so the page needs no other
file and no network; the same PNGs are written beside the page
(``OUT-stem_<figure>.png``) for papers and slides.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

from dlsched import __version__
from dlsched.report.figures import FIGURES, Run, png_bytes, read_links
from dlsched.report.io import jobs_table, read_results, table_rows
from dlsched.report.records import JobRecord
from dlsched.report.tables import summary_rows

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:1180px;color:#1d2330;
padding:0 1rem;background:#fafbfc}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #dde}
.meta{color:#667;font-size:.9rem}table{border-collapse:collapse;font-size:.88rem;background:#fff}
th,td{padding:.35rem .6rem;border:1px solid #dde;text-align:right}th{background:#eef1f6}
td:first-child,th:first-child{text-align:left}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:1rem}
figure{margin:0;background:#fff;border:1px solid #dde;border-radius:6px;padding:.4rem}
figure img{width:100%;height:auto}figcaption{font-size:.8rem;color:#556}
.note{font-size:.85rem;color:#664;background:#fff8e6;border:1px solid #ec9;padding:.4rem .6rem;border-radius:4px}
"""

CAPTIONS = {
    "jct_cdf": "Job completion time of finished jobs.",
    "queue_cdf": "Total time each job waited in the queue (first wait and waits after preemption).",
    "busy_gpus": "GPUs held by jobs; the dashed line is the cluster's size.",
    "queue_length": "Jobs waiting (pending or suspended).",
    "throughput": "Samples per second over all running jobs past their start-up overhead.",
    "remaining_jobs": "Jobs submitted and not yet finished or dropped.",
    "gpu_types": "GPU-hours of the jobs that asked for a type over that type's GPUs x makespan; "
                 "'any' is over the whole cluster (the records keep the requested type, not the one given).",
    "network_tiers": "Tier (machine, rack, network) spanned by each job's placement.",
    "comm_time": "Exposed communication time as a share of each job's running time.",
    "link_utilisation": "Busiest links by utilisation (links.csv).",
    "moves": "Preemption restarts, migrations and resizes over all jobs.",
    "deadlines": "Jobs with a deadline that finished by it.",
}


def load_run(d, label: str | None = None) -> tuple[Run, list[str]]:
    """One results directory as a ``Run``, plus notes about files present but unusable."""
    path = Path(d)
    records, series, doc = read_results(path)
    with table_rows(jobs_table(path)) as (fieldnames, reader):
        extra = [c for c in (fieldnames or []) if c not in JobRecord.columns()]
        cols: dict[str, list[str]] = {c: [] for c in extra}
        for row in reader:
            for c in extra:
                cols[c].append(row[c])
    notes = []
    links = read_links(path / "links.csv")
    if links is None and (path / "links.csv").exists():
        notes.append(f"{path / 'links.csv'}: no 'link' and 'utilization' columns; per-link figure left out")
    name = label or doc.get("params", {}).get("policy") or path.name
    return Run(name, path, records, series, doc, cols, links), notes


def expand_dirs(dirs) -> list[Path]:
    """Results directories; a ``compare`` root (no jobs.csv, one sub-directory per policy) gives its runs."""
    out = []
    for d in map(Path, dirs):
        subs = sorted(p for p in d.iterdir() if jobs_table(p)) if d.is_dir() else []
        out += subs if not jobs_table(d) and subs else [d]
    return out


def load_runs(dirs, labels: list[str] | None = None) -> tuple[list[Run], list[str]]:
    runs, notes = [], []
    dirs = dirs if labels else expand_dirs(dirs)
    for i, d in enumerate(dirs):
        run, n = load_run(d, labels[i] if labels else None)
        runs.append(run)
        notes += n
    from dlsched.report.labels import unique_labels
    from dlsched.report.warnings import nothing_could_differ

    # the same policy twice: told apart by directory
    for r, lab in zip(runs, unique_labels([r.label for r in runs], [r.path for r in runs])):
        r.label = lab
    notes += nothing_could_differ({r.label: r.summary for r in runs}, {r.label: str(r.path) for r in runs})
    return runs, notes


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _inputs(runs: list[Run]) -> list[list[str]]:
    rows = []
    for r in runs:
        p = r.params
        rows.append([r.label, str(p.get("cluster", "-")), str(p.get("num_gpus", "-")), str(p.get("trace", "-")),
                     str(len(r.records)), str(p.get("skipped_rows", 0)), str(r.path)])
    return rows


def render(runs: list[Run], notes: list[str], title: str, figures: dict[str, bytes]) -> str:
    header, rows = summary_rows({r.label: r.summary for r in runs})
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             "<meta name='viewport' content='width=device-width, initial-scale=1'>",
             f"<style>{CSS}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>",
             f"<p class='meta'>{len(runs)} run{'s' if len(runs) != 1 else ''}; dlsched {__version__}</p>"]
    parts += [f"<p class='note'>{html.escape(n)}</p>" for n in notes]
    parts += ["<h2>Summary</h2>", _table(header, rows), "<h2>Inputs</h2>",
              _table(["run", "cluster", "GPUs", "trace", "jobs", "rows skipped", "directory"], _inputs(runs)),
              "<h2>Figures</h2><div class='grid'>"]
    for name, png in figures.items():
        data = base64.b64encode(png).decode("ascii")
        cap = html.escape(CAPTIONS.get(name, ""))
        parts.append(f"<figure id='{name}'><img alt='{name.replace('_', ' ')}' src='data:image/png;base64,{data}'>"
                     f"<figcaption>{cap}</figcaption></figure>")
    parts.append("</div>")
    left_out = [n for n, _ in FIGURES if n not in figures]
    if left_out:
        parts.append(f"<p class='meta'>Not in these runs' results (figures left out): "
                     f"{html.escape(', '.join(n.replace('_', ' ') for n in left_out))}.</p>")
    parts.append("</body></html>\n")
    return "".join(parts)


def write_report(dirs, out, title: str | None = None, labels: list[str] | None = None) -> tuple[Path, list[Path]]:
    """Write the page to ``out`` and each figure beside it; returns (page, PNG paths)."""
    runs, notes = load_runs(dirs, labels)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    import matplotlib.pyplot as plt

    figures: dict[str, bytes] = {}
    for name, build in FIGURES:
        fig = build(runs)
        if fig is not None:
            figures[name] = png_bytes(fig)
            plt.close(fig)
    pngs = []
    for name, png in figures.items():
        p = out.with_name(f"{out.stem}_{name}.png")
        p.write_bytes(png)
        pngs.append(p)
    names = ", ".join(r.label for r in runs) if len(runs) <= 4 else f"{len(runs)} runs"
    title = title or f"dlsched report: {names}"
    out.write_text(render(runs, notes, title, figures))
    return out, pngs
