"""What every ``retriever`` command shares: exit codes, error reporting, the root, progress, services.

Commands live in ``cli_query``, ``cli_serve`` and ``cli_check``; ``cli`` gathers them into the
group.  Nothing here imports a command module, so the imports run one way.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

if TYPE_CHECKING:
    from retriever.errors import RetrieverError
    from retriever.memory.memory import Memory

EXIT_FAILURE, EXIT_USAGE = 1, 2


def exit_code(error: RetrieverError) -> int:
    from retriever.errors import ConfigError, InvalidArguments, MemoryEmpty, MemoryNotFound
    from retriever.memory.gitinfo import GitError

    usage = InvalidArguments | MemoryNotFound | MemoryEmpty | ConfigError | GitError
    return EXIT_USAGE if isinstance(error, usage) else EXIT_FAILURE


def fail(error: RetrieverError, as_json: bool) -> NoReturn:
    """Report a core error the way scripts and people both expect, then exit."""
    from retriever.config import mask_url
    from retriever.pipeline.report import error_content

    # Messages may name a store's URL: its password never reaches the terminal or a script's log.
    if as_json:
        click.echo(mask_url(json.dumps(error_content(error), ensure_ascii=False, indent=2)))
    click.echo(f"Error ({error.code}): {mask_url(error.message)}", err=True)
    sys.exit(exit_code(error))


def resolve_root(root: Path | None) -> Path:
    from retriever.retriever import default_root

    return root if root is not None else default_root()


def open_memory(root: Path, settings: Any, as_json: bool) -> Memory:
    from retriever.adapters.cli_progress import Reporter
    from retriever.errors import RetrieverError
    from retriever.memory.memory import Memory

    progress = Reporter()
    try:
        return Memory.open(root, settings, progress=progress)
    except RetrieverError as exc:
        fail(exc, as_json)
        raise  # unreachable: fail exits
    finally:
        progress.close()


root_option = click.option(
    "--root",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Memory tree folder [default: $RETRIEVER_ROOT, else ./company_context].",
)


def settings_or_exit() -> Any:
    """Settings from the environment; invalid ones stop the command (exit 2)."""
    from retriever.config import Settings
    from retriever.errors import RetrieverError

    try:
        return Settings.from_env()
    except RetrieverError as exc:
        fail(exc, as_json=False)


def open_service(root: Path | None, settings: Any = None) -> Any:
    """The retriever and the store a server needs; a store that cannot be opened stops start-up."""
    from retriever.errors import RetrieverError
    from retriever.retriever import Retriever
    from retriever.service.service import MemoryService
    from retriever.service.stores import open_store

    settings = settings if settings is not None else settings_or_exit()
    try:
        store = open_store(settings)
    except RetrieverError as exc:
        fail(exc, as_json=False)
    from retriever.adapters.cli_progress import Reporter

    # A server's stderr is a log: lines, never a bar, for a long first build or a big refresh.
    return MemoryService(Retriever(resolve_root(root), settings, progress=Reporter(bar=False)), store)


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
