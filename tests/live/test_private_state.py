"""The live runtime's state is its owner's alone: folders 0700, files 0600, whatever the umask."""

from __future__ import annotations

import os
import stat

from dlsched.live.private import private_dir, write_private
from dlsched.live.store import Store


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_store_folder_database_and_wal_are_private(tmp_path):
    old = os.umask(0o022)
    try:
        st = Store(tmp_path / "state")
        st.event(0.0, None, "service-start", policy="fcfs", gpus=2)
        files = [p for p in (tmp_path / "state").iterdir() if p.name.startswith("state.sqlite")]
        assert {p.name for p in files} >= {"state.sqlite", "state.sqlite-wal", "state.sqlite-shm"}
        assert _mode(tmp_path / "state") == 0o700
        assert all(_mode(p) == 0o600 for p in files), {p.name: oct(_mode(p)) for p in files}
        st.close()
    finally:
        os.umask(old)


def test_an_existing_state_folder_is_tightened(tmp_path):
    d = tmp_path / "open"
    d.mkdir(mode=0o755)
    os.chmod(d, 0o755)
    Store(d).close()
    assert _mode(d) == 0o700 and _mode(d / "state.sqlite") == 0o600


def test_checkpoint_files_are_private(tmp_path):
    old = os.umask(0o000)
    try:
        folder = private_dir(tmp_path / "ckpt" / "job")
        write_private(folder / "ckpt.json", b"{}")
        assert _mode(folder) == 0o700 and _mode(folder / "ckpt.json") == 0o600
    finally:
        os.umask(old)
