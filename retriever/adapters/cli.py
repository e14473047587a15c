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

import click

from retriever.adapters import cli_check, cli_clients, cli_index, cli_ops, cli_query, cli_serve
from retriever.adapters.cli_common import config_option


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="company-memory-retriever", prog_name="retriever")
@config_option
def cli() -> None:
    """Company memory retriever: ranked, cited facts from a markdown memory tree."""


for _module in (cli_query, cli_index, cli_serve, cli_check, cli_clients, cli_ops):
    for _command in _module.COMMANDS:
        cli.add_command(_command)


def main() -> None:
    # One name however it is started (`python -m retriever` too): usage lines and _RETRIEVER_COMPLETE.
    cli(prog_name="retriever")
