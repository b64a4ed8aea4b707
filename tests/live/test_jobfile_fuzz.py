"""Fuzzed job files: every one either loads or is refused with an InputError naming the file.

Bounded (a fixed number of cases, and a time budget) and seeded, so a failure
reproduces: the failing case's bytes are in the assertion message.
"""

from __future__ import annotations

import random
import time

from dlsched.errors import InputError
from dlsched.live.jobfile import LiveJob, load_jobs
from live_helpers import EXAMPLES

SEED = 15
CASES = 400
BUDGET_S = 20.0

GOOD = (f"jobs:\n"
        f"  - {{name: a, script: {EXAMPLES / 'cnn_job.py'}, model: tiny-cnn, num_gpus: 2, iterations: 50,\n"
        f"     batch_size: 16, checkpoint_every: 10, delay_s: 0.5, args: {{step_time_s: 0.1}}}}\n"
        f"  - name: b\n"
        f"    script: {EXAMPLES / 'transformer_job.py'}\n"
        f"    model: tiny-transformer\n"
        f"    num_gpus: 1\n"
        f"    gpu_type: A40\n"
        f"    iterations: 30\n").encode()

# values a careless or hostile file might hold, dropped in where a value was
TOKENS = [b"-1", b"0", b"1e309", b"nan", b".inf", b"''", b"[]", b"{}", b"~", b"yes", b"0x10", b"9" * 40,
          b"x" * 300, b"!!python/object:os.system ls", b"&a [*a]", b"*nope", b"'\xff\xfe'", b"\x00", b"\"\\u0000\"",
          b"{a: {b: {c: {d: [[[[]]]]}}}}", b"|\n  multi\n  line", b"H100", b"tiny-cnn", b"2017-10-03",
          b"{step_time_s: 2017-10-03}", b"{x: !!binary aGk=}", b"{1: 2}"]


def _mutate(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(6)
        pos = rng.randrange(len(b) + 1)
        if op == 0 and b:  # flip a byte to anything (non-UTF-8 included)
            b[min(pos, len(b) - 1)] = rng.randrange(256)
        elif op == 1:  # insert random bytes
            b[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
        elif op == 2:  # truncate
            del b[pos:]
        elif op == 3:  # replace a value (the text after a ': ') by a token
            cut = b.find(b": ", pos)
            if cut >= 0:
                end = min([i for i in (b.find(b",", cut + 2), b.find(b"\n", cut + 2)) if i >= 0] or [len(b)])
                b[cut + 2:end] = rng.choice(TOKENS)
        elif op == 4:  # delete a line
            lines = bytes(b).split(b"\n")
            del lines[rng.randrange(len(lines))]
            b = bytearray(b"\n".join(lines))
        else:  # duplicate a line (duplicate keys, duplicate jobs)
            lines = bytes(b).split(b"\n")
            i = rng.randrange(len(lines))
            lines.insert(i, lines[i])
            b = bytearray(b"\n".join(lines))
    return bytes(b)


def test_fuzzed_job_files_load_or_fail_with_file_named(tmp_path):
    rng = random.Random(SEED)
    path = tmp_path / "fuzz.yaml"
    loaded = refused = 0
    start = time.monotonic()
    for case in range(CASES):
        if time.monotonic() - start > BUDGET_S:
            break
        data = _mutate(rng, GOOD)
        path.write_bytes(data)
        try:
            jobs = load_jobs(path)
        except InputError as e:
            assert str(e).startswith(str(path)), (case, data, str(e))
            refused += 1
            continue
        except Exception as e:  # anything else is a crash the user would see as a traceback
            raise AssertionError(f"case {case}: {type(e).__name__}: {e}\nfile bytes: {data!r}") from None
        assert jobs and all(j.spec.num_gpus >= 1 and j.spec.total_iterations >= 1 for j in jobs), (case, data)
        for j in jobs:  # what submit stores, and the service reads back
            assert LiveJob.from_json(j.to_json(), 0.0).to_json() == j.to_json(), (case, data)
        loaded += 1
    # both outcomes occur, so the mutations neither always break nor never touch the file
    assert loaded >= 10 and refused >= 100, (loaded, refused)
    assert loaded + refused >= 200, "too few cases ran within the time budget"
