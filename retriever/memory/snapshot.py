"""A git revision's documents (``retriever query --at REV``), read as one refresh's changes.

Contract: ``snapshot_changes(snapshot, settings)`` parses every memory file of the snapshot (across worker
processes when there are many) and returns them as ``refresh.Changes`` for ``Refresher.apply`` on a
memory without a cache; files over the size limit or that fail to parse are listed as skipped, as on disk.
"""

from __future__ import annotations

from retriever.config import Settings
from retriever.memory import gitinfo
from retriever.memory.records import Parsed
from retriever.memory.refresh import READING, Changes, Progress, counted
from retriever.text import reader
from retriever.text.models import Skipped


def snapshot_changes(snapshot: gitinfo.GitSnapshot, settings: Settings, progress: Progress | None = None) -> Changes:
    """Every document of a git snapshot as one refresh's changes; unreadable files skipped, as on disk."""
    from retriever.memory import intake, workers  # parsing loads markdown-it and YAML: only when needed

    wanted, skipped = [], []
    for rel_path, (_, size) in sorted(snapshot.files().items()):
        if not reader.is_memory_file(rel_path):
            continue
        try:
            reader.check_size(size, settings.max_file_bytes)
            wanted.append(rel_path)
        except reader.Unreadable as exc:
            skipped.append(Skipped(rel_path, str(exc)))
    items = sorted(snapshot.read(wanted).items())
    changed: dict[str, Parsed | None] = {}
    found = []
    reading = workers.ordered(intake.read_snapshot, items, workers.jobs(settings.index_workers))
    for record in counted(reading, READING, len(items), progress):
        if record.parsed is not None:
            changed[record.entry.rel_path] = record.parsed
            found.append(record)
        else:
            skipped.append(Skipped(record.entry.rel_path, record.reason or "could not be read"))
    return Changes(changed, [], set(changed), skipped, found, len(changed))
