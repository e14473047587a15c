"""A number setting out of range stops a command with a config error, never a traceback later on."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from conftest import TreeFactory
from fixtures import ACME

from retriever.adapters.cli import cli


def test_serve_with_an_infinite_session_idle_time_stops_at_start_naming_the_setting(make_tree: TreeFactory) -> None:
    root: Path = make_tree(ACME)
    result = CliRunner().invoke(
        cli, ["serve", "--port", "0", "--root", str(root)], env={"RETRIEVER_SESSION_IDLE_SECONDS": "inf"}
    )
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "RETRIEVER_SESSION_IDLE_SECONDS='inf': must be a number of seconds above 0 and at most 604800" in (
        result.stderr
    )
