"""MCP client configuration for ``retriever mcp-config``: where each client keeps its servers, in what shape.

| client | file (scope) | servers under | entry |
|---|---|---|---|
| Claude Desktop | ``claude_desktop_config.json`` in the app's folder (user) | ``mcpServers`` | command, args, env |
| Cursor | ``~/.cursor/mcp.json`` (user) or ``.cursor/mcp.json`` (project) | ``mcpServers`` | command, args, env |
| VS Code | ``.vscode/mcp.json`` (project) or the profile's ``mcp.json`` (user) | ``servers`` | type stdio, … |
| Claude Code | ``.mcp.json`` (project); local and user scopes live in ``~/.claude.json``, which only
  ``claude mcp add`` edits | ``mcpServers`` | type stdio, … |

Clients start a server with a bare environment (HOME, PATH and little else), so the entry carries an
``env`` block with the ``RETRIEVER_*`` and ``OPENAI_*`` settings in use.  Secrets are included only when
set.  A project's file is meant to be checked in, so there a secret is written as a reference the client
fills in from its own environment when it starts the server: ``${NAME}`` in Claude Code's ``.mcp.json``,
``${env:NAME}`` in Cursor's and VS Code's ``mcp.json`` (each client's documented syntax); a client with no
such syntax gets no secret there at all.  ``update_config`` merges under a lock and keeps every other
server and key of the file, writing through a symlink to the file it points at.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import re
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from retriever.errors import InvalidArguments
from retriever.text.safe import cut, lone_surrogate, one_line, preview

DEFAULT_NAME = "company-memory"
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # what every client accepts (Claude Code is the strictest)
# Read by `retriever mcp` from the client's environment; RETRIEVER_ROOT is passed as --root instead, and
# the HTTP keys are secrets a stdio server never uses.
_LEFT_OUT = frozenset({"RETRIEVER_ROOT", "RETRIEVER_API_KEY", "RETRIEVER_API_KEYS"})
_SECRET_SUFFIXES = ("_KEY", "_KEYS", "_TOKEN", "_SECRET", "_PASSWORD")


class ClientConfigError(InvalidArguments):
    """A client's configuration file cannot be merged (not JSON, not an object), or a bad option."""


@dataclass(frozen=True)
class Client:
    """One MCP client: its name on the command line, its file format and scopes."""

    name: str
    title: str
    servers_key: str
    typed: bool  # entries carry "type": "stdio"
    scopes: tuple[str, ...]
    default_scope: str
    reload_hint: str
    # How the client's file names a variable of the client's own environment (NAME stands for the name),
    # or None when it has no such syntax: then a shared (project) file gets no secret at all.
    env_reference: str | None


CLIENTS: dict[str, Client] = {
    c.name: c
    for c in (
        Client(
            "claude-desktop", "Claude Desktop", "mcpServers", False, ("user",), "user",
            "Quit Claude Desktop fully and start it again to load the server.", None,
        ),
        Client(
            "claude-code", "Claude Code", "mcpServers", True, ("local", "user", "project"), "local",
            "Claude Code asks to approve a project's servers the next time it starts in this folder.", "${NAME}",
        ),
        Client(
            "cursor", "Cursor", "mcpServers", False, ("user", "project"), "user",
            "Cursor picks the server up under Settings > MCP (toggle it on if it is off).", "${env:NAME}",
        ),
        Client(
            "vscode", "VS Code", "servers", True, ("project", "user"), "project",
            "VS Code starts the server from the mcp.json code lens or the MCP: List Servers command.",
            "${env:NAME}",
        ),
    )
}  # fmt: skip


@dataclass(frozen=True)
class Entry:
    """The server as a client starts it: an absolute command, its arguments, and the settings to pass."""

    command: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    secrets: tuple[str, ...]  # names in ``env`` whose values are secrets

    def as_json(self, client: Client, references: bool = False) -> dict[str, Any]:
        """The entry in ``client``'s format.  With ``references`` (a project's file, which is shared) no
        secret's value is in it: each secret is the client's reference to its own environment variable,
        or is left out where the client has no reference syntax."""
        env: dict[str, str] = {}
        for key, value in self.env:
            if references and key in self.secrets:
                if client.env_reference is None:
                    continue  # no way to name it: a shared file must not hold its value
                value = client.env_reference.replace("NAME", key)
            env[key] = value
        entry: dict[str, Any] = {"type": "stdio"} if client.typed else {}
        entry.update(command=self.command, args=list(self.args))
        if env:
            entry["env"] = env
        return entry


def check_name(name: str) -> str:
    """``name`` when every client accepts it as a server name, else ``ClientConfigError``."""
    if not _NAME.fullmatch(name):
        raise ClientConfigError(
            f"--name {name[:80]!r} is not a server name every client accepts; use 1-64 letters, digits, '-' or '_'"
        )
    return name


def settings_env(environ: Mapping[str, str]) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """(the ``RETRIEVER_*``/``OPENAI_*`` variables set, sorted; the names among them holding secrets)."""
    env = tuple(
        sorted(
            (k, v)
            for k, v in environ.items()
            if k.startswith(("RETRIEVER_", "OPENAI_")) and k not in _LEFT_OUT and v.strip()
        )
    )
    from retriever.redaction import mask_url  # here, not at import: `retriever --help` loads no pydantic

    secrets = tuple(k for k, v in env if k.endswith(_SECRET_SUFFIXES) or mask_url(v) != v)
    return env, secrets


def check_scope(client: Client, scope: str | None, write: bool) -> str:
    """The scope to use: the one asked for (if the client has it), else the client's default."""
    if scope is None:
        return "project" if write and client.name == "claude-code" else client.default_scope
    if scope not in client.scopes:
        raise ClientConfigError(
            f"--scope {scope} is not a {client.title} scope; use one of: {', '.join(client.scopes)}"
        )
    return scope


def config_path(client: Client, scope: str, *, platform: str, environ: Mapping[str, str], cwd: Path) -> Path | None:
    """The file ``client`` reads for ``scope``; None where only the client's own command edits it."""
    home = Path(environ.get("HOME") or environ.get("USERPROFILE") or Path.home())
    if scope == "project":
        folder = {"cursor": ".cursor", "vscode": ".vscode"}.get(client.name)
        return cwd / folder / "mcp.json" if folder else cwd / ".mcp.json"
    if client.name == "cursor":
        return home / ".cursor" / "mcp.json"
    if client.name == "claude-desktop":
        return _app_folder(platform, environ, home, "Claude") / "claude_desktop_config.json"
    if client.name == "vscode":
        return _app_folder(platform, environ, home, "Code") / "User" / "mcp.json"
    return None  # Claude Code's local and user scopes: ~/.claude.json, edited by `claude mcp add`


def _app_folder(platform: str, environ: Mapping[str, str], home: Path, app: str) -> Path:
    """An app's settings folder: Application Support on macOS, %APPDATA% on Windows, XDG elsewhere."""
    if platform == "darwin":
        return home / "Library" / "Application Support" / app
    if platform == "win32":
        return Path(environ.get("APPDATA") or home / "AppData" / "Roaming") / app
    return Path(environ.get("XDG_CONFIG_HOME") or home / ".config") / app


def snippet(client: Client, name: str, entry: Entry, references: bool = False) -> dict[str, Any]:
    """What to paste into the client's file: the servers object holding this one server (secrets as
    references with ``references``, as ``Entry.as_json``)."""
    return {client.servers_key: {name: entry.as_json(client, references)}}


def claude_code_command(name: str, entry: Entry, scope: str) -> list[str]:
    """``claude mcp add`` for this server.  The name comes before ``--env``: that option takes several
    values and would swallow a name after it; ``--`` ends the options before the server's command."""
    env = entry.as_json(CLIENTS["claude-code"], references=scope == "project").get("env", {})
    command = ["claude", "mcp", "add", "--transport", "stdio", "--scope", scope, name]
    for key, value in env.items():
        command += ["--env", f"{key}={value}"]
    return [*command, "--", entry.command, *entry.args]


def merge_into(
    text: str | None, path: Path, client: Client, name: str, entry: dict[str, Any]
) -> tuple[dict[str, Any], str]:
    """The file's object with the server set, and what changed: "added", "replaced" or "unchanged".

    Raises ``ClientConfigError`` naming ``path`` when it is not a JSON object (JSON with comments
    included) or holds what could not be written back as it was (``_parse``): nothing is written then,
    and the message says to merge by hand.
    """
    document = _parse(text, path) if text and text.strip() else {}
    servers = document.get(client.servers_key, {}) if isinstance(document, dict) else None
    if not isinstance(servers, dict):
        raise ClientConfigError(
            f"{path} does not hold a JSON object with a {client.servers_key!r} object; it was left as it is: "
            "merge the printed block by hand (run without --write to print it)"
        )
    change = "unchanged" if servers.get(name) == entry else "replaced" if name in servers else "added"
    return {**document, client.servers_key: {**servers, name: entry}}, change


def _parse(text: str, path: Path) -> Any:
    """The JSON value in ``text``, which ``write_config`` can write back with every value as it was.

    Refused with ``ClientConfigError``: text that is not JSON, nested deeper than the parser goes, the
    non-JSON constants ``NaN``/``Infinity`` (Python reads them, JavaScript clients reject the file), floats
    that a double does not hold exactly as written (``1e400``, 30 significant digits: rewritten, they would
    change) and lone surrogate escapes (``"\\ud800"``: UTF-8 cannot write them).
    """
    try:
        document = json.loads(text, parse_constant=_no_constant, parse_float=_exact_float)
        at = lone_surrogate(json.dumps(document, ensure_ascii=False))
        if at is not None:
            raise ValueError("it holds a lone surrogate escape (\\ud800-\\udfff), which UTF-8 cannot write")
    except (ValueError, RecursionError) as exc:  # RecursionError: nested deeper than the parser goes
        raise ClientConfigError(
            f"{path} is not plain JSON (or holds numbers we cannot write back exactly): "
            f"{one_line(cut(str(exc), 120))}; it was left as it is: merge the printed block by hand "
            "(run without --write to print it)"
        ) from None
    return document


def _no_constant(name: str) -> float:
    """``json.loads``'s hook for ``NaN``, ``Infinity`` and ``-Infinity``: always refused (not JSON)."""
    raise ValueError(f"{name} is not a JSON number")


def _exact_float(text: str) -> float:
    """The float ``text`` stands for, when writing it back gives the same number; else ``ValueError``."""
    value = float(text)
    if not math.isfinite(value) or Decimal(text) != Decimal(repr(value)):
        raise ValueError(f"the number {preview(text, 40)} would not be written back exactly")
    return value


def _claim_backup(path: Path) -> Path:
    """A backup name beside ``path`` that no file has, created empty (exclusively: two writers never share it)."""
    stamp = f"{path.name}.bak-{time.strftime('%Y%m%d-%H%M%S')}"
    for number in itertools.count(1):
        candidate = path.with_name(stamp if number == 1 else f"{stamp}-{number}")
        try:
            os.close(os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            continue
        return candidate
    raise AssertionError("unreachable")  # itertools.count never ends


def update_config(
    path: Path, client: Client, name: str, entry: dict[str, Any], private: bool
) -> tuple[str, Path | None]:
    """Merge the server ``name`` into ``path``; (what changed, as ``merge_into`` says; the backup, if any).

    Read, merge and write happen under an exclusive lock (``_locked``), so writers running at once each
    see the others' servers and none is lost.  A symlink is written through (``write_config``).  With
    ``private`` (secrets inside) the file ends readable by its owner only, even when it was up to date.
    Raises ``ClientConfigError`` (nothing written) when the file is not a plain JSON object.
    """
    real = _target(path)
    with _locked(real):
        text = real.read_text(encoding="utf-8") if real.exists() else None
        document, change = merge_into(text, path, client, name, entry)
        if change != "unchanged":
            return change, write_config(path, document, private)
    if private and os.name != "nt" and not private_to_owner(real):
        os.chmod(real, 0o600)  # the secrets it already held were readable by others: no longer
    return change, None


def private_to_owner(path: Path) -> bool:
    """True when no one but the owner may read or write ``path`` (never on Windows: no such mode bits)."""
    return os.name != "nt" and stat.S_IMODE(os.stat(path).st_mode) & 0o077 == 0


def _target(path: Path) -> Path:
    """The file a write to ``path`` must replace: ``path``, or the file its symlinks lead to.  Replacing
    the link itself would turn e.g. a link into a dotfiles repository into a copy that no longer syncs."""
    return Path(os.path.realpath(path))


@contextlib.contextmanager
def _locked(real: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the folder holding the file while it is read, merged and replaced.

    Not on the file itself: it is replaced by a new one, and a lock on the old one guards nothing.  Not on
    a lock file beside it either: that would stay in the folder (a project's ``.vscode/``, say) for good.
    Nothing is locked where ``fcntl`` is missing (Windows) or the file system refuses a folder's lock (some
    network mounts): the write stays atomic, only writers racing there may lose a server.
    """
    try:
        import fcntl
    except ImportError:
        yield
        return
    real.parent.mkdir(parents=True, exist_ok=True)
    handle = None
    try:
        handle = os.open(real.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        fcntl.flock(handle, fcntl.LOCK_EX)
    except OSError:
        pass  # a folder we may write but not list, or a mount without locks: written unlocked, as above
    try:
        yield
    finally:
        if handle is not None:
            os.close(handle)  # closing releases the lock


def write_config(path: Path, document: dict[str, Any], private: bool) -> Path | None:
    """Write ``document`` to ``path`` atomically; returns the backup of the previous file, if there was one.

    When ``path`` is a symlink the file it points at is replaced and the link stays.  The backup sits
    beside ``path`` (``NAME.bak-YYYYMMDD-HHMMSS``, then ``-2``, ``-3``… within one second: a backup is
    never overwritten) with the same permissions.  A replaced file keeps its permissions, unless
    ``private`` (secrets inside): then, like a new file, it is readable by its owner only.  Callers that
    read the file first hold ``_locked`` (``update_config`` does).  A document that is not plain JSON in
    UTF-8 raises ``ClientConfigError`` (``_render``); when the write fails, the file is as it was and
    no backup is left.
    """
    real = _target(path)
    data = _render(path, document)  # before any backup: a refused document leaves nothing behind
    real.parent.mkdir(parents=True, exist_ok=True)
    backup = _claim_backup(path) if real.exists() else None
    try:
        if backup is not None:
            shutil.copy2(real, backup)
        _replace(real, data, backup, private)
    except BaseException:
        if backup is not None:
            backup.unlink(missing_ok=True)  # the file was not changed: nothing to keep a copy of
        raise
    return backup


def _render(path: Path, document: dict[str, Any]) -> bytes:
    """``document`` as the file's UTF-8 bytes: strict JSON (no ``NaN``/``Infinity``), every string encodable.

    Raises ``ClientConfigError`` naming ``path`` otherwise (e.g. a setting whose value is not UTF-8).
    """
    try:
        return (json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:  # the text around it is not quoted: it may be a secret (OPENAI_API_KEY, say)
        reason = f"a value ({_holding_bad_text(document)}) is not valid UTF-8"
    except ValueError as exc:  # allow_nan=False: a float JSON has no number for
        reason = str(exc)
    raise ClientConfigError(
        f"cannot write {path}: {reason}; nothing was changed: check the RETRIEVER_* and OPENAI_* variables set "
        "(their values go into the file), or merge the printed block by hand (run without --write to print it)"
    )


def _holding_bad_text(document: Any, path: str = "") -> str:
    """Where in ``document`` a string that UTF-8 cannot write sits ("mcpServers.company-memory.env.OPENAI_API_KEY"),
    named by its keys (cut), never by its value."""
    if isinstance(document, dict):
        for key, value in document.items():
            if lone_surrogate(str(key)) is not None:
                return f"a key under {preview(path, 160)}" if path else "a top-level key"
            found = _holding_bad_text(value, f"{path}.{key}" if path else str(key))
            if found:
                return found
    elif isinstance(document, list):
        for i, value in enumerate(document):
            found = _holding_bad_text(value, f"{path}[{i}]")
            if found:
                return found
    elif isinstance(document, str) and lone_surrogate(document) is not None:
        return preview(path, 160) if path else "the document"
    return ""


def _replace(real: Path, data: bytes, backup: Path | None, private: bool) -> None:
    """Replace ``real`` by a file holding ``data`` (written beside it, then renamed: atomic), with the
    permissions of ``backup`` (the previous file), or the owner's only when ``private``."""
    handle, temporary = tempfile.mkstemp(prefix=f".{real.name}.", dir=real.parent)  # same folder: atomic
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        if backup is not None:
            shutil.copymode(backup, temporary)
        if private:
            os.chmod(temporary, 0o600)
        os.replace(temporary, real)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
