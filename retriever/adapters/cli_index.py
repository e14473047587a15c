"""``retriever index``: build or refresh the memory's index now, with progress, and say what was done.

    retriever index [--root DIR] [--json]

Progress goes to stderr (a bar on a terminal, lines otherwise: ``cli_progress``); what was done
goes to stdout, e.g.::

    company_context: 132 files, 132 documents, 1,204 sections
    index built in 0.6 s: 132 files parsed, 0 deleted
    cache: /home/me/.cache/company-memory-retriever/index/company_context-1a2b3c4d

``--json`` prints the same as one object.  Exit codes: 0 done; 2 a missing root, a root without
markdown (``memory_not_found``, ``memory_empty``) or an invalid setting.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from retriever.adapters.cli_common import JsonCommand, config_option, fail, load_settings, open_memory, root_option
from retriever.text.safe import json_text, one_line

if TYPE_CHECKING:
    from retriever.memory.memory import Memory

_DONE = {
    "built": "index built",
    "updated": "index updated",
    "hit": "index up to date (loaded from the cache)",
    "disabled": "index built in memory only (no cache)",
}


@click.command("index", cls=JsonCommand)
@root_option
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
@config_option
def index(root: Path | None, as_json: bool) -> None:
    """Build or refresh the index now, with progress on stderr, and say what was done.

    Later commands (and servers) then start from the cache. Exit codes: 0 done, 2 a missing root,
    a root without markdown or an invalid setting.
    """
    from retriever.errors import MemoryEmpty

    loaded = load_settings(root, as_json)
    began = time.monotonic()
    memory = open_memory(loaded.root, loaded.settings, as_json)
    summary = _summary(memory, time.monotonic() - began)
    if memory.readiness()[1] == "empty":
        fail(MemoryEmpty.at(str(memory.root), len(memory.skipped)), as_json)
    for warning in memory.warnings:
        click.echo(one_line(f"Warning: {warning}"), err=True)
    if as_json:  # exact values: JSON escapes control characters itself
        click.echo(json_text(summary))
        return
    for line in _lines(summary):
        click.echo(one_line(line))  # the root's name (and the cache folder named after it) may hold ESC or a newline


def _summary(memory: Memory, seconds: float) -> dict[str, Any]:
    stats = memory.stats
    return {
        "root": str(memory.root),
        "files": stats.files,
        "parsed": stats.parsed,
        "removed": stats.removed,
        "skipped": len(memory.skipped),
        "documents": memory.documents_count,
        "sections": memory.sections_count,
        "index": stats.cache,  # built, updated, hit (loaded as it was) or disabled (no cache)
        "seconds": round(seconds, 2),
        "cache_folder": str(memory.cache.folder) if memory.cache else None,
        "warnings": list(memory.warnings),
    }


def _lines(summary: dict[str, Any]) -> list[str]:
    skipped = summary["skipped"]
    why = f" ({skipped:,} skipped: `retriever tree` says why)" if skipped else ""
    return [
        f"{Path(summary['root']).name}: {_count(summary['files'], 'file')}, "
        f"{_count(summary['documents'], 'document')}, {_count(summary['sections'], 'section')}{why}",
        f"{_DONE.get(summary['index'], summary['index'])} in {summary['seconds']:.1f} s: "
        f"{_count(summary['parsed'], 'file')} parsed, {summary['removed']:,} deleted",
        f"cache: {summary['cache_folder'] or 'none'}",
    ]


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


COMMANDS = (index,)
