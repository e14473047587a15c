"""A git revision's documents (``retriever query --at REV``), read as one refresh's changes.

Contract: ``snapshot_changes(snapshot, settings)`` parses every memory file of the snapshot (across worker
processes when there are many) and returns them as ``refresh.Changes`` for ``Refresher.apply`` on a
memory without a cache; files over the size limit or that fail to parse are listed as skipped, as on disk.
``cached_changes(snapshot, settings, root)`` is the same, kept per commit in the root's cache folder (a commit's
files never change): asked again, a revision of 883 files loads in ~0.05 s where parsing it took 5.5 s.  The
last ``AT_KEPT`` revisions are kept; none where the cache folder is unusable or inside the tree.  A revision not
kept takes each file a kept revision holds at the same blob as it was parsed there, and each file the working tree's
index cache holds at the same bytes from that cache's record (``Known``): only the files that differ are parsed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections.abc import Callable, Mapping
from pathlib import Path

from retriever.config import Settings, index_cache_dir
from retriever.memory import cachefiles, gitinfo, locks
from retriever.memory.cache import FORMAT
from retriever.memory.records import Parsed, Record
from retriever.memory.refresh import READING, Changes, Progress, counted
from retriever.text import reader
from retriever.text.models import Skipped

log = logging.getLogger(__name__)
AT_KEPT = 2  # revisions a root's cache folder keeps parsed (~40 MB each for the 883-file handbook)


def snapshot_changes(
    snapshot: gitinfo.GitSnapshot,
    settings: Settings,
    progress: Progress | None = None,
    known: Known | None = None,
) -> Changes:
    """Every document of a git snapshot as one refresh's changes; unreadable files skipped, as on disk.  A file
    ``known`` holds at the snapshot's blob is taken as it was parsed; one ``known.records`` holds parsed at the same
    bytes (the working tree's cache) is not parsed again."""
    from retriever.memory import intake, workers  # parsing loads markdown-it and YAML: only when needed

    known = known or Known()
    wanted, skipped = _wanted(snapshot, settings)
    blobs = {rel: snapshot.files()[rel][0] for rel in wanted}
    kept = {rel: parsed for rel in wanted if (parsed := known.parsed.get((rel, blobs[rel]))) is not None}
    read = snapshot.read([rel for rel in wanted if rel not in kept])
    records = known.records({rel: hashlib.sha1(data, usedforsecurity=False).hexdigest() for rel, data in read.items()})
    items = sorted((rel, data, records.get(rel)) for rel, data in read.items())
    changed: dict[str, Parsed | None] = {}
    found = []
    reading = workers.ordered(intake.read_snapshot, items, workers.jobs(settings.index_workers))
    for record in counted(reading, READING, len(items), progress):
        if record.parsed is not None:
            changed[record.entry.rel_path] = record.parsed
            found.append(record)
        else:
            skipped.append(Skipped(record.entry.rel_path, record.reason or "could not be read"))
    # Every document is a record too: the memory holds a revision's documents from its records (``Refresher._keep``).
    found += [Record(reader.Entry(rel, snapshot.files()[rel][1], 0), "", parsed, None) for rel, parsed in kept.items()]
    changed.update(kept)
    changed = dict(sorted(changed.items()))  # one order however each was come by: ties rank alike
    found.sort(key=lambda record: record.entry.rel_path)
    return Changes(changed, [], set(changed), skipped, found, len(items) - len(records), blobs=blobs)


def _wanted(snapshot: gitinfo.GitSnapshot, settings: Settings) -> tuple[list[str], list[Skipped]]:
    """The snapshot's memory files within the size limit, and those over it as skipped, each in path order."""
    wanted, skipped = [], []
    for rel_path, (_, size) in sorted(snapshot.files().items()):
        if not reader.is_memory_file(rel_path):
            continue
        try:
            reader.check_size(size, settings.max_file_bytes)
            wanted.append(rel_path)
        except reader.Unreadable as exc:
            skipped.append(Skipped(rel_path, str(exc)))
    return wanted, skipped


@dataclasses.dataclass(frozen=True)
class Known:
    """What a revision's files may be taken from instead of parsed: the kept revisions' parses, by (path, blob), and
    the working tree's cache records, by path and SHA-1 of the bytes (``records``: wanted → found)."""

    parsed: Mapping[tuple[str, str], Parsed] = dataclasses.field(default_factory=dict)
    records: Callable[[dict[str, str]], dict[str, bytes]] = lambda wanted: {}


def cached_changes(
    snapshot: gitinfo.GitSnapshot, settings: Settings, root: Path, progress: Progress | None = None
) -> Changes:
    """``snapshot_changes``, loaded from the root's cache folder where it was kept for this commit, parsing and
    limits alike (``_key``), else worked out, each file taken from a kept revision or the working tree's cache where
    either holds it at the same bytes, and kept; ``parsed`` is 0 for a loaded one."""
    folder = _folder(settings, root)
    key = _key(snapshot, settings)
    saved = cachefiles.read_kept(folder, "at", snapshot.commit, "revision") if folder is not None else None
    kept = saved.get("changes") if isinstance(saved, dict) and saved.get("key") == key else None
    if isinstance(kept, Changes) and hasattr(kept, "blobs"):  # kept by an older version: worked out again
        return dataclasses.replace(kept, parsed=0)
    known = _known(folder, key) if folder is not None else Known()
    changes = snapshot_changes(snapshot, settings, progress, known)
    if folder is not None:
        try:
            cachefiles.write_kept(folder, "at", snapshot.commit, {"key": key, "changes": changes}, AT_KEPT)
        except OSError as exc:  # a full disk: the answer stands, the next asking parses again
            log.warning("could not keep revision %s in %s: %s", snapshot.commit[:12], folder, exc)
    return changes


def _known(folder: Path, key: dict[str, object]) -> Known:
    """The kept revisions' parses (of the same format, folder and limit) and the working tree's cache records."""
    parsed: dict[tuple[str, str], Parsed] = {}
    for commit in cachefiles.kept_commits(folder, "at")[:AT_KEPT]:
        saved = cachefiles.read_kept(folder, "at", commit, "revision")
        changes = saved.get("changes") if isinstance(saved, dict) else None
        same = isinstance(saved, dict) and {**saved.get("key", {}), "commit": key["commit"]} == key
        blobs = getattr(changes, "blobs", {})  # kept by an older version: no blob ids
        if same and isinstance(changes, Changes):
            parsed.update({(rel, blobs[rel]): p for rel, p in changes.changed.items() if rel in blobs and p})
    return Known(parsed, lambda wanted: cachefiles.parsed_records(folder, FORMAT, wanted))


def _key(snapshot: gitinfo.GitSnapshot, settings: Settings) -> dict[str, object]:
    """What a kept revision's parse depends on besides its commit: the cache format (parser, analyzer, documents),
    the folder it was read from, and the file size limit that skips files."""
    return {"format": FORMAT, "commit": snapshot.commit, "prefix": snapshot.prefix, "max": settings.max_file_bytes}


def _folder(settings: Settings, root: Path) -> Path | None:
    """The root's cache folder, made private where missing; None where it is unusable or inside the tree."""
    folder = index_cache_dir(settings, root)
    try:
        if folder.resolve().is_relative_to(root.resolve()):
            return None
        locks.private_folder(folder)
    except OSError as exc:
        log.warning("revisions are not kept: the cache folder %s is unusable (%s)", folder, exc)
        return None
    return folder
