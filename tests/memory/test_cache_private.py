"""The index cache reads only the user's own bytes: a folder or file another uid owns, or others may
write, is refused (the memory is indexed in memory, with a warning), never unpickled."""

from __future__ import annotations

import os
import pickle
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from retriever.config import Settings, index_cache_dir
from retriever.memory import locks
from retriever.memory.cache import IndexCache
from retriever.memory.index import Params
from retriever.memory.memory import Memory

AS_ROOT = pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="os.chown to another uid needs root")
OTHER_UID = 4242


class Planted:
    """A pickle that makes a folder when it is loaded: proof that planted bytes ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.mkdir, (str(self.marker),))


@pytest.fixture
def memory_root(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "billing.md").write_text("# Billing\n\nOlena owns the billing migration.\n", encoding="utf-8")
    return root


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings.from_env(state_dir=tmp_path / "state")


@pytest.fixture
def group_umask() -> Iterator[None]:
    """Umask 002, the default of many Linux users: files 0664 and folders 0775 unless asked otherwise."""
    previous = os.umask(0o002)
    yield
    os.umask(previous)


def _plant(folder: Path, marker: Path, mode: int) -> None:
    """What the review's attacker leaves: a records.sqlite of the current format and a state.pkl that runs code."""
    IndexCache(folder).close()
    (folder / "index").mkdir(exist_ok=True)
    (folder / "index" / "state.pkl").write_bytes(pickle.dumps(Planted(marker)))
    for path in folder.rglob("*"):
        path.chmod(mode if path.is_file() else 0o777)
    folder.chmod(mode | 0o111)


def test_a_cache_folder_others_may_write_is_refused_and_the_memory_indexed_in_memory(
    memory_root: Path, settings: Settings, tmp_path: Path
) -> None:
    folder = index_cache_dir(settings, memory_root)
    marker = tmp_path / "ran"
    _plant(folder, marker, 0o666)

    memory = Memory.open(memory_root, settings)

    assert not marker.exists()
    assert memory.cache is None
    [warning] = [w for w in memory.warnings if "index cache unavailable" in w]
    assert f"{folder} is writable by others (mode 777)" in warning
    assert f"remove {folder}" in warning and "RETRIEVER_STATE_DIR" in warning and "in memory" in warning
    assert memory.index.live_count > 0


@AS_ROOT
def test_a_cache_folder_another_uid_owns_is_refused(memory_root: Path, settings: Settings, tmp_path: Path) -> None:
    folder = index_cache_dir(settings, memory_root)
    marker = tmp_path / "ran"
    _plant(folder, marker, 0o600)
    folder.chmod(0o700)
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, OTHER_UID, OTHER_UID)

    memory = Memory.open(memory_root, settings)

    assert not marker.exists()
    assert memory.cache is None
    assert any(f"{folder} belongs to uid {OTHER_UID}" in w for w in memory.warnings)


@AS_ROOT
@pytest.mark.parametrize("name", ["records.sqlite", "records.sqlite-wal", "records.sqlite-shm"])
def test_a_database_file_another_uid_owns_in_our_folder_is_refused(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "cache"
    IndexCache(folder).close()
    (folder / name).touch()
    os.chown(folder / name, OTHER_UID, OTHER_UID)

    with pytest.raises(locks.NotPrivate, match=f"{folder / name} belongs to uid {OTHER_UID}"):
        IndexCache(folder)
    with locks.unused(folder) as free:  # a refused cache leaves no lock held
        assert free


@pytest.mark.parametrize("owned_by_other", [False, pytest.param(True, marks=AS_ROOT)])
def test_a_state_file_others_may_write_or_another_uid_owns_is_never_unpickled(
    tmp_path: Path, owned_by_other: bool
) -> None:
    cache = IndexCache(tmp_path / "cache")
    marker = tmp_path / "ran"
    state = cache.folder / "index" / "state.pkl"
    state.parent.mkdir(mode=0o700)
    state.write_bytes(pickle.dumps(Planted(marker)))
    state.chmod(0o600 if owned_by_other else 0o666)
    if owned_by_other:
        os.chown(state, OTHER_UID, OTHER_UID)
    history = cache.folder / "history-abc.pkl"
    history.write_bytes(pickle.dumps(Planted(marker)))
    history.chmod(0o622)

    assert cache.load_index(Params()) is None  # absent: the caller rebuilds and overwrites it
    assert cache.load_history("abc") is None
    assert not marker.exists()
    cache.close()


def test_what_a_cache_writes_is_private_whatever_the_umask_so_it_is_read_back(
    memory_root: Path, settings: Settings, group_umask: None
) -> None:
    first = Memory.open(memory_root, settings)
    assert first.cache is not None and first.stats.cache == "built"
    folder = first.cache.folder
    first.cache.save_history("abc", {"commits": 1})
    first.cache.close()

    files = [p for p in folder.rglob("*") if p.is_file()]  # the empty lock files too, as README says of every file
    assert {p.name for p in files} >= {"records.sqlite", "state.pkl", "root.json", "history-abc.pkl", "lock", "in-use"}
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in files} == {p.name: 0o600 for p in files}
    assert stat.S_IMODE((folder / "index").stat().st_mode) == 0o700

    again = Memory.open(memory_root, settings)
    assert again.cache is not None and again.stats.cache == "hit"
    assert again.cache.load_history("abc") == {"commits": 1}
    again.cache.close()
