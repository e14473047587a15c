"""What every ``retriever`` command shares: exit codes, error reporting, the root, progress, services.

Commands live in ``cli_query``, ``cli_serve`` and ``cli_check``; ``cli`` gathers them into the
group.  Nothing here imports a command module, so the imports run one way.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from retriever.text.safe import json_text

if TYPE_CHECKING:
    from retriever.config_files import Loaded
    from retriever.errors import RetrieverError
    from retriever.memory.memory import Memory

EXIT_FAILURE, EXIT_USAGE = 1, 2
_CONFIG = "retriever.config"  # ctx.meta key: the --config file, shared by the group and its commands


def exit_code(error: RetrieverError) -> int:
    from retriever.errors import ConfigError, InvalidArguments, MemoryEmpty, MemoryNotFound
    from retriever.memory.gitinfo import GitError

    usage = InvalidArguments | MemoryNotFound | MemoryEmpty | ConfigError | GitError
    return EXIT_USAGE if isinstance(error, usage) else EXIT_FAILURE


def fail(error: RetrieverError, as_json: bool) -> NoReturn:
    """Report a core error the way scripts and people both expect, then exit."""
    from retriever.pipeline.report import error_content
    from retriever.redaction import mask_url

    # Messages may name a store's URL: its password never reaches the terminal or a script's log.
    if as_json:
        click.echo(mask_url(json_text(error_content(error))))
    click.echo(f"Error ({error.code}): {mask_url(error.message)}", err=True)
    sys.exit(exit_code(error))


class JsonCommand(click.Command):
    """A command with ``--json``: a mistake click finds in its arguments (a missing prompt, ``--top-k 0``, an unknown
    option) prints the seed's error object on stdout too, as the same mistake found later does (``fail``), so a script
    parsing stdout reads why; click's usage text still goes to stderr, and the exit code is 2."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        asked_json = "--json" in args[: args.index("--")] if "--" in args else "--json" in args
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            if asked_json:
                from retriever.errors import InvalidArguments
                from retriever.pipeline.report import error_content
                from retriever.text.safe import cut

                error = error_content(InvalidArguments(cut(exc.format_message(), 500)))  # a value may be 100 KB
                click.echo(json_text(error))
            raise


def open_memory(root: Path, settings: Any, as_json: bool) -> Memory:
    opened = load_memory(root, settings)
    if isinstance(opened, BaseException):
        fail(opened, as_json)
    return opened


def load_memory(root: Path, settings: Any) -> Memory | RetrieverError:
    """The memory at ``root`` (with progress on stderr when loading is slow), or the error that stopped it."""
    from retriever.adapters.cli_progress import Reporter
    from retriever.errors import RetrieverError
    from retriever.memory.memory import Memory

    progress = Reporter()
    try:
        return Memory.open(root, settings, progress=progress)
    except RetrieverError as exc:
        return exc
    finally:
        progress.close()


# Any path: one that is no folder is the seed's ``memory_not_found``, as from RETRIEVER_ROOT (click's own
# usage error would skip the JSON error object, and keep a server from starting to say so).
root_option = click.option(
    "--root",
    type=click.Path(path_type=Path),
    default=None,
    help="Memory tree folder [default: $RETRIEVER_ROOT, else root in a config file, else ./company_context].",
)


def _remember_config(ctx: click.Context, _param: click.Parameter, value: Path | None) -> None:
    if value is not None:
        ctx.meta[_CONFIG] = value  # meta is shared down the context chain: the group's option reaches commands


config_option = click.option(
    "--config",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    expose_value=False,
    callback=_remember_config,
    help="A settings file (TOML) above the tree's .retriever.toml and your user config [default: $RETRIEVER_CONFIG].",
)


def load_settings(root: Path | None = None, as_json: bool = False, *, server: bool = False, **flags: Any) -> Loaded:
    """Settings and root from flags, environment and config files (``config_files``); invalid ones exit 2. For a
    ``server``, a memory tree's ``.retriever.toml`` that cannot be used is left out with a warning instead."""
    from retriever.config_files import load
    from retriever.errors import RetrieverError

    config = click.get_current_context().meta.get(_CONFIG)
    try:
        loaded = load({"root": root, **flags}, config_file=config, lenient_tree=server)
    except RetrieverError as exc:
        fail(exc, as_json)
    for warning in loaded.warnings:
        click.echo(f"Warning: {warning}", err=True)
    return loaded


def open_service(loaded: Loaded) -> Any:
    """The retriever and the store a server needs; a store that cannot be opened, an LLM client that cannot be
    built (an endpoint that is no URL: ``llm.transport``), or users' trees and served trees that hold one another
    (``compat.users.check_apart``) stop start-up naming why."""
    from retriever.errors import RetrieverError
    from retriever.retriever import Retriever
    from retriever.service.service import MemoryService
    from retriever.service.stores import open_store

    try:
        store = open_store(loaded.settings)
    except RetrieverError as exc:
        fail(exc, as_json=False)
    from retriever.adapters.cli_progress import Reporter

    try:  # a server's stderr is a log: lines, never a bar, for a long first build or a big refresh
        retriever = Retriever(loaded.root, loaded.settings, progress=Reporter(bar=False))
        return MemoryService(retriever, store)
    except RetrieverError as exc:
        store.close()
        fail(exc, as_json=False)


def warn_if_not_ready(root: Path) -> None:
    """Say on stderr, as a server starts, that its root is missing or holds no markdown: its tool calls
    answer ``isError`` until that is fixed (the server keeps running: the folder may appear later)."""
    from retriever.adapters.cli_setup import root_problem

    problem = root_problem(root)
    if problem is not None:
        click.echo(
            f"Warning ({problem.code}): {problem.message}. Until then every retrieve_memory call answers "
            f"isError with {problem.code}.",
            err=True,
        )
