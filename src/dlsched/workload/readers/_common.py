"""What every trace reader shares: the result type, row-level error handling, field parsing.

A reader turns each row into a ``JobSpec`` or raises ``InputError`` naming the
file, the 1-based line and the field.  ``RowLoop`` decides what happens then:
re-raise, or (``skip_bad_rows``) record a ``SkippedRow`` and go on.  Rows a
format defines as "not a training job" (CPU-only jobs) are always recorded in
``skipped`` rather than dropped, so nothing disappears silently.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from dlsched.cluster.gpus import gpu_type as _gpu_type
from dlsched.errors import InputError
from dlsched.inputfile import read_head
from dlsched.workload.job import JobSpec
from dlsched.workload.models import get_model


@dataclass(frozen=True, slots=True)
class SkippedRow:
    """A trace row that was not read, and why (reported, never dropped silently)."""

    line: int
    field: str
    reason: str


@dataclass(frozen=True, slots=True)
class TraceLoad:
    """A trace as read: its jobs, the rows skipped, the file."""

    jobs: list[JobSpec]
    skipped: list[SkippedRow] = field(default_factory=list)
    source: str = ""


class NotAJob(Exception):
    """A well-formed row that the format says is not a GPU training job (reported, not an error)."""

    def __init__(self, field_name: str, reason: str):
        super().__init__(reason)
        self.field = field_name
        self.reason = reason


# Formats without model names: a documented rule by GPU demand (docs/trace-formats.md).
# Single-GPU jobs are mostly small CNN experiments; jobs up to a node look like BERT-scale
# fine-tuning; multi-node jobs are the large language models of their time.
DEFAULT_MODEL_BY_GPUS: tuple[tuple[float, str], ...] = ((1, "resnet50"), (8, "bert-base"),
                                                        (math.inf, "gpt2-medium"))


def model_for_gpus(num_gpus: int, default_model: str | None = None) -> str:
    if default_model:
        return default_model
    for upto, name in DEFAULT_MODEL_BY_GPUS:
        if num_gpus <= upto:
            return name
    return DEFAULT_MODEL_BY_GPUS[-1][1]


# Largest number a field may hold: seconds up to ~31,700 years (Unix times in seconds fit; in
# milliseconds they do not, which is the point), counts far beyond any cluster.  Larger values
# are typos or wrong units, and past ~1e15 float time arithmetic loses whole seconds.
MAX_VALUE = 1e12


class Row:
    """One record's fields, with parsers that raise ``InputError`` naming file, line and field."""

    __slots__ = ("data", "line", "source", "problem")

    def __init__(self, data: dict, line: int, source: str, problem: InputError | None = None):
        self.data, self.line, self.source = data, line, source
        self.problem = problem  # a defect of the whole record (too many fields, bad bytes), raised by check()

    def check(self) -> None:
        if self.problem is not None:
            raise self.problem

    def error(self, message: str, name: str | None) -> InputError:
        return InputError(message, file=self.source, line=self.line, field=name)

    def has(self, name: str) -> bool:
        v = self.data.get(name)
        return v is not None and str(v).strip() != ""

    def str(self, name: str, default: str | None = None) -> str:
        value = self.data.get(name)
        if type(value) is str:  # every CSV field: one strip, no further checks
            text = value.strip()
            if text:
                return text
        elif value is not None:
            if isinstance(value, (dict, list, bool)):  # JSON: a number or string was expected
                raise self.error(f"expected a number or string, got {json.dumps(value)[:40]}", name)
            text = str(value).strip()
            if text:
                return text
        if default is not None:
            return default
        raise self.error("missing value", name)

    def float(self, name: str, *, minimum: float | None = 0.0, default: float | None = None) -> float:
        if default is not None and not self.has(name):
            return default
        raw = self.data.get(name)
        if type(raw) is not str or not (raw := raw.strip()):  # a CSV field is a str: one strip
            raw = self.str(name)
        try:
            value = float(raw)
        except ValueError:
            raise self.error(f"not a number: {raw!r}", name) from None
        if (minimum is None or value >= minimum) and -MAX_VALUE <= value <= MAX_VALUE:
            return value  # every check below passes (NaN and infinities fail these comparisons)
        if not math.isfinite(value):
            raise self.error(f"not a finite number: {raw!r}", name)
        if minimum is not None and value < minimum:
            raise self.error(f"must be >= {minimum:g}, got {raw}", name)
        if abs(value) > MAX_VALUE:
            raise self.error(f"implausibly large: {raw} (limit {MAX_VALUE:g})", name)
        return value

    def duration(self, name: str) -> float:
        """A job's length in seconds: finite and above zero (a job of no length has no work)."""
        value = self.float(name)
        if value <= 0:
            raise self.error(f"duration must be positive, got {self.data[name]!r} (a job of no length)", name)
        return value

    def positive_span(self, start: float, end: float, name: str) -> float:
        """``end - start`` for a job's run, refusing a run that ends before or when it starts."""
        if end < start:
            raise self.error("ends before it starts", name)
        if end == start:
            raise self.error("ends when it starts: duration 0 (a job of no length)", name)
        return end - start

    def int(self, name: str, *, minimum: int | None = 0, default: int | None = None) -> int:
        if default is not None and not self.has(name):
            return default
        value = self.float(name, minimum=minimum)
        if value != int(value):
            raise self.error(f"not an integer: {self.data[name]!r}", name)
        return int(value)

    def bool(self, name: str, default: bool = False) -> bool:
        if not self.has(name):
            return default
        raw = self.str(name).lower()
        if raw in ("1", "true", "yes", "y", "t"):
            return True
        if raw in ("0", "false", "no", "n", "f"):
            return False
        raise self.error(f"not a boolean: {raw!r}", name)

    def time(self, name: str) -> float:
        """A timestamp: seconds (number) or 'YYYY-MM-DD HH:MM:SS' (naive, read as UTC)."""
        raw = self.str(name)
        try:
            value = float(raw)
        except ValueError:
            value = parse_datetime(raw)
            if value is None:
                raise self.error(f"not a time: {raw!r}", name) from None
        if not math.isfinite(value) or value < 0:
            raise self.error(f"must be a non-negative time, got {raw}", name)
        if value > MAX_VALUE:
            raise self.error(f"implausibly large time: {raw} (limit {MAX_VALUE:g} s; milliseconds?)", name)
        return value

    def model(self, name_field: str, name: str, variant: str | None = None) -> str:
        """Check a model name against the zoo and return its canonical name.

        Sized families (a ``variant`` such as "1.3B") keep the family name, lower-cased, so
        that ``get_model(job.model, job.params)`` finds the size.
        """
        found = get_model(name, variant, file=self.source, line=self.line, field=name_field)
        return name.strip().lower() if variant else found.name

    def gpu_type(self, name: str) -> str | None:
        if not self.has(name):
            return None
        return _gpu_type(self.str(name), file=self.source, line=self.line, field=name).name


def parse_datetime(raw: str) -> float | None:
    for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S.%f", "%m/%d/%Y %H:%M:%S"):
        try:
            dt = datetime.strptime(raw.strip(), fmt)
        except ValueError:
            continue
        return (dt - datetime(1970, 1, 1)).total_seconds()
    return None


def open_text(path: Path, source: str):
    """Open a trace as UTF-8 text (a BOM is dropped), with clear errors for what is not text.

    Undecodable bytes become U+DC80..U+DCFF (``surrogateescape``) so that the reader can name
    the line and field they are in (``bad_bytes``) instead of failing somewhere in the file.
    """
    head = read_head(path, source, "trace file")
    if b"\x00" in head:
        raise InputError("binary file (NUL bytes), not a text trace", file=source, line=head[:head.index(b"\x00")].count(b"\n") + 1)
    return open(path, newline="", encoding="utf-8-sig", errors="surrogateescape")


def bad_bytes(text: str) -> str | None:
    """A description of the first undecodable byte in ``text`` (read with surrogateescape), or None."""
    if text.isascii():  # the common case, at C speed: a surrogate is not ASCII
        return None
    for ch in text:
        if "\udc80" <= ch <= "\udcff":
            return f"not UTF-8 text (byte 0x{ord(ch) - 0xDC00:02x}); re-encode the file as UTF-8"
    return None


def csv_header(path: Path, source: str) -> list[str]:
    """The stripped column names of a CSV file's first line."""
    with open_text(path, source) as f:
        try:
            cells = next(csv.reader(f))
        except StopIteration:
            raise InputError("empty file", file=source, line=1) from None
        except csv.Error as e:
            raise InputError(f"malformed CSV header: {e}", file=source, line=1) from None
    header = [h.strip() for h in cells]
    if (why := bad_bytes("".join(header))) is not None:
        raise InputError(why, file=source, line=1)
    refuse_duplicate_columns(header, source)
    return header


def refuse_duplicate_columns(header: list[str], source: str) -> None:
    """A column named twice is an error: a reader keeping either copy would read the other wrongly."""
    seen: dict[str, int] = {}
    for i, name in enumerate(header, 1):
        if name in seen:
            raise InputError(f"column '{name}' appears twice in the header (columns {seen[name]} and {i})",
                             file=source, line=1, field=name)
        seen[name] = i


def require_columns(header: list[str], required, source: str) -> None:
    """Raise at line 1, naming the first required column the header lacks."""
    missing = [c for c in required if c not in header]
    if not missing:
        return
    hint = ""
    if len(header) == 1 and any(d in header[0] for d in ";\t|"):
        hint = "; the file does not look comma-separated"
    raise InputError(f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                     f"(the header has: {', '.join(header)}){hint}", file=source, line=1, field=missing[0])


def csv_rows(path: Path, source: str, *, header: list[str] | None = None,
             required=()) -> Iterator[Row]:
    """Rows of a CSV file as ``Row``s; the header (first line unless given) names the fields.

    Header names are stripped (some traces put a space after each comma); a name given twice is
    an error.  ``required`` columns must be in the header.  A row with more or fewer fields than
    the header, or with bytes that are not UTF-8, carries a ``problem`` (``Row.check``), so it
    can be skipped and reported.
    """
    with open_text(path, source) as f:
        reader = csv.reader(f)
        if header is None:
            try:
                header = [h.strip() for h in next(reader)]
            except StopIteration:
                raise InputError("empty file", file=source, line=1) from None
            except csv.Error as e:
                raise InputError(f"malformed CSV: {e}", file=source, line=1) from None
            if (why := bad_bytes("".join(header))) is not None:
                raise InputError(why, file=source, line=1)
            refuse_duplicate_columns(header, source)
            require_columns(header, required, source)
        start = reader.line_num + 1
        while True:
            try:
                cells = next(reader)
            except StopIteration:
                break
            except csv.Error as e:  # e.g. a NUL byte or an unterminated quote
                raise InputError(f"malformed CSV: {e}", file=source, line=start) from None
            line, start = start, reader.line_num + 1
            if not cells or all(not c.strip() for c in cells):
                continue
            problem = None
            spans = reader.line_num - line  # physical lines this record took beyond its first
            if spans and (name := next((h for h, c in zip(header, cells) if "\n" in c or "\r" in c), None)):
                # Trace fields never hold line breaks: a quote opened here and never closed took
                # the following lines into one field (reported here, not as a field count).
                over = f"line {line + 1}" if spans == 1 else f"lines {line + 1}-{reader.line_num}"
                problem = InputError(f"unterminated quote: the quoted field opened on this line runs over "
                                     f"{over} (a missing closing '\"'?)", file=source, line=line, field=name)
            elif len(cells) > len(header):
                problem = InputError(f"{len(cells)} fields, the header has {len(header)}", file=source, line=line)
            elif len(cells) == 1 and len(header) > 1:
                problem = InputError(f"1 field, expected {len(header)} comma-separated fields", file=source,
                                     line=line, field=header[0])
            elif len(cells) < len(header):  # read as empty, the missing fields would take defaults silently
                problem = InputError(f"{len(cells)} fields, the header has {len(header)} (missing "
                                     f"{', '.join(header[len(cells):])})", file=source, line=line,
                                     field=header[len(cells)])
            elif not "".join(cells).isascii():  # an undecodable byte reads as a non-ASCII surrogate
                for name, cell in zip(header, cells):
                    if (why := bad_bytes(cell)) is not None:
                        problem = InputError(why, file=source, line=line, field=name)
                        break
            yield Row(dict(zip(header, cells)), line, source, problem)


def json_records(path: Path, source: str) -> Iterator[Row]:
    """Objects of a top-level JSON list, each with the line its ``{`` is on."""
    with open_text(path, source) as f:
        text = f.read()
    if (why := bad_bytes(text)) is not None:
        first = next(i for i, ch in enumerate(text) if "\udc80" <= ch <= "\udcff")
        raise InputError(why, file=source, line=text.count("\n", 0, first) + 1)
    dec = json.JSONDecoder()
    pos = _skip_ws(text, 0)
    if pos >= len(text) or text[pos] != "[":
        raise InputError("expected a JSON list of jobs", file=source, line=text.count("\n", 0, pos) + 1)
    pos = _skip_ws(text, pos + 1)
    line, counted = 1, 0
    while pos < len(text) and text[pos] != "]":
        line += text.count("\n", counted, pos)
        counted = pos
        try:
            obj, end = dec.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise InputError(f"malformed JSON: {e.msg}", file=source, line=e.lineno) from None
        if not isinstance(obj, dict):
            raise InputError("expected a JSON object per job", file=source, line=line)
        yield Row(obj, line, source)
        pos = _skip_ws(text, end)
        if pos < len(text) and text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
        elif pos < len(text) and text[pos] != "]":
            raise InputError("malformed JSON: expected ',' or ']' after a job", file=source,
                             line=text.count("\n", 0, pos) + 1)
    if pos >= len(text):
        raise InputError("malformed JSON: the list is not closed with ']' (truncated file?)", file=source,
                         line=text.count("\n") + 1)
    rest = _skip_ws(text, pos + 1)
    if rest < len(text):
        raise InputError("unexpected text after the JSON list", file=source, line=text.count("\n", 0, rest) + 1)


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


class RowLoop:
    """Runs a row parser over records, raising or recording bad rows.

    A job id seen before makes the later row bad (field ``job_id``): the simulator keys jobs
    by id, so a duplicate would overwrite or merge two jobs.
    """

    def __init__(self, source: str, skip_bad_rows: bool):
        self.source = source
        self.skip_bad_rows = skip_bad_rows
        self.skipped: list[SkippedRow] = []

    def record(self, e: InputError, row: Row) -> None:
        """Re-raise ``e``, or (``skip_bad_rows``) record it as a skipped row."""
        if not self.skip_bad_rows:
            raise e
        reason = e.reason
        if e.file is not None and str(e.file) != self.source:  # a side table (PAI job table, Lingjun workers)
            reason = f"{e.file}: {reason}"
        self.skipped.append(SkippedRow(e.line or row.line, e.field or "", reason))

    def run(self, rows: Iterable[Row], parse: Callable[[Row], JobSpec]) -> list[JobSpec]:
        jobs = []
        first_line: dict[str, int] = {}
        for row in rows:
            try:
                row.check()
                job = parse(row)
                if job.job_id in first_line:
                    raise row.error(f"duplicate job id {job.job_id!r} (first on line {first_line[job.job_id]})",
                                    "job_id")
            except NotAJob as e:
                self.skipped.append(SkippedRow(row.line, e.field, e.reason))
                continue
            except InputError as e:
                self.record(e, row)
                continue
            first_line[job.job_id] = row.line
            job.extra.setdefault("line", row.line)
            job.extra.setdefault("source", self.source)
            jobs.append(job)
        return jobs

    def result(self, jobs: list[JobSpec]) -> TraceLoad:
        return TraceLoad(relative_to_first(jobs), self.skipped, self.source)


def relative_to_first(jobs: list[JobSpec]) -> list[JobSpec]:
    """Shift submit times (and deadlines) so the first submission is at 0; stable sort by submit time."""
    if not jobs:
        return []
    t0 = min(j.submit_time for j in jobs)
    out = [j if t0 == 0 else j.with_(submit_time=j.submit_time - t0,
                                     deadline=None if j.deadline is None else j.deadline - t0)
           for j in jobs]
    return sorted(out, key=lambda j: j.submit_time)


def extra(row: Row, *names: str) -> dict[str, Any]:
    """Format-specific leftovers worth keeping in ``JobSpec.extra``."""
    return {n: row.data[n] for n in names if row.has(n)}
