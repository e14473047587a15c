"""``retriever mcp``, ``retriever serve`` and ``retriever requests``: the servers and their request log.

    retriever mcp [--root DIR]                                      # MCP over stdio
    retriever serve [--host H] [--port N] [--insecure] [--root DIR]   # MCP over HTTP, /memories/retrieve, /healthz
    retriever requests [--limit N] [--session-id S] [--since T] [--json] [--root DIR]   # that memory's log
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click

from retriever.adapters.cli_common import (
    EXIT_USAGE,
    JsonCommand,
    config_option,
    fail,
    load_settings,
    open_service,
    root_option,
    warn_if_not_ready,
)
from retriever.text.safe import clean_text, cut, json_text, one_line, preview


@click.command()
@root_option
@config_option
def mcp(root: Path | None) -> None:
    """Serve the retrieve_memory tool over stdio (for Claude Desktop, Claude Code, Cursor)."""
    from retriever.adapters.mcp_stdio import run_stdio

    loaded = load_settings(root, server=True)
    warn_if_not_ready(loaded.root)  # before the watcher starts: this line comes first
    if sys.stdin.isatty():  # run by hand: a blank terminal would look hung
        click.echo(
            "retriever mcp: waiting for JSON-RPC on stdin (an MCP client starts this command; see "
            "`retriever mcp-config`). Ctrl-D ends it.",
            err=True,
        )
    service = open_service(loaded)
    try:
        run_stdio(service)
    finally:
        service.close()


@click.command()
@root_option
@click.option(
    "--host",
    default=None,
    help="Interface to bind [default: $RETRIEVER_HOST, else 127.0.0.1]; clients must then name it by a loopback "
    "name or one in $RETRIEVER_ALLOWED_HOSTS (else 421).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=None,
    help="0 picks a free port [default: $RETRIEVER_PORT, else 8765].",
)
@click.option(
    "--insecure", is_flag=True, help="Serve a non-loopback --host without an API key (anyone who reaches it reads all)."
)
@config_option
def serve(root: Path | None, host: str | None, port: int | None, insecure: bool) -> None:
    """Serve MCP over HTTP at /v1/mcp/memory, with /memories/retrieve, /healthz and /v1/dev/mcp-requests."""
    from retriever.adapters import serve_support as support
    from retriever.adapters.http import create_app
    from retriever.adapters.http_guard import HttpPolicy
    from retriever.adapters.http_server import make_server
    from retriever.errors import RetrieverError

    loaded = load_settings(root, server=True, host=host, port=port)
    settings = loaded.settings
    host, port = settings.host.strip("[]"), settings.port  # "[::1]", as a URL writes it: the address is "::1"
    try:
        policy = HttpPolicy.from_settings(settings, support.bound_host_names(host))
    except RetrieverError as exc:
        fail(exc, as_json=False)
    if (refusal := support.exposure_refusal(host, policy.keys.required, insecure)) is not None:
        click.echo(refusal, err=True)
        sys.exit(EXIT_USAGE)
    if notice := support.all_interfaces_notice(host, settings.allowed_hosts):
        click.echo(notice, err=True)
    sock = support.listening_socket(host, port)
    warn_if_not_ready(loaded.root)  # before the watcher starts: this line comes first
    try:
        service = open_service(loaded)
    except BaseException:  # the store could not be opened: _fail exits; release the port first
        sock.close()
        raise
    url = support.mcp_url(host, sock.getsockname()[1])

    def announce() -> None:  # once the socket accepts connections: a client may connect at once
        click.echo(f"Serving MCP at {url} (memory: {service.retriever.root})", err=True)

    support.configure_logging(settings.log_level)
    app = create_app(service, policy)
    support.reload_keys_on_hangup(app)
    server = make_server(app, settings, on_ready=announce)
    try:
        server.run(sockets=[sock])
    finally:
        service.close()


@click.command(cls=JsonCommand)
@click.option(
    "--limit", type=click.IntRange(1, 1000), default=20, show_default=True, help="At most this many, newest first."
)
@click.option("--session-id", default=None, help="Only this session's requests.")
@click.option("--since", default=None, help="Unix seconds or ISO 8601 time.")
@click.option("--json", "as_json", is_flag=True, help="Full records (prompt and response) as JSON.")
@root_option
@config_option
def requests(limit: int, session_id: str | None, since: str | None, as_json: bool, root: Path | None) -> None:
    """Print the request log of the memory at --root: every counted tool call, newest first."""
    from retriever.errors import RetrieverError
    from retriever.service.service import memory_scope
    from retriever.service.stores import open_store, store_path

    since_value = _since(session_id, since)
    loaded = load_settings(root, as_json=as_json)
    path = store_path(loaded.settings)
    if path is not None and not path.exists():  # nothing logged yet: said, and the store left uncreated (as ``status``)
        place = ("sqlite", f"{path}: it is not created yet")
        click.echo("[]" if as_json else _nothing_logged(place, session_id, since, loaded.root), err=not as_json)
        return
    try:
        store = open_store(loaded.settings)
        try:
            scope = memory_scope(loaded.root, loaded.settings)  # the log is kept per memory
            records = [r.to_dict() for r in store.requests(limit, session_id, since_value, scope=scope)]
        finally:
            store.close()
    except RetrieverError as exc:
        fail(exc, as_json)
        return
    if as_json:
        click.echo(json_text(records))
    elif not records:
        shown = (store.kind, getattr(store, "shown_url", None) or getattr(store, "path", None) or "?")
        click.echo(_nothing_logged(shown, session_id, since, loaded.root), err=True)
    for r in [] if as_json else records:
        click.echo(one_line(_line(r)))  # a client's session id may hold control characters


def _since(session_id: str | None, since: str | None) -> float | None:
    """``--since`` as Unix seconds (None: not given); a bad one, or an empty ``--session-id``, a usage error."""
    from retriever.service.stores.base import parse_since

    if session_id is not None and not session_id.strip():
        message = "is empty; name a session, or leave the option out for every session"
        raise click.BadParameter(message, param_hint="--session-id")
    try:
        return parse_since(since) if since else None
    except ValueError:
        message = f"{preview(str(since))} is neither Unix seconds nor an ISO 8601 time"
        raise click.BadParameter(message, param_hint="--since") from None


def _line(r: dict[str, Any]) -> str:
    """One logged call as a line: when, id, status, time, tool, session, the prompt's start."""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r["received_at"]))
    prompt = " ".join(str(r.get("prompt") or "").split())[:80]
    return (
        f"{when}  {r['request_id']}  {r['status']:5}  {r['duration_ms']:8.1f} ms  "
        f"{cut(str(r['tool']), 40)}  session={r['session_id'] or '-'}  {prompt}"
    )


def _nothing_logged(store: tuple[str, Any], session_id: str | None, since: str | None, root: Path) -> str:
    """The line an empty answer gets: which store (its kind and where) and memory were read, and why they may hold
    nothing."""
    kind, place = store
    where = f"the {kind} store ({one_line(str(place))})"
    memory = f"the memory at {one_line(str(root))}" + ("" if root.is_dir() else ", which is no folder")
    filters = [  # as typed, but bounded and on one line: a session id may be huge or hold ESC sequences
        f"{name} {one_line(cut(clean_text(value), 80))}"
        for name, value in (("--session-id", session_id), ("--since", since))
        if value
    ]
    if filters:
        return f"No requests match {' and '.join(filters)} in {where} for {memory}."
    if not root.is_dir():
        return f"No requests logged in {where} for {memory}: pass --root with the memory's folder."
    return (
        f"No requests logged yet in {where}. `retriever mcp` and `retriever serve` log every tool call; "
        "a server with another RETRIEVER_STATE_DIR or RETRIEVER_REDIS_URL logs elsewhere, and each memory "
        f"has a log of its own (this is {memory}; pass --root for another)."
    )


COMMANDS = (mcp, serve, requests)
