"""``retriever query`` and ``retriever tree``: ask the memory, and see its outline.

    retriever query "Who owns billing?" [--root DIR] [--json] [--top-k N] [--llm-model M | --no-llm] [--at REV]
    retriever query who owns billing        # the words are the prompt, quoted or not
    echo "Who owns billing?" | retriever query -     # "-" reads the prompt from stdin
    retriever tree [--root DIR] [--json]

``query`` on a root without markdown exits 2 with ``memory_empty`` (the library's result says
``memory_ready: false``; on the command line that is almost always a wrong ``--root``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from retriever.adapters.cli_common import JsonCommand, config_option, fail, load_settings, open_memory, root_option
from retriever.text.safe import json_text, one_line, terminal_text

if TYPE_CHECKING:
    from retriever.memory.memory import Memory


@click.command(cls=JsonCommand)
@click.argument("words", metavar="PROMPT...", nargs=-1, required=True)
@root_option
@click.option("--json", "as_json", is_flag=True, help="Print structuredContent as JSON.")
@click.option(
    "--top-k",
    type=click.IntRange(1, 100),
    default=None,
    help="Facts to return [default: $RETRIEVER_TOP_K, else top_k in a config file, else 12].",
)
@click.option("--llm-model", default=None, help="Guide retrieval with this model [default: $RETRIEVER_LLM_MODEL].")
@click.option("--no-llm", is_flag=True, help="Answer offline even when a model is configured.")
@click.option("--at", default=None, metavar="REV", help="Answer from the tree as it was at a commit, tag or date.")
@config_option
def query(
    words: tuple[str, ...],
    root: Path | None,
    as_json: bool,
    top_k: int | None,
    llm_model: str | None,
    no_llm: bool,
    at: str | None,
) -> None:
    """Retrieve what the memory knows about PROMPT (its words, quoted or not; "-" reads stdin)."""
    from retriever.adapters.cli_progress import Reporter
    from retriever.errors import MemoryEmpty, RetrieverError
    from retriever.retriever import Retriever

    prompt = _prompt(words, as_json)
    loaded = load_settings(root, as_json, top_k=top_k, llm_model=llm_model)
    settings = loaded.settings.model_copy(update={"llm_model": None}) if no_llm else loaded.settings
    progress = Reporter()  # loading, building the index, reading a revision: on stderr when slow
    try:
        retriever = Retriever(loaded.root, settings, at=at, progress=progress)
        _ = retriever.memory  # loaded first, so that a missing root or an unknown revision is an error here
        progress.close()
        result = retriever.retrieve(prompt)
        if result.structured["readiness_state"] == "empty":
            raise MemoryEmpty.at(str(retriever.root), len(result.structured["diagnostics"]["skipped_files"]))
    except RetrieverError as exc:
        progress.close()
        fail(exc, as_json)
        return
    if as_json:  # exact values: JSON escapes control characters itself
        click.echo(json_text(result.structured))
    elif sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(terminal_markdown(safe_report(result.text, retriever.memory))))
    else:
        click.echo(safe_report(result.text, retriever.memory))


def _prompt(words: tuple[str, ...], as_json: bool) -> str:
    """The prompt: the words joined by spaces, or stdin for a lone "-" (read up to just past the
    limit, so that an endless pipe cannot fill memory and an over-long prompt is still named)."""
    from retriever.errors import InvalidArguments

    if len(words) > 1 and words[0] == "-":  # stdin and words both: which one is the prompt?
        message = "'-' reads the prompt from stdin: give it alone, or quote a prompt that starts with '-' ('- foo')"
        fail(InvalidArguments(message), as_json)
    if words != ("-",):
        return " ".join(words)
    from retriever.config import MAX_PROMPT_CHARS
    from retriever.text.safe import lone_surrogate

    text = sys.stdin.read(MAX_PROMPT_CHARS + 2).removeprefix("\ufeff")  # a byte-order mark does not count
    if len(text) > MAX_PROMPT_CHARS and len(text.strip()) > MAX_PROMPT_CHARS:  # the rest of the pipe is not read
        fail(InvalidArguments(f"'prompt' read from stdin is over {MAX_PROMPT_CHARS:,} characters: shorten it"), as_json)
    if lone_surrogate(text) is not None:  # how Python's stdin passes on bytes that are not UTF-8
        fail(InvalidArguments("'prompt' read from stdin is not valid UTF-8: send the prompt as UTF-8 text"), as_json)
    return text.strip()


@click.command(cls=JsonCommand)
@root_option
@click.option("--json", "as_json", is_flag=True, help="Print the outline as JSON.")
@config_option
def tree(root: Path | None, as_json: bool) -> None:
    """Print the memory tree's outline: documents, section counts, skipped files."""
    from retriever.errors import RetrieverError

    loaded = load_settings(root, as_json)
    try:
        memory = open_memory(loaded.root, loaded.settings, as_json)
    except RetrieverError as exc:
        fail(exc, as_json)
        return
    if as_json:
        click.echo(json_text(_outline(memory)))
        return
    for line in _outline_lines(memory):
        click.echo(one_line(line))  # a file name may hold a newline: it must not start a line of its own


def _outline(memory: Memory) -> dict[str, Any]:
    ready, state = memory.readiness()
    docs = [
        {
            "path": memory.source_path(p),
            "tree_path": memory.tree_path(p),
            "title": i.title,
            "type": i.doc_type,
            "sections": i.sections,
        }
        for p, i in sorted(memory.state.catalog.items())
    ]
    return {
        "root": str(memory.root),
        "memory_ready": ready,
        "readiness_state": state,
        "documents": docs,
        "sections": memory.sections_count,
        "skipped": [{"path": memory.source_path(s.rel_path), "reason": s.reason} for s in memory.skipped],
    }


def _outline_lines(memory: Memory) -> list[str]:
    _, state = memory.readiness()
    lines = [f"{memory.root_name}/  {memory.documents_count} documents, {memory.sections_count} sections ({state})"]
    shown: set[str] = set()
    for path, info in sorted(memory.state.catalog.items()):
        folders = path.split("/")[:-1]
        for depth in range(1, len(folders) + 1):
            key = "/".join(folders[:depth])
            if key not in shown:
                shown.add(key)
                lines.append(f"{'  ' * depth}{folders[depth - 1]}/  {memory.folder_titles(path)[depth - 1]}")
        kind = f" [{info.doc_type}]" if info.doc_type else ""
        plural = "s" if info.sections != 1 else ""
        lines.append(
            f"{'  ' * (len(folders) + 1)}{path.rsplit('/', 1)[-1]}  {info.title}{kind} · "
            f"{info.sections} section{plural}"
        )
    if memory.skipped:
        lines += ["", f"Skipped files ({len(memory.skipped)}):"]
        lines += [f"  {memory.source_path(s.rel_path)}: {s.reason}" for s in memory.skipped]
    return lines


COMMANDS = (query, tree)


def safe_report(report: str, memory: Memory) -> str:
    """The report with nothing in it that drives a terminal: each file's path that holds a control
    character shown escaped on one line (a newline in a file or folder name would start a line of its own,
    an ESC sequence retitle the terminal), then any other such character in the text escaped, line breaks
    kept.  Only paths that need it are looked for: a tree of plain names costs one pass over its names, at C
    speed (~0.5 ms for 10,000 files, where building each shown path cost ~1.3 ms)."""
    names = [*memory.state.catalog, *(s.rel_path for s in memory.skipped)]
    if memory.source_path("").isprintable() and "".join(names).isprintable():
        return terminal_text(report)
    for rel_path in names:
        shown = memory.source_path(rel_path)
        if not shown.isprintable():
            report = report.replace(shown, one_line(shown))
    return terminal_text(report)


def terminal_markdown(report: str) -> str:
    """The report with hard line breaks where markdown would run lines together on a terminal.

    Seed 000's report puts Reasoning and Sections searched on consecutive lines, and an excerpt
    quotes one statement per line: rendered as markdown, each would merge into one paragraph.
    """
    lines = report.split("\n")
    for i in range(len(lines) - 1):
        joins_next = lines[i].startswith("> ") and lines[i + 1].startswith("> ")
        if joins_next or lines[i + 1].startswith("**Sections searched:**"):
            lines[i] += "  "
    return "\n".join(lines)
