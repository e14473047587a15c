"""The SQLite store holds every prompt and response: its folder and files are readable by their owner only."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from retriever.config import Settings, state_home
from retriever.service.stores import open_store
from retriever.service.stores.base import RequestRecord, StoreUnavailable
from retriever.service.stores.sqlite import SQLiteStore

SCOPE = "0123456789abcdef"


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """The common umask (022), under which files are created 0644 and folders 0755 unless asked otherwise."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _use(store: SQLiteStore) -> None:
    """A prompt and a logged call: the write that makes SQLite's -wal and -shm files."""
    store.add_prompt("s", "Who owns Helix?")
    store.log(RequestRecord("r1", 1_796_000_000.0, "s", "retrieve_memory", "http", "ok", 1.0), scope=SCOPE)


def test_the_state_folders_the_store_creates_are_private_and_so_are_its_files(tmp_path: Path) -> None:
    settings = Settings.from_env(state_dir=tmp_path / "made" / "by-us")
    store = open_store(settings)
    assert isinstance(store, SQLiteStore)
    _use(store)

    folder = state_home(settings)
    assert [_mode(p) for p in (tmp_path / "made", tmp_path / "made" / "by-us", folder)] == [0o700] * 3
    files = {p.name: _mode(p) for p in folder.iterdir()}
    store.close()
    assert files == {"store.sqlite": 0o600, "store.sqlite-wal": 0o600, "store.sqlite-shm": 0o600}


def test_a_folder_the_user_made_keeps_its_mode_and_the_store_in_it_is_private(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o755)
    store = SQLiteStore(folder / "store.sqlite")
    _use(store)

    assert _mode(folder) == 0o755
    assert {p.name: _mode(p) for p in folder.iterdir()} == {
        "store.sqlite": 0o600,
        "store.sqlite-wal": 0o600,
        "store.sqlite-shm": 0o600,
    }
    store.close()


def test_a_store_an_earlier_version_left_readable_by_others_is_made_private_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    earlier = SQLiteStore(path)
    _use(earlier)  # left open: its -wal and -shm stay, as a server killed mid-run leaves them
    for name in ("store.sqlite", "store.sqlite-wal", "store.sqlite-shm"):
        (tmp_path / name).chmod(0o644)

    store = SQLiteStore(path)

    assert {p.name: _mode(p) for p in tmp_path.iterdir()} == {
        "store.sqlite": 0o600,
        "store.sqlite-wal": 0o600,
        "store.sqlite-shm": 0o600,
    }
    store.close()
    earlier.close()


# -- a store someone else could read, or has planted, is refused ---------------------------------

AS_ROOT = pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="os.chown to another uid needs root")
OTHER_UID = 4242


@pytest.mark.parametrize("mode", [0o777, 0o773, 0o757])
def test_a_store_folder_others_may_write_is_refused_naming_it_and_the_fix(tmp_path: Path, mode: int) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    folder.chmod(mode)

    with pytest.raises(StoreUnavailable) as refused:
        SQLiteStore(folder / "store.sqlite")

    message = refused.value.message
    assert f"{folder} is writable by others (mode {mode:o})" in message
    assert str(folder / "store.sqlite") in message and "RETRIEVER_STATE_DIR" in message
    assert list(folder.iterdir()) == []  # nothing written there
    assert _mode(folder) == mode


@AS_ROOT
@pytest.mark.parametrize("name", ["", "store.sqlite", "store.sqlite-wal", "store.sqlite-shm"])
def test_a_store_whose_folder_or_files_another_uid_owns_is_refused(tmp_path: Path, name: str) -> None:
    # The review's attack: another user made the state folder or an empty store.sqlite, to read the prompts.
    folder = tmp_path / "state"
    SQLiteStore(folder / "store.sqlite").close()
    planted = folder / name
    if name:
        planted.touch()
        planted.chmod(0o600)
    os.chown(planted, OTHER_UID, OTHER_UID)

    with pytest.raises(StoreUnavailable, match=rf"{planted} belongs to uid {OTHER_UID}, not to you \(uid 0\)"):
        SQLiteStore(folder / "store.sqlite")


def test_a_store_file_that_stays_readable_by_others_after_the_chmod_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.sqlite"
    SQLiteStore(path).close()
    path.chmod(0o644)

    def refused_chmod(fd: int, mode: int) -> None:  # as a file system that ignores modes (or ACLs) does
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "fchmod", refused_chmod)
    with pytest.raises(StoreUnavailable, match=rf"{path} is readable or writable by others \(mode 644\)"):
        SQLiteStore(path)


def test_a_symlink_in_the_store_s_place_is_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.sqlite"
    SQLiteStore(elsewhere).close()
    (tmp_path / "state").mkdir(mode=0o700)
    (tmp_path / "state" / "store.sqlite").symlink_to(elsewhere)

    with pytest.raises(StoreUnavailable, match=r"store\.sqlite"):
        SQLiteStore(tmp_path / "state" / "store.sqlite")


def test_another_process_closing_the_same_store_loses_none_of_this_ones_writes(tmp_path: Path) -> None:
    """Checking the -wal and -shm by opening them once dropped SQLite's POSIX locks in this process (closing
    any descriptor of a file drops them all): a second process (an agent's ``retriever mcp``) closing the
    store then took itself for the last, checkpointed and deleted them, and this process's later writes
    went to a deleted file that no other process reads."""
    path = tmp_path / "store.sqlite"
    _in_another_process("s = SQLiteStore(path); s.add_prompt('c', 'made it'); s.close()", path)  # WAL already
    store = SQLiteStore(path)
    try:
        store.add_prompt("s", "first")
        _in_another_process("s = SQLiteStore(path); s.add_prompt('t', 'from the other process'); s.close()", path)
        store.add_prompt("s", "second")
        seen = _in_another_process("print(sorted(SQLiteStore(path).prompts('s')))", path)
        assert seen.strip() == "['first', 'second']"
    finally:
        store.close()


def _in_another_process(code: str, path: Path) -> str:
    """Run ``code`` in a new Python process with ``path`` and ``SQLiteStore`` defined; its standard output."""
    preamble = "import sys; from pathlib import Path; from retriever.service.stores.sqlite import SQLiteStore\n"
    program = preamble + "path = Path(sys.argv[1])\n" + code + "\n"
    done = subprocess.run([sys.executable, "-P", "-c", program, str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
