"""The cross-process refresh lock says when it waits and, when asked, gives up; the privacy check refuses
folders and files that are not the user's own."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from retriever.config import Settings, index_cache_dir
from retriever.memory import cache as cache_module
from retriever.memory import locks
from retriever.memory.cache import IndexCache
from retriever.memory.memory import Memory

WAITING = "waiting for another retriever process refreshing"
AS_ROOT = pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="os.chown to another uid needs root")
OTHER_UID = 4242


@contextlib.contextmanager
def _held(folder: Path) -> Iterator[contextlib.ExitStack]:
    """``folder``'s refresh lock held through the locks API, on a descriptor of its own (as another
    process holds it: ``flock`` locks belong to the open file, so this process's next open must wait)."""
    folder.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as holder:
        holder.enter_context(locks.cross_process(folder))
        yield holder


def _waits(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith(WAITING)]


def test_a_held_lock_is_announced_once_and_a_bounded_wait_gives_up_naming_the_folder(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "cache"
    with _held(folder), pytest.raises(TimeoutError, match=str(folder)):  # noqa: SIM117 - the order matters
        with locks.cross_process(folder, wait=0.05):
            pytest.fail("the lock was taken while another holder had it")

    assert _waits(caplog) == [f"{WAITING} {folder}"]


def test_a_wait_ends_as_soon_as_the_other_holder_lets_go(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "cache"
    taken = False

    class ReleaseOnWaiting(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.getMessage().startswith(WAITING):
                holder.close()  # the other process finishes its refresh while this one waits

    handler = ReleaseOnWaiting()
    logging.getLogger(locks.__name__).addHandler(handler)
    try:
        with _held(folder) as holder, locks.cross_process(folder, wait=10.0):
            taken = True
    finally:
        logging.getLogger(locks.__name__).removeHandler(handler)

    assert taken
    assert len(_waits(caplog)) == 1


def test_a_free_lock_is_taken_without_a_word(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with locks.cross_process(tmp_path, wait=0.0):
        pass
    assert _waits(caplog) == []


def test_opening_a_cache_another_process_keeps_locked_gives_up_and_leaves_nothing_held(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    IndexCache(folder).close()  # an existing cache: the other process is refreshing it
    with _held(folder), pytest.raises(TimeoutError, match=str(folder)):
        IndexCache(folder, lock_wait=0.05)

    with locks.unused(folder) as free:  # neither the in-use lock nor the refresh lock was left behind
        assert free
    IndexCache(folder, lock_wait=0.05).close()


def test_a_query_while_another_process_holds_the_cache_indexes_in_memory_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "billing.md").write_text("# Billing\n\nOlena owns the billing migration.\n", encoding="utf-8")
    settings = Settings.from_env(state_dir=tmp_path / "state")
    folder = index_cache_dir(settings, root)
    monkeypatch.setattr(cache_module, "LOCK_WAIT_SECONDS", 0.05)  # the bound a user waits, made short

    with _held(folder):
        memory = Memory.open(root, settings)

    assert memory.cache is None
    assert _waits(caplog) == [f"{WAITING} {folder}"]
    [warning] = [w for w in memory.warnings if "index cache unavailable" in w]
    assert str(folder) in warning and "another retriever process" in warning and "in memory" in warning
    assert memory.index.live_count > 0
    reopened = Memory.open(root, settings)  # the lock let go: the cache is used again
    assert reopened.cache is not None
    reopened.cache.close()


# -- the privacy check -------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757])
def test_private_folder_refuses_an_existing_folder_others_may_write(tmp_path: Path, mode: int) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(mode)
    with pytest.raises(locks.NotPrivate, match=rf"{folder} is writable by others \(mode {mode:o}\)"):
        locks.private_folder(folder)
    assert folder.stat().st_mode & 0o777 == mode  # refused, not changed


def test_private_folder_keeps_an_existing_folder_that_is_fine_as_it_is(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    folder.chmod(0o755)
    locks.private_folder(folder)
    assert folder.stat().st_mode & 0o777 == 0o755


@AS_ROOT
def test_private_folder_refuses_a_folder_another_uid_owns(tmp_path: Path) -> None:
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    os.chown(folder, OTHER_UID, OTHER_UID)
    with pytest.raises(locks.NotPrivate, match=rf"{folder} belongs to uid {OTHER_UID}, not to you \(uid 0\)"):
        locks.private_folder(folder)


def test_open_private_checks_the_file_it_opened_and_never_follows_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_bytes(b"x")
    target.chmod(0o600)
    os.close(locks.open_private(target))
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(OSError):
        locks.open_private(tmp_path / "link")
    target.chmod(0o644)
    os.close(locks.open_private(target))  # readable by others is fine for a cache file...
    with pytest.raises(locks.NotPrivate, match="readable or writable by others"):
        locks.open_private(target, unreadable=True)  # ...not where asked (the store's prompts)
    target.chmod(0o666)
    with pytest.raises(locks.NotPrivate, match="writable by others"):
        locks.open_private(target)


def _writer_done(lock: locks.ReadWriteLock) -> threading.Thread:
    """A thread that takes the write lock once and lets go (join it with a bound to see whether it got it)."""

    def write() -> None:
        with lock.writing():
            pass

    writer = threading.Thread(target=write, daemon=True)  # a failing test must not hang the run at exit
    writer.start()
    return writer


def test_a_reader_that_releases_its_hold_lets_a_writer_through_and_takes_it_back_after() -> None:
    lock = locks.ReadWriteLock()
    with lock.reading():
        with lock.released():
            writer = _writer_done(lock)
            writer.join(10)
            assert not writer.is_alive(), "the writer got the lock while the reader had given it up"
        held_again = _writer_done(lock)
        held_again.join(0.2)
        assert held_again.is_alive(), "the reader holds the lock again after the block"
    held_again.join(10)
    assert not held_again.is_alive()


def test_releasing_without_holding_or_with_a_nested_hold_keeps_what_the_thread_holds() -> None:
    lock = locks.ReadWriteLock()
    with lock.released():  # holds nothing: nothing to give up, and the count never goes below zero
        pass
    with lock.reading(), lock.reading(), lock.released():
        writer = _writer_done(lock)
        writer.join(0.2)
        assert writer.is_alive(), "one of two holds given up would still leave the writer waiting"
    writer.join(10)
    assert not writer.is_alive()


def test_a_reader_interrupted_while_taking_its_hold_back_leaves_the_lock_usable() -> None:
    lock = locks.ReadWriteLock()

    class Interrupted(BaseException):
        pass

    def interrupted() -> None:
        raise Interrupted  # as KeyboardInterrupt would, while the reader waited behind a writer

    with pytest.raises(Interrupted), lock.reading(), lock.released():
        lock._take = interrupted  # type: ignore[method-assign]
    del lock._take  # the class's again
    writer = _writer_done(lock)
    writer.join(10)
    assert not writer.is_alive(), "the reader count had gone to -1 and every writer waited for ever"


def test_a_lock_file_an_older_version_left_readable_by_others_is_made_private(tmp_path: Path) -> None:
    import stat

    (tmp_path / "lock").write_text("")
    (tmp_path / "lock").chmod(0o644)
    with locks.cross_process(tmp_path):
        pass
    assert stat.S_IMODE((tmp_path / "lock").stat().st_mode) == 0o600
