"""``retriever mcp-config``: set up an MCP client to start ``retriever mcp`` with this memory and settings.

    retriever mcp-config claude-desktop|claude-code|cursor|vscode [--root DIR] [--name N] [--scope S] [--write]

Without ``--write`` the configuration goes to stdout (for Claude Code: the ``claude mcp add`` command)
and stderr says where it belongs.  With ``--write`` it is merged into the client's file: other servers
and keys are kept, the previous file is backed up beside it, and nothing is written when the file is
not plain JSON (exit 2).  Claude Code's ``--write`` writes the project's ``.mcp.json``; its local and
user scopes live in ``~/.claude.json``, which only ``claude mcp add`` should edit.
For a project scope (a file meant to be checked in), printed or written, secrets are references to the
client's own environment, never values; stderr names the variables to set there.  A user-scope file
holding secrets is made readable by its owner only.  The file formats and locations are in ``client_config``.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import click

from retriever.adapters import client_config as clients
from retriever.adapters.cli_common import config_option, fail, load_settings, root_option
from retriever.errors import RetrieverError
from retriever.text.safe import json_text


@click.command("mcp-config")
@click.argument("client_name", metavar="CLIENT", type=click.Choice(list(clients.CLIENTS)))
@root_option
@click.option("--name", default=clients.DEFAULT_NAME, show_default=True, help="The server's name in the client.")
@click.option(
    "--scope",
    type=click.Choice(["user", "project", "local"]),
    default=None,
    help="user: every project; project: this folder's file; local (Claude Code): you, in this folder "
    "[default: claude-desktop and cursor user, vscode project, claude-code local, or project with --write].",
)
@click.option("--write", is_flag=True, help="Merge into the client's file (keeps other servers, backs it up).")
@config_option
def mcp_config(client_name: str, root: Path | None, name: str, scope: str | None, write: bool) -> None:
    """Print the configuration that starts `retriever mcp` in CLIENT, or merge it in with --write.

    CLIENT is claude-desktop, claude-code, cursor or vscode. The entry holds the absolute command,
    the absolute --root and an env block with the RETRIEVER_* and OPENAI_* settings set here:
    clients pass a server almost none of your shell's variables.
    """
    loaded = load_settings(root, server=True)  # a setting the server would refuse stops here, not in the client's log
    client = clients.CLIENTS[client_name]
    try:
        name, scope = clients.check_name(name), clients.check_scope(client, scope, write)
        path = clients.config_path(client, scope, platform=sys.platform, environ=os.environ, cwd=Path.cwd())
        if write and path is None:
            raise clients.ClientConfigError(
                f"Claude Code keeps {scope}-scope servers in ~/.claude.json, which `claude mcp add` edits: "
                "run the command printed without --write, or pass --scope project to write ./.mcp.json"
            )
    except RetrieverError as exc:
        fail(exc, as_json=False)
    entry = _entry(loaded.root, loaded.files.get("--config"))
    references = scope == "project"  # a project's file is shared (checked in): no secret's value goes in it
    if write and path is not None:
        _write(client, name, entry, path, references)
        return
    _note_secrets(entry, client, references, None)
    if path is None or client.name == "claude-code":
        click.echo(shlex.join(clients.claude_code_command(name, entry, scope)))
        click.echo("Run this command to add the server (or pass --write for the project's .mcp.json).", err=True)
    else:
        click.echo(json_text(clients.snippet(client, name, entry, references)))
        click.echo(f"Merge this into {path} (or run again with --write to merge it there).", err=True)


def _entry(root: Path, config: Path | None) -> clients.Entry:
    """The server entry: absolute command, root and ``--config`` file, and the settings in use; warns
    about a bad root."""
    from retriever.adapters.cli_setup import retriever_command, root_problem

    absolute = Path(os.path.abspath(root))
    problem = root_problem(absolute)
    if problem is not None:
        click.echo(
            f"Warning ({problem.code}): {problem.message}. The client's calls will answer isError "
            f"({problem.code}) until that is fixed.",
            err=True,
        )
    command = retriever_command()
    env, secrets = clients.settings_env(os.environ)
    named = ("--config", os.path.abspath(config)) if config is not None else ()
    return clients.Entry(command[0], (*command[1:], "mcp", "--root", str(absolute), *named), env, secrets)


def _note_secrets(entry: clients.Entry, client: clients.Client, references: bool, written: Path | None) -> None:
    """Say which settings are secrets and where their values are: on screen, in ``written`` (and who can
    read it), or nowhere (references in a project's file, then which variables to set and how)."""
    if not entry.secrets:
        return
    names = ", ".join(entry.secrets)
    if references:
        _note_references(client, names, written)
    elif written is None:
        click.echo(
            f"Note: this configuration holds secrets from your environment ({names}); keep it private.", err=True
        )
    elif clients.private_to_owner(written):
        click.echo(f"Note: {written} holds secrets from your environment ({names}); only you can read it.", err=True)
    else:
        click.echo(
            f"Note: {written} holds secrets from your environment ({names}) and other users may be able to read "
            "it: restrict its permissions to yourself.",
            err=True,
        )


def _note_references(client: clients.Client, names: str, written: Path | None) -> None:
    """The note for a project's (shared) file: it holds no secret's value, so say where the values must be."""
    where = str(written) if written is not None else "this configuration"
    user_scope = "or use --scope user, whose file is private to you"
    if client.env_reference is None:
        click.echo(
            f"Note: secrets ({names}) are left out of {where}: it is a project's file, meant to be shared, and "
            f"{client.title} has no way to refer to them; the server starts without them ({user_scope}).",
            err=True,
        )
        return
    click.echo(
        f"Note: secrets ({names}) are written as {client.env_reference}, which {client.title} fills in from its "
        f"own environment when it starts the server, so {where} holds none of their values. Set {names} in the "
        f"environment {client.title} starts from (e.g. exported in your shell profile, with {client.title} "
        f"started from a new shell), {user_scope}.",
        err=True,
    )


def _write(client: clients.Client, name: str, entry: clients.Entry, path: Path, references: bool) -> None:
    """Merge the entry into ``path`` and say what changed; a file that is not JSON is left alone (exit 2)."""
    private = bool(entry.secrets) and not references  # secret values in it: readable by its owner only
    try:
        change, backup = clients.update_config(path, client, name, entry.as_json(client, references), private)
    except RetrieverError as exc:
        fail(exc, as_json=False)
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8"
        fail(clients.ClientConfigError(f"cannot update {path}: {reason}; nothing was changed"), as_json=False)
    _note_secrets(entry, client, references, path)
    if change == "unchanged":
        click.echo(f"Server {name!r} in {path} is already up to date.")
        return
    click.echo(f"{change.capitalize()} server {name!r} in {path}.")
    if backup is not None:
        click.echo(f"The previous file is kept as {backup}.")
    click.echo(client.reload_hint)


COMMANDS = (mcp_config,)
