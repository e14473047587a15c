"""Where log records go: nowhere from the library unless its host asks; stderr from the ``retriever`` command."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from conftest import TreeFactory
from fixtures import ACME

from retriever.adapters import logs
from retriever.adapters.cli import cli

# An index cache that cannot be made (its state folder is a file) is a warning, logged and in diagnostics.
_ASK = "from retriever import Retriever; print(Retriever({root!r}).retrieve('how many sick days').coverage)"


def _blocked_state(tmp_path: Path) -> dict[str, str]:
    blocker = tmp_path / "state-is-a-file"
    blocker.write_text("")
    return {**os.environ, "RETRIEVER_STATE_DIR": str(blocker), "HOME": str(tmp_path)}


def test_the_library_prints_nothing_on_stderr_when_its_host_configured_no_logging(
    make_tree: TreeFactory, tmp_path: Path
) -> None:
    root = make_tree(ACME)
    ran = subprocess.run(
        [sys.executable, "-c", _ASK.format(root=str(root))],
        env=_blocked_state(tmp_path), capture_output=True, text=True, timeout=120, check=True,
    )
    assert ran.stdout.strip() in {"comprehensive", "partial", "limited"}
    assert ran.stderr == ""


def test_the_command_prints_the_same_warning_on_stderr_as_a_plain_sentence(
    make_tree: TreeFactory, tmp_path: Path
) -> None:
    root = make_tree(ACME)
    ran = subprocess.run(
        [sys.executable, "-m", "retriever", "query", "how many sick days", "--root", str(root)],
        env=_blocked_state(tmp_path), capture_output=True, text=True, timeout=120, check=True,
    )
    assert ran.stderr.startswith("index cache unavailable at "), ran.stderr


def test_a_second_call_reformats_the_one_handler_and_passwords_are_masked() -> None:
    root = logging.getLogger()
    before = list(root.handlers)
    try:
        logs.to_stderr()
        logs.to_stderr(logs.NAMED)
        ours = [h for h in root.handlers if isinstance(h, logs._Stderr)]
        assert len(ours) == 1
        runner_stderr = CliRunner()  # the handler writes to whatever sys.stderr is when the record comes
        with runner_stderr.isolation() as (_, _, err):
            logging.getLogger("retriever.test").warning("store at %s is down", "redis://u:hunter2@db:6379/0")
            written = err.getvalue().decode()
        assert written == "WARNING retriever.test: store at redis://u:***@db:6379/0 is down\n"
    finally:
        root.handlers[:] = before


def test_every_command_sends_warnings_to_stderr_once(make_tree: TreeFactory) -> None:
    root = logging.getLogger()
    before = list(root.handlers)
    try:
        for _ in range(2):
            CliRunner().invoke(cli, ["tree", "--root", str(make_tree(ACME))])
        assert len([h for h in root.handlers if isinstance(h, logs._Stderr)]) == 1
    finally:
        root.handlers[:] = before


_LEVELS = """
import logging
from retriever.adapters import logs
logs.to_stderr(logs.NAMED, {level!r})
logging.getLogger("retriever.access").info("GET /healthz 200 1 ms key=-")
logging.getLogger("retriever.memory").debug("refresh detail")
logging.getLogger("retriever.service").warning("store failing")
logging.getLogger("mcp.server.lowlevel").info("Processing request of type CallToolRequest")
logging.getLogger("uvicorn.error").warning("uvicorn warns")
logging.getLogger("uvicorn.error").error("uvicorn fails")
"""


def _written_at(level: str) -> str:
    ran = subprocess.run(
        [sys.executable, "-c", _LEVELS.format(level=level)], capture_output=True, text=True, timeout=60, check=True
    )
    return ran.stderr


def test_at_info_the_retrievers_records_from_info_up_reach_stderr_other_libraries_stay_at_warnings() -> None:
    assert _written_at("info").splitlines() == [
        "INFO retriever.access: GET /healthz 200 1 ms key=-",
        "WARNING retriever.service: store failing",
        "WARNING uvicorn.error: uvicorn warns",
        "ERROR uvicorn.error: uvicorn fails",
    ]


def test_at_error_only_errors_reach_stderr() -> None:
    assert _written_at("error").splitlines() == ["ERROR uvicorn.error: uvicorn fails"]


def test_the_default_level_writes_warnings_and_errors() -> None:
    assert _written_at("warning").splitlines() == [
        "WARNING retriever.service: store failing",
        "WARNING uvicorn.error: uvicorn warns",
        "ERROR uvicorn.error: uvicorn fails",
    ]


def test_a_records_message_is_one_line_with_control_characters_escaped() -> None:
    script = (
        "import logging\nfrom retriever.adapters import logs\nlogs.to_stderr(logs.NAMED, 'debug')\n"
        "name = 'a\\nINFO forged\\x1b]0;x\\x07.md'\n"
        "logging.getLogger('retriever.memory').debug('unexpected failure indexing %s', name)\n"
    )
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert ran.stderr == "DEBUG retriever.memory: unexpected failure indexing a\\nINFO forged\\x1b]0;x\\x07.md\n"
