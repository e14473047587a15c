"""``retriever status`` and ``retriever cache list|prune``: what is set up, and the index caches it left behind.

    retriever status [--root DIR] [--json]
    retriever cache list [--json]
    retriever cache prune [--missing] [--older-than 30d] [--all] [--dry-run]

``status`` exits 0 when everything answers and 1 when it found a problem (a missing or empty root, a
store or an LLM endpoint that does not answer, API keys ``serve`` would refuse to start with), each
named under "Problems".  ``cache prune`` needs at
least one of ``--missing``, ``--older-than``, ``--all`` (exit 2 otherwise) and removes the caches
matching any of them; caches in use by a running process are left alone and named.  A cache whose
``root.json`` could not be taken as written is listed with the reason; ``--missing`` leaves it (its
root is not known to be gone, and a wrong guess costs a full re-index), ``--older-than`` goes by its
files' age, ``--all`` removes it.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import click

from retriever.adapters.cli_common import (
    EXIT_FAILURE,
    EXIT_USAGE,
    JsonCommand,
    config_option,
    load_settings,
    root_option,
)
from retriever.text.safe import json_text, one_line


@click.command(cls=JsonCommand)
@root_option
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@config_option
def status(root: Path | None, as_json: bool) -> None:
    """Show the memory root, files, index cache, store, LLM and where each setting came from.

    Exit codes: 0 when all is well, 1 when a problem was found (listed under Problems), 2 on usage
    errors (an invalid setting or config file).
    """
    from retriever.adapters.status import gather

    report = gather(load_settings(root, as_json))
    if as_json:
        click.echo(json_text(report))
    else:
        for line in _status_lines(report):
            click.echo(one_line(line))
    sys.exit(EXIT_FAILURE if report["problems"] else 0)


def _status_lines(report: dict[str, Any]) -> list[str]:
    memory, cache, store, llm = report["memory"], report["index_cache"], report["store"], report["llm"]
    lines = [
        f"Root:          {report['root']['path']}  [{report['root']['source']}]",
        f"Memory:        {_memory_line(memory)}",
        *[f"  skipped:     {s['path']}: {s['reason']}" for s in memory.get("skipped_first", [])],
        f"Index cache:   {_cache_line(cache)}",
        f"Store:         {_store_line(store)}",
        f"LLM:           {_llm_line(llm)}",
        f"API keys:      {_keys_line(report['api_keys'])}",
        f"Sessions kept under: {report['memory_identity']['value']} ({report['memory_identity']['kind']})",
        "Config files:  " + ", ".join(f"{k}: {v or 'none'}" for k, v in report["config_files"].items()),
        "Settings (not default):",
    ]
    changed = {k: v for k, v in report["settings"].items() if v["source"] != "default"}
    lines += [f"  {k} = {_value(v['value'])}  [{v['source']}]" for k, v in changed.items()] or ["  (none)"]
    lines.append(f"  {len(report['settings']) - len(changed)} others at their defaults (--json lists every one)")
    if report["problems"]:
        lines += ["Problems:", *[f"  - {p}" for p in report["problems"]]]
    return lines


def _memory_line(memory: dict[str, Any]) -> str:
    if "files" not in memory:
        return f"{memory['state']}" + (f" ({memory['error']})" if memory.get("error") else "")
    return (
        f"{memory['state']}: {memory['files']} files, {memory['sections']} sections, "
        f"{memory['skipped_files']} skipped; index {memory['index']}"
    )


def _cache_line(cache: dict[str, Any]) -> str:
    if cache["folder"] is None:
        return "none (the memory root is not a folder)"
    if not cache["exists"]:
        return f"{cache['folder']} (none yet)"
    age = cache["index_age_seconds"]
    saved = f", index saved {_ago(age)}" if age is not None else ", no index saved"
    return f"{cache['folder']} ({_size(cache['size_bytes'])}{saved})"


def _store_line(store: dict[str, Any]) -> str:
    if store["kind"] == "sqlite":
        there = _size(store["size_bytes"]) if store["exists"] else "not created yet"
        unreadable = ", NOT readable" if store.get("readable") is False else ""
        return f"sqlite {store['path']} ({there}{unreadable})"
    answer = "reachable" if store["reachable"] else f"NOT reachable: {store['error']}"
    return f"redis {store['url']} ({answer})"


def _llm_line(llm: dict[str, Any]) -> str:
    probe = llm["probe"]
    if not llm["model"]:
        return str(probe["detail"])
    took = f" in {probe['ms']:g} ms" if "ms" in probe else ""
    answer = probe["detail"] if probe["answers"] else f"NOT answering: {probe['detail']}"
    return f"{llm['model']} at {llm['endpoint']}, key {llm['key']}; GET /models {answer}{took}"


def _keys_line(keys: dict[str, Any]) -> str:
    if not keys["valid"]:
        return "INVALID (see Problems): `retriever serve` would not start"
    if not keys["keys"]:
        return "none (`retriever serve` takes calls from anyone who reaches it; it binds 127.0.0.1)"
    return f"{keys['keys']} ({keys['bound_to_users']} bound to users)"


def _value(value: Any) -> str:
    return str(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _size(size: float) -> str:
    for unit in ("B", "KB", "MB"):
        if size < 1024:
            return f"{size:.0f} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def _ago(seconds: float) -> str:
    for unit, length in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= length:
            return f"{seconds / length:.0f} {unit} ago"
    return f"{seconds:.0f} s ago"


@click.group()
def cache() -> None:
    """List and prune the index caches (one per memory root, under the user cache folder)."""


@cache.command("list", cls=JsonCommand)
@click.option("--json", "as_json", is_flag=True, help="Print the caches as JSON.")
@config_option
def list_command(as_json: bool) -> None:
    """List the index caches: root, whether it still exists, size, last used, in use."""
    from retriever.memory.caches import index_home, list_caches

    settings = load_settings(as_json=as_json).settings
    entries = list_caches(settings)
    if as_json:
        click.echo(json_text([e.to_dict() for e in entries]))
        return
    if not entries:
        click.echo(f"No index caches in {index_home(settings)}.", err=True)
        return
    for e in entries:
        click.echo(one_line(_entry_line(e)))  # a root's path may hold a newline
    total = sum(e.size for e in entries)
    click.echo(f"{len(entries)} caches, {_size(total)} in {index_home(settings)}", err=True)
    if unsure := sum(e.problem is not None for e in entries):
        click.echo(
            f"{unsure} of them with a root.json that could not be taken as written: the next use of their root"
            " rewrites it; `retriever cache prune --older-than AGE` goes by their files' age.",
            err=True,
        )


def _entry_line(entry: Any) -> str:
    """One cache: size, last use, root, and what is wrong with it (a root gone, root.json unreadable)."""
    root = str(entry.root) if entry.root is not None else f"(root unknown: {entry.folder.name})"
    gone = "  [root missing]" if entry.root_exists is False else ""
    busy = "  [in use]" if entry.in_use else ""
    problem = f"  [{entry.problem}]" if entry.problem else ""
    return f"{_size(entry.size):>9}  {_when(entry.last_used)}  {root}{gone}{busy}{problem}"


def _when(seconds: float) -> str:
    """A Unix time as local date and minute; one this system cannot show (a file dated past year 9999) as such."""
    try:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))
    except (OverflowError, OSError, ValueError):
        return f"{'(no date)':<16}"  # as wide as a date, so the columns stay aligned


@cache.command("prune")
@click.option("--missing", is_flag=True, help="Caches of roots that no longer exist.")
@click.option("--older-than", metavar="AGE", default=None, help="Caches not used for AGE (30d, 12h, 2w).")
@click.option("--all", "everything", is_flag=True, help="Every cache (they are rebuilt when needed).")
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
@config_option
def prune_command(missing: bool, older_than: str | None, everything: bool, dry_run: bool) -> None:
    """Remove index caches matching any of --missing, --older-than, --all (caches in use are kept)."""
    from retriever.memory import caches

    if not (missing or older_than or everything):
        click.echo("Say what to prune: --missing, --older-than AGE or --all (see `retriever cache list`).", err=True)
        sys.exit(EXIT_USAGE)
    try:
        age = caches.parse_age(older_than) if older_than else None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--older-than") from None
    settings = load_settings().settings
    chosen = caches.select(caches.list_caches(settings), missing=missing, older_than=age, everything=everything)
    results = caches.prune(settings, chosen, dry_run=dry_run)
    for result in results:
        detail = f" ({result.detail})" if result.detail else ""
        line = f"{result.outcome}: {result.entry.root or result.entry.folder}{detail}  {_size(result.entry.size)}"
        click.echo(one_line(line))  # a root's path may hold a newline
    freed = sum(r.entry.size for r in results if r.outcome in ("removed", "would remove"))
    verb = "would free" if dry_run else "freed"
    caches_word = "cache" if len(results) == 1 else "caches"
    click.echo(f"{len(results)} matching {caches_word}; {verb} {_size(freed)}.", err=True)


COMMANDS = (status, cache)
