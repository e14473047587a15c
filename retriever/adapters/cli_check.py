"""``retriever check`` and ``retriever init``: the linter and the scaffold, as click commands.

    retriever check [--root DIR] [--format text|json|github] [--fail-on warning|error]
    retriever init DIR

``check`` exits 0 without findings, 1 with findings, 2 on usage errors (missing or empty root, bad
settings or a malformed check config).  ``init`` exits 2 when DIR exists and is not empty.
Findings go to stdout, errors to stderr.  ``retriever.adapters.cli`` registers ``COMMANDS``.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from retriever.adapters.cli_common import EXIT_FAILURE, config_option, fail, load_settings, open_memory, root_option
from retriever.text.safe import one_line

if TYPE_CHECKING:
    from retriever.lint.tree import Finding


@click.command()
@root_option
@click.option(
    "--format",
    "output",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
    help="text for people, json for scripts, github for GitHub Actions annotations.",
)
@click.option(
    "--fail-on",
    type=click.Choice(["warning", "error"]),
    default="warning",
    show_default=True,
    help="exit 1 on any finding (warning), or only on errors (error): a warning alone then exits 0.",
)
@config_option
def check(root: Path | None, output: str, fail_on: str) -> None:
    """Lint the memory tree: unreadable files, field types, repeated front-matter keys, links (broken or
    site-absolute), names, empty parts, relations.

    Exit codes: 0 when the tree is clean, 1 when there are findings, 2 on usage errors (a missing root or one
    without markdown, an invalid setting or a malformed check config); with --fail-on error, warnings alone exit 0.
    Rules are turned off with [tool.retriever.check] disable = [...] in pyproject.toml or [check] in the tree's
    .retriever.toml.
    """
    from retriever.errors import MemoryEmpty, RetrieverError
    from retriever.lint import check as linter
    from retriever.lint import config as check_config

    as_json = output == "json"
    loaded = load_settings(root, as_json)
    try:
        memory = open_memory(loaded.root, loaded.settings, as_json)
        config = check_config.load_config(memory.root)
    except RetrieverError as exc:
        fail(exc, as_json)
        return
    for warning in memory.warnings:
        click.echo(one_line(f"Warning: {warning}"), err=True)
    findings = linter.check(memory, config)
    files = linter.files_checked(memory)
    if not findings and not memory.state.catalog:  # a CI job pointed at the wrong folder must not pass
        fail(MemoryEmpty.at(str(memory.root), len(memory.skipped)), as_json)
        return
    _print(output, findings, files, memory.root)
    failing = [f for f in findings if fail_on == "warning" or f.severity == "error"]
    sys.exit(EXIT_FAILURE if failing else 0)


def _print(output: str, findings: list[Finding], files: int, root: Path) -> None:
    """The findings in the ``--format`` asked for, on stdout."""
    from retriever.lint import report as check_report

    if output == "json":
        click.echo(check_report.format_json(check_report.located(findings, root, Path.cwd()), files))
    elif output == "github":
        for line in [*check_report.format_github(findings, root, Path.cwd()), check_report.summary(findings, files)]:
            click.echo(line)  # format_github escapes each annotation for GitHub and the terminal
    else:
        for line in check_report.format_text(check_report.located(findings, root, Path.cwd()), files):
            click.echo(one_line(line))  # a file name may hold a newline (github's format escapes its own way)


@click.command()
@click.argument("target", metavar="DIR", type=click.Path())
@click.option(
    "--source",
    default=None,
    metavar="REQUIREMENT",
    help="Where the CI workflow pip-installs the retriever from (e.g. git+https://host/org/repo@v0.1.0) "
    "unless the repository variable RETRIEVER_SOURCE is set [default: the git URL this copy was installed "
    "from, if any].",
)
def init(target: str, source: str | None) -> None:
    """Scaffold a new memory tree in DIR: topic folders, example documents, README and CI hooks.

    DIR must not exist or be empty. The result passes `retriever check` as it is.
    """
    from retriever.adapters.cli_setup import command_line, install_source
    from retriever.errors import RetrieverError
    from retriever.lint.scaffold import scaffold

    if not target.strip():  # Path("") is ".": an unset variable would scaffold into the current folder
        raise click.BadParameter('is empty (an unset variable?); name a folder, or "." for this one', param_hint="DIR")
    directory = Path(target)
    source = source if source is not None else install_source()
    try:
        written = scaffold(directory, source)
    except RetrieverError as exc:
        fail(exc, as_json=False)
        return
    except OSError as exc:
        click.echo(f"Error: cannot write {exc.filename or directory}: {exc.strerror}", err=True)
        sys.exit(EXIT_FAILURE)
    click.echo(f"Created a memory tree in {directory}:")
    for path in written:
        click.echo(f"  {path.relative_to(directory).as_posix()}")
    if not source:
        click.echo(
            "Note: set the repository variable RETRIEVER_SOURCE (or pass --source) to where CI installs the "
            "retriever from; until then the memory-check workflow fails saying so.",
            err=True,
        )
    # The absolute command when `retriever` is not on PATH (installed in a venv that is not active).
    # A folder named "-…" would read as an option ("cd -" goes back to the previous folder): "./-…" is that folder.
    shown = str(directory) if not str(directory).startswith("-") else f"./{directory}"
    click.echo(f"Next: cd {shlex.quote(shown)} && git init && {command_line(['check', '--root', '.'])}")


COMMANDS = (check, init)
