"""The ``retriever`` command line: a thin click adapter over the core.

    retriever query "Who owns billing?" [--root DIR] [--json] [--top-k N] [--llm-model M | --no-llm] [--at REV]
    retriever tree [--root DIR] [--json]
    retriever mcp [--root DIR]                      # MCP over stdio
    retriever serve [--host H] [--port N] [--insecure] [--root DIR]   # MCP over HTTP, /memories/retrieve, /healthz
    retriever requests [--limit N] [--session-id S] [--since T] [--json]
    retriever check / retriever init                # in adapters/cli_check.py

Exit codes: 0 success; 1 retrieval failed (timeout, unreachable store); 2 bad usage or input
(invalid arguments, missing root, invalid settings, unknown git revision).  Errors go to stderr; with ``--json``
the seed's error object is printed on stdout as well.  Heavy modules are imported inside
the commands so that ``--help`` and small trees answer fast.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

if TYPE_CHECKING:
    from retriever.errors import RetrieverError
    from retriever.memory import Memory

EXIT_FAILURE, EXIT_USAGE = 1, 2
_PROGRESS_AFTER_SECONDS = 0.5


def _exit_code(error: RetrieverError) -> int:
    from retriever.errors import ConfigError, InvalidArguments, MemoryNotFound
    from retriever.gitinfo import GitError

    usage = InvalidArguments | MemoryNotFound | ConfigError | GitError
    return EXIT_USAGE if isinstance(error, usage) else EXIT_FAILURE


def _fail(error: RetrieverError, as_json: bool) -> NoReturn:
    """Report a core error the way scripts and people both expect, then exit."""
    from retriever.config import mask_url
    from retriever.report import error_content

    # Messages may name a store's URL: its password never reaches the terminal or a script's log.
    if as_json:
        click.echo(mask_url(json.dumps(error_content(error), ensure_ascii=False, indent=2)))
    click.echo(f"Error ({error.code}): {mask_url(error.message)}", err=True)
    sys.exit(_exit_code(error))


class _ProgressBar:
    """A progress bar on stderr, shown only when indexing is slow and stderr is a terminal."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            if time.monotonic() - self.started < _PROGRESS_AFTER_SECONDS or not sys.stderr.isatty():
                return
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("Indexing memory", total=total)
        self.bar.update(self.task, completed=done, total=total)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _root(root: Path | None) -> Path:
    from retriever.retriever import default_root

    return root if root is not None else default_root()


def _open_memory(root: Path, settings: Any, as_json: bool) -> Memory:
    from retriever.errors import RetrieverError
    from retriever.memory import Memory

    progress = _ProgressBar()
    try:
        return Memory.open(root, settings, progress=progress)
    except RetrieverError as exc:
        _fail(exc, as_json)
        raise  # unreachable: _fail exits
    finally:
        progress.close()


root_option = click.option(
    "--root",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Memory tree folder [default: $RETRIEVER_ROOT, else ./company_context].",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="company-memory-retriever", prog_name="retriever")
def cli() -> None:
    """Company memory retriever: ranked, cited facts from a markdown memory tree."""


@cli.command()
@click.argument("prompt")
@root_option
@click.option("--json", "as_json", is_flag=True, help="Print structuredContent as JSON.")
@click.option("--top-k", type=click.IntRange(1, 100), default=None, help="Facts to return [default: 12].")
@click.option("--llm-model", default=None, help="Guide retrieval with this model [default: $RETRIEVER_LLM_MODEL].")
@click.option("--no-llm", is_flag=True, help="Answer offline even when a model is configured.")
@click.option("--at", default=None, metavar="REV", help="Answer from the tree as it was at a commit, tag or date.")
def query(
    prompt: str,
    root: Path | None,
    as_json: bool,
    top_k: int | None,
    llm_model: str | None,
    no_llm: bool,
    at: str | None,
) -> None:
    """Retrieve what the memory knows about PROMPT."""
    from retriever.config import Settings
    from retriever.errors import RetrieverError
    from retriever.retriever import Retriever

    try:
        settings = Settings.from_env(top_k=top_k, llm_model=llm_model)
        if no_llm:
            settings = settings.model_copy(update={"llm_model": None})
        retriever = Retriever(_root(root), settings, at=at)
        if at is None:  # open it here, with a progress bar; a past revision is read from git objects
            retriever._memory = _open_memory(retriever.root, settings, as_json)
        result = retriever.retrieve(prompt)
    except RetrieverError as exc:
        _fail(exc, as_json)
        return
    if as_json:
        click.echo(json.dumps(result.structured, ensure_ascii=False, indent=2))
    elif sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
        from rich.console import Console
        from rich.markdown import Markdown

        # Seed 000's report puts Reasoning and Sections searched on consecutive lines; keep them apart.
        Console().print(Markdown(result.text.replace("\n**Sections searched:**", "  \n**Sections searched:**")))
    else:
        click.echo(result.text)


@cli.command()
@root_option
@click.option("--json", "as_json", is_flag=True, help="Print the outline as JSON.")
def tree(root: Path | None, as_json: bool) -> None:
    """Print the memory tree's outline: documents, section counts, skipped files."""
    from retriever.config import Settings
    from retriever.errors import RetrieverError

    try:
        memory = _open_memory(_root(root), Settings.from_env(), as_json)
    except RetrieverError as exc:
        _fail(exc, as_json)
        return
    if as_json:
        click.echo(json.dumps(_outline(memory), ensure_ascii=False, indent=2))
        return
    for line in _outline_lines(memory):
        click.echo(line)


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


def _settings() -> Any:
    """Settings from the environment; invalid ones stop the command (exit 2)."""
    from retriever.config import Settings
    from retriever.errors import RetrieverError

    try:
        return Settings.from_env()
    except RetrieverError as exc:
        _fail(exc, as_json=False)


def _service(root: Path | None, settings: Any = None) -> Any:
    """The retriever and the store a server needs; a store that cannot be opened stops start-up."""
    from retriever.errors import RetrieverError
    from retriever.retriever import Retriever
    from retriever.service import MemoryService
    from retriever.store import open_store

    settings = settings if settings is not None else _settings()
    try:
        store = open_store(settings)
    except RetrieverError as exc:
        _fail(exc, as_json=False)
    return MemoryService(Retriever(_root(root), settings), store)


@cli.command()
@root_option
def mcp(root: Path | None) -> None:
    """Serve the retrieve_memory tool over stdio (for Claude Desktop, Claude Code, Cursor)."""
    from retriever.adapters.mcp_stdio import run_stdio

    service = _service(root)
    try:
        run_stdio(service)
    finally:
        service.close()


@cli.command()
@root_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="0 picks a free port.")
@click.option(
    "--insecure", is_flag=True, help="Serve a non-loopback --host without an API key (anyone who reaches it reads all)."
)
def serve(root: Path | None, host: str, port: int, insecure: bool) -> None:
    """Serve MCP over HTTP at /v1/mcp/memory, with /memories/retrieve, /healthz and /v1/dev/mcp-requests."""
    from retriever.adapters import serve_support as support
    from retriever.adapters.http import create_app
    from retriever.adapters.http_guard import HttpPolicy
    from retriever.adapters.http_server import make_server
    from retriever.errors import RetrieverError

    settings = _settings()
    try:
        policy = HttpPolicy.from_settings(settings, support.bound_host_names(host))
    except RetrieverError as exc:
        _fail(exc, as_json=False)
    if (refusal := support.exposure_refusal(host, policy.keys.required, insecure)) is not None:
        click.echo(refusal, err=True)
        sys.exit(EXIT_USAGE)
    sock = support.listening_socket(host, port)
    try:
        service = _service(root, settings)
    except BaseException:  # the store could not be opened: _fail exits; release the port first
        sock.close()
        raise
    url = support.mcp_url(host, sock.getsockname()[1])

    def announce() -> None:  # once the socket accepts connections: a client may connect at once
        click.echo(f"Serving MCP at {url} (memory: {service.retriever.root})", err=True)

    support.configure_logging()
    server = make_server(create_app(service, policy), settings, on_ready=announce)
    try:
        server.run(sockets=[sock])
    finally:
        service.close()


@cli.command()
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True)
@click.option("--session-id", default=None, help="Only this session's requests.")
@click.option("--since", default=None, help="Unix seconds or ISO 8601 time.")
@click.option("--json", "as_json", is_flag=True, help="Full records (prompt and response) as JSON.")
def requests(limit: int, session_id: str | None, since: str | None, as_json: bool) -> None:
    """Print the request log: every counted tool call, newest first."""
    from retriever.config import Settings
    from retriever.errors import RetrieverError
    from retriever.store import open_store, parse_since

    try:
        since_value = parse_since(since) if since else None
    except ValueError:
        raise click.BadParameter(
            f"{since!r} is neither Unix seconds nor an ISO 8601 time", param_hint="--since"
        ) from None
    try:
        store = open_store(Settings.from_env())
        records = [r.to_dict() for r in store.requests(limit, session_id, since_value)]
        store.close()
    except RetrieverError as exc:
        _fail(exc, as_json)
        return
    if as_json:
        click.echo(json.dumps(records, ensure_ascii=False, indent=2))
        return
    for r in records:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r["received_at"]))
        prompt = " ".join(str(r.get("prompt") or "").split())[:80]
        click.echo(
            f"{when}  {r['request_id']}  {r['status']:5}  {r['duration_ms']:8.1f} ms  "
            f"session={r['session_id'] or '-'}  {prompt}"
        )


def _register_more() -> None:
    """Commands that live in their own adapter module (``retriever check``, ``retriever init``)."""
    from retriever.adapters import cli_check

    for command in cli_check.COMMANDS:
        cli.add_command(command)


_register_more()


def main() -> None:
    cli()
