"""The ``retriever`` command line: a thin click adapter over the core.

    retriever query PROMPT... [--root DIR] [--json] [--top-k N] [--llm-model M | --no-llm] [--at REV]   # "-": stdin
    retriever tree [--root DIR] [--json]
    retriever index [--root DIR] [--json]          # build or refresh the index now, with progress
    retriever mcp [--root DIR]                      # MCP over stdio
    retriever serve [--host H] [--port N] [--insecure] [--root DIR]   # MCP over HTTP, /memories/retrieve, /healthz
    retriever requests [--limit N] [--session-id S] [--since T] [--json]
    retriever check [--root DIR] [--format text|json|github]
    retriever init DIR [--source REQUIREMENT]
    retriever mcp-config claude-desktop|claude-code|cursor|vscode [--root DIR] [--name N] [--scope S] [--write]
    retriever status [--root DIR] [--json]          # root, files, index, cache, store, LLM, where settings came from
    retriever cache list [--json] | cache prune [--missing] [--older-than 30d] [--all] [--dry-run]

Settings come from flags, the environment, ``--config FILE`` (before or after the command),
the tree's ``.retriever.toml`` and the user's config file, in that order (``retriever.config_files``).

Exit codes: 0 success; 1 retrieval failed (timeout, unreachable store); 2 bad usage or input
(invalid arguments, missing root, a root without markdown, invalid settings, unknown git revision).
Errors go to stderr; with ``--json`` the seed's error object is printed on stdout as well.
Heavy modules are imported inside the commands so that ``--help`` and small trees answer fast.

This module is the group only: the commands live in ``cli_query``, ``cli_index``, ``cli_serve``,
``cli_check``, ``cli_clients`` and ``cli_ops``, and share ``cli_common``.  Shell completion is click's:
``eval "$(_RETRIEVER_COMPLETE=bash_source retriever)"`` (``zsh_source``, ``fish_source``).
"""

from __future__ import annotations

import importlib

import click

from retriever.adapters import logs
from retriever.adapters.cli_common import config_option

# Command name → the module defining it.  A command's module is imported only when that command runs
# (or when --help and completion list them all): `retriever query` need not load the server, the
# linter or the client set-up code.  tests/adapters/test_cli.py checks this table against COMMANDS.
COMMAND_MODULES = {
    "query": "cli_query",
    "tree": "cli_query",
    "index": "cli_index",
    "mcp": "cli_serve",
    "serve": "cli_serve",
    "requests": "cli_serve",
    "check": "cli_check",
    "init": "cli_check",
    "mcp-config": "cli_clients",
    "status": "cli_ops",
    "cache": "cli_ops",
}


class LazyGroup(click.Group):
    """A group whose commands are imported from ``COMMAND_MODULES`` when first asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMAND_MODULES, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMAND_MODULES.get(cmd_name)
        if cmd_name in self.commands or module is None:
            return super().get_command(ctx, cmd_name)
        for command in importlib.import_module(f"retriever.adapters.{module}").COMMANDS:
            self.add_command(command)
        return self.commands.get(cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.NoSuchCommand as exc:  # click suggests among loaded commands only: offer all
            raise click.exceptions.NoSuchCommand(
                exc.command_name, possibilities=self.list_commands(ctx), ctx=ctx
            ) from None


def _show_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from retriever.adapters import build_info  # only when asked: it may run git

    click.echo(f"retriever, version {build_info.describe()}")
    ctx.exit()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version", is_flag=True, expose_value=False, is_eager=True, callback=_show_version,
    help="Show the version (and the commit, where known) and exit.",
)
@config_option
def cli() -> None:
    """Company memory retriever: ranked, cited facts from a markdown memory tree."""
    logs.to_stderr()  # the library only holds a NullHandler: the command says where its warnings go


def main() -> None:
    # One name however it is started (`python -m retriever` too): usage lines and _RETRIEVER_COMPLETE.
    cli(prog_name="retriever")
