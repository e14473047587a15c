"""The index caches under the cache home: open a root's, save into it, list them, remove unwanted ones.

Contract: ``open_cache(settings, root)`` opens the cache of a root, or returns None with the warning
``unavailable`` words (the session indexes in memory); ``save`` writes a refresh's index and commits
its records, raising ``CacheUnwritable`` or ``sqlite3.Error`` when the cache cannot take them (a
full disk), upon which ``memory.refresh`` drops the cache for the session the same way.
``list_caches(settings)`` returns one ``CacheEntry`` per folder under the index home
(``cache_home(settings)/index``): its root (from ``root.json``; None for a cache written before
roots were recorded), whether that root still exists, its size, when it was last opened
(``root.json``, else its newest file) and whether a process has it open (``locks.unused``).
``describe`` never raises on what it finds: a ``root.json`` that cannot be read, is not JSON, or
holds a root that is no absolute path or a ``last_used`` that is no time between 1970 and now
leaves that fact unknown (root None, last use from the files) and says why in ``problem``.
``select`` picks entries by those facts; ``prune`` removes the picked folders and says what happened
to each.  It removes only direct sub-folders of the index home that are not symlinks, and only while
holding their locks exclusively: a cache some process has open, or is refreshing, is left alone
(``in use``), and no process can open one while it is being removed.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from retriever.config import Settings, cache_home, index_cache_dir
from retriever.memory import locks
from retriever.memory.cache import ROOT_FILE, IndexCache, IndexState
from retriever.text.regular import read_regular
from retriever.text.safe import cut, preview

log = logging.getLogger(__name__)

_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "": 86400}
_MAX_FILES_COUNTED = 100_000  # per cache folder: a size is an estimate past it, never an endless walk
_ROOT_FILE_BYTES = 64 * 1024  # a root.json holds one path (at most 4 KiB) and a time: past this it is not ours
_PATH_BYTES = 4096  # PATH_MAX on Linux: no longer path can name a folder
_CLOCK_SKEW = 86400.0  # a last use up to a day ahead of this clock is believed (another machine's clock)


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One memory root's index cache."""

    folder: Path
    root: Path | None  # None: written before caches recorded their root
    root_exists: bool | None  # None when the root is unknown
    size: int  # bytes
    last_used: float  # Unix time
    in_use: bool
    problem: str | None = None  # why root.json could not be taken as written (None: it could, or there is none)

    def to_dict(self) -> dict[str, Any]:
        return {
            "folder": str(self.folder),
            "root": str(self.root) if self.root is not None else None,
            "root_exists": self.root_exists,
            "size_bytes": self.size,
            "last_used": self.last_used,
            "in_use": self.in_use,
            "problem": self.problem,
        }


Outcome = Literal["removed", "would remove", "in use", "outside the cache home", "failed"]


@dataclass(frozen=True, slots=True)
class Pruned:
    """What ``prune`` did with one cache."""

    entry: CacheEntry
    outcome: Outcome
    detail: str = ""


class CacheUnwritable(Exception):
    """The index could not be written to its cache (an ``OSError``: a full disk, a read-only folder)."""


def open_cache(settings: Settings, root: Path) -> tuple[IndexCache | None, list[str]]:
    """The index cache of ``root`` (None, with a warning, when it is unusable or inside the tree)."""
    folder = index_cache_dir(settings, root)
    try:
        if folder.resolve().is_relative_to(root.resolve()):
            return None, [f"state folder {folder} is inside the memory tree; index cache disabled"]
        return IndexCache(folder), []
    except (OSError, sqlite3.Error) as exc:
        return None, [unavailable(folder, exc)]


def unavailable(folder: Path, cause: Exception) -> str:
    """The warning of a session without its cache (logged too): which folder, why, and that it indexes in memory."""
    log.warning("index cache unavailable at %s: %s", folder, cause)
    return f"index cache unavailable at {folder} ({cause}); indexing in memory"


def save(cache: IndexCache, state: IndexState | None) -> None:
    """Write ``state`` (None: the index did not change) then commit the refresh's file records; raises
    ``CacheUnwritable`` or ``sqlite3.Error`` when the cache cannot take them (the caller rolls back)."""
    if state is not None:
        try:
            cache.save_index(state)
        except OSError as exc:  # committing the records without their index would leave the two out of step
            raise CacheUnwritable(f"the index could not be saved: {exc}") from exc
    cache.commit()


def index_home(settings: Settings) -> Path:
    """The folder holding one index cache per memory root."""
    return cache_home(settings) / "index"


def list_caches(settings: Settings) -> list[CacheEntry]:
    """Every cache folder under the index home, most recently used first."""
    home = index_home(settings)
    try:
        folders = [Path(e.path) for e in os.scandir(home) if e.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        return []
    entries = [describe(folder) for folder in folders]
    return sorted(entries, key=lambda e: e.last_used, reverse=True)


def describe(folder: Path) -> CacheEntry:
    """What is known of one cache folder (see the module's contract); never raises on a malformed root.json."""
    problems: list[str] = []
    recorded = _recorded(folder, problems)
    root = _root(recorded, problems)
    size, newest = _measure(folder)
    last_used = _last_used(recorded, newest, problems)
    exists = _exists(root, problems)
    problem = "; ".join(problems) or None
    return CacheEntry(folder, root, exists, size, last_used, _in_use(folder), problem)


def _recorded(folder: Path, problems: list[str]) -> dict[str, Any] | None:
    """root.json's object; None when there is none, or when it is unusable (then the reason is in ``problems``)."""
    try:  # non-blocking and bounded: a FIFO or a huge file planted there must not hang or fill `cache list`
        data = json.loads(read_regular(folder / ROOT_FILE, _ROOT_FILE_BYTES, follow=False))
    except FileNotFoundError:
        return None  # a cache from before roots were recorded
    except OSError as exc:
        problems.append(f"root.json cannot be read ({exc.strerror})")
        return None
    except (ValueError, RecursionError) as exc:  # not a regular file, too large, not UTF-8, not JSON, nested too deep
        problems.append(f"root.json is unreadable ({cut(str(exc), 80)})")
        return None
    if not isinstance(data, dict):
        problems.append(f"root.json holds {_shown(data)}, not an object")
        return None
    return data


def _root(recorded: dict[str, Any] | None, problems: list[str]) -> Path | None:
    """The recorded root when it can be a folder's absolute path (what ``mark_used`` writes), else None."""
    if recorded is None:
        return None
    value = recorded.get("root")
    if isinstance(value, str) and _is_path(value):
        return Path(value)
    problems.append(f"root.json's root {_shown(value)} is not a folder's absolute path")
    return None


def _is_path(text: str) -> bool:
    """Whether ``text`` can be an absolute path on this system: encodable, no NUL, within ``_PATH_BYTES``."""
    try:
        encoded = os.fsencode(text)
    except UnicodeError:  # a lone surrogate: no file name is spelled so
        return False
    return b"\0" not in encoded and len(encoded) <= _PATH_BYTES and os.path.isabs(text)


def _last_used(recorded: dict[str, Any] | None, newest: float, problems: list[str]) -> float:
    """root.json's last use when it is a time from 1970 to now (a day of clock skew allowed), else the newest
    file's: a time past that would keep the cache from ever being old enough to prune, or stop ``cache list``."""
    if recorded is None:
        return newest
    value = recorded.get("last_used")
    # NaN fails every comparison and infinity the upper bound; a huge integer is compared exactly, never converted.
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= time.time() + _CLOCK_SKEW:
        return float(value)
    problems.append(f"root.json's last_used {_shown(value)} is not a time; the files' newest time stands for it")
    return newest


def _exists(root: Path | None, problems: list[str]) -> bool | None:
    """Whether ``root`` is a folder now; None when unknown (no root, or it cannot be checked: say why)."""
    if root is None:
        return None
    try:
        return root.is_dir()
    except (OSError, ValueError) as exc:  # a parent we may not search, a name too long for this system
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        problems.append(f"root {preview(str(root))} cannot be checked ({reason})")
        return None


def _shown(value: Any) -> str:
    """A value from root.json, bounded for a message: a string quoted, a number, true/false/null as JSON writes
    them, a container by its kind only (one nested near the recursion limit could not be written back)."""
    if isinstance(value, str):
        return preview(value)
    if isinstance(value, list | dict):
        return "a JSON array" if isinstance(value, list) else "a JSON object"
    return cut(json.dumps(value), 80)


def _measure(folder: Path) -> tuple[int, float]:
    """(bytes, newest modification time) of the files under ``folder``, symlinks not followed."""
    size, newest, seen, pending = 0, 0.0, 0, [folder]
    while pending and seen < _MAX_FILES_COUNTED:
        try:
            with os.scandir(pending.pop()) as listing:
                for item in listing:
                    seen += 1
                    if item.is_dir(follow_symlinks=False):
                        pending.append(Path(item.path))
                    elif item.is_file(follow_symlinks=False):
                        stat = item.stat(follow_symlinks=False)
                        size, newest = size + stat.st_size, max(newest, stat.st_mtime)
        except OSError:
            continue  # a folder removed or unreadable meanwhile counts as empty
    return size, newest


def _in_use(folder: Path) -> bool:
    try:
        with locks.unused(folder, look_only=True) as free:
            return not free
    except OSError:
        return False  # removed meanwhile, or not ours to lock: prune decides again under the lock


def parse_age(text: str) -> float:
    """Seconds in ``30d``, ``12h``, ``90m``, ``45s``, ``2w`` (a bare number is days); ``ValueError`` otherwise."""
    match = _AGE.match(text)
    if match is None:
        raise ValueError(f"{text[:40]!r} is not an age; write it like 30d, 12h, 90m or 2w")
    return float(match[1]) * _UNITS[match[2]]


def select(
    entries: Iterable[CacheEntry],
    *,
    missing: bool = False,
    older_than: float | None = None,
    everything: bool = False,
    now: float | None = None,
) -> list[CacheEntry]:
    """The entries matching any of the criteria: a root that no longer exists (``missing``; an unknown root,
    or one that cannot be checked, is not taken for gone), last used more than ``older_than`` seconds ago,
    or all of them (``everything``)."""
    now = time.time() if now is None else now
    old = (lambda e: now - e.last_used > older_than) if older_than is not None else (lambda e: False)
    return [e for e in entries if everything or (missing and e.root_exists is False) or old(e)]


def prune(settings: Settings, entries: Iterable[CacheEntry], *, dry_run: bool = False) -> list[Pruned]:
    """Remove the entries' folders (see the module's contract); ``dry_run`` only says what would go."""
    home = index_home(settings).resolve()
    return [_prune_one(home, entry, dry_run) for entry in entries]


def _prune_one(home: Path, entry: CacheEntry, dry_run: bool) -> Pruned:
    folder = entry.folder
    if folder.is_symlink() or folder.resolve().parent != home:
        return Pruned(entry, "outside the cache home")
    try:
        with locks.unused(folder, look_only=dry_run) as free:  # a dry run leaves no lock file behind
            if not free:
                return Pruned(entry, "in use", "a process has it open; stop it first, or prune later")
            if dry_run:
                return Pruned(entry, "would remove")
            shutil.rmtree(folder)
    except OSError as exc:
        return Pruned(entry, "failed", exc.strerror or str(exc))
    return Pruned(entry, "removed")
