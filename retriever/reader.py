"""The file-system seam: which files belong to the memory tree, and their decoded text.

Contract:
- ``scan(root)`` lists the tree's markdown files (posix paths relative to ``root``) with their
  ``os.stat`` results, skipping hidden files and folders, editor noise, ``.gitignore``d paths
  and symlinks that lead outside the root (those come back as ``Skipped``).
- ``read_text(root, rel_path, max_bytes)`` returns (text, sha1) or raises ``Unreadable`` with a
  reason: over the size limit, binary, not UTF-8.
Nothing here parses markdown; nothing else in the core opens memory files.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pathspec

from retriever.models import Skipped

_NOISE_SUFFIXES = ("~", ".swp", ".swo", ".tmp", ".bak", ".orig")
_MARKDOWN = (".md", ".markdown")


class Unreadable(ValueError):
    """A file that cannot be read as text; the message says why."""


@dataclass(frozen=True, slots=True)
class Entry:
    """A markdown file found in the tree."""

    rel_path: str
    size: int
    mtime_ns: int


def is_memory_file(rel_path: str) -> bool:
    """A markdown file outside hidden folders and not an editor's temp file (for trees not read from disk)."""
    parts = rel_path.split("/")
    return parts[-1].lower().endswith(_MARKDOWN) and not any(_is_noise(part) for part in parts)


def _is_noise(name: str) -> bool:
    return name.startswith((".", "#", "~$")) or name.endswith(_NOISE_SUFFIXES)


def _gitignore(directory: Path) -> pathspec.PathSpec[Any] | None:
    path = directory / ".gitignore"
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(rel: str, is_dir: bool, specs: list[tuple[str, pathspec.PathSpec[Any]]]) -> bool:
    for base, spec in specs:
        local = rel[len(base) + 1 :] if base else rel
        if spec.match_file(local + "/" if is_dir else local):
            return True
    return False


def scan(root: Path) -> tuple[list[Entry], list[Skipped]]:
    """Markdown files under ``root`` in sorted order, and the files left out with a reason."""
    root = root.resolve()
    entries: list[Entry] = []
    skipped: list[Skipped] = []
    _scan_dir(root, root, "", [], entries, skipped)
    entries.sort(key=lambda e: e.rel_path)
    return entries, skipped


def _scan_dir(
    root: Path,
    directory: Path,
    rel_dir: str,
    specs: list[tuple[str, pathspec.PathSpec[Any]]],
    entries: list[Entry],
    skipped: list[Skipped],
) -> None:
    spec = _gitignore(directory)
    if spec is not None:
        specs = [*specs, (rel_dir, spec)]
    try:
        children = sorted(os.scandir(directory), key=lambda d: d.name)
    except OSError as exc:
        skipped.append(Skipped(rel_dir or ".", f"folder cannot be listed: {exc.strerror}"))
        return
    for child in children:
        rel = f"{rel_dir}/{child.name}" if rel_dir else child.name
        if _is_noise(child.name):
            continue
        if child.is_dir(follow_symlinks=False):
            if not _ignored(rel, True, specs):
                _scan_dir(root, Path(child.path), rel, specs, entries, skipped)
            continue
        if not child.name.lower().endswith(_MARKDOWN) or _ignored(rel, False, specs):
            continue
        entry = _entry(root, child, rel, skipped)
        if entry is not None:
            entries.append(entry)


def _entry(root: Path, child: os.DirEntry[str], rel: str, skipped: list[Skipped]) -> Entry | None:
    try:
        if child.is_symlink():
            target = Path(child.path).resolve()
            if not target.is_relative_to(root):
                skipped.append(Skipped(rel, "symlink leads outside the memory root; copy the file in instead"))
                return None
            if not target.is_file():
                skipped.append(Skipped(rel, "symlink does not lead to a file"))
                return None
        stat = child.stat(follow_symlinks=True)
    except OSError as exc:
        skipped.append(Skipped(rel, f"cannot be read: {exc.strerror}"))
        return None
    if not child.is_file(follow_symlinks=True):
        return None
    return Entry(rel, stat.st_size, stat.st_mtime_ns)


def read_text(root: Path, rel_path: str, max_bytes: int) -> tuple[str, str]:
    """The file's text (UTF-8, BOM removed) and the SHA-1 of its bytes."""
    path = root / rel_path
    try:
        check_size(path.stat().st_size, max_bytes)
        data = path.read_bytes()
    except OSError as exc:
        raise Unreadable(f"cannot be read: {exc.strerror}") from exc
    return decode(data)


def check_size(size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise Unreadable(f"larger than the {max_bytes:,}-byte limit ({size:,} bytes); split it or raise max_file_bytes")


def decode(data: bytes) -> tuple[str, str]:
    """Markdown bytes as text (UTF-8, BOM removed) and their SHA-1; ``Unreadable`` for binary or other encodings."""
    digest = hashlib.sha1(data, usedforsecurity=False).hexdigest()
    if b"\x00" in data[:8192]:
        raise Unreadable("binary content (NUL bytes), not markdown text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(f"not UTF-8 (invalid byte at offset {exc.start}); re-save it as UTF-8") from exc
    return text.removeprefix("\ufeff"), digest


def modified_at(root: Path, rel_path: str) -> float | None:
    """A file's modification time (Unix seconds), or None when it cannot be read."""
    try:
        return (root / rel_path).stat().st_mtime
    except OSError:
        return None
