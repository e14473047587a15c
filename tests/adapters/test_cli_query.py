"""``retriever query`` with a warm index cache: what the process imports (issue 12, "faster cold start").

A warm query reads the cached index and a few cached documents; it parses no markdown, calls no model and
renders nothing on a terminal when piped, so the modules behind those (markdown-it, YAML, openai, rich, the
other commands' modules) stay unloaded.  The check is on imports, not on time, so that it cannot flake; the
figures are in ``scripts/bench.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from conftest import COMPANY_CONTEXT, REPO

from retriever.adapters.cli import COMMAND_MODULES, cli

QUESTION = "What are the monthly internet, phone and wellness stipends?"

# Run in a fresh interpreter as `retriever query QUESTION --root ROOT --json` would; prints the answer's
# index_cache figure and the imported module names.
_PROBE = """
import contextlib, io, json, sys
from retriever.adapters.cli import cli
out = io.StringIO()
with contextlib.redirect_stdout(out):
    cli.main(["query", sys.argv[1], "--root", sys.argv[2], "--json"], prog_name="retriever", standalone_mode=False)
answer = json.loads(out.getvalue())
print(json.dumps({"index_cache": answer["diagnostics"]["index_cache"], "facts": len(answer["retrieval"]["facts"]),
                  "modules": sorted(sys.modules)}))
"""

# Off the warm query path, each for a reason: parsing (markdown_it, frontmatter, yaml, pathspec, the parser,
# intake, workers), the LLM (openai, retriever.llm), terminal rendering (rich), other commands and servers
# (cli_serve, cli_check, cli_ops, cli_clients, client_config, service, mcp, starlette, uvicorn, redis, httpx),
# snowballstemmer's 36 languages (analyzer loads the English stemmer alone), and numpy.ma (np.isin imports it).
OFF_THE_PATH = (
    "markdown_it",
    "frontmatter",
    "yaml",
    "pathspec",
    "retriever.text.parser",
    "retriever.memory.intake",
    "retriever.memory.workers",
    "openai",
    "retriever.llm",
    "rich",
    "retriever.adapters.cli_serve",
    "retriever.adapters.cli_check",
    "retriever.adapters.cli_ops",
    "retriever.adapters.cli_clients",
    "retriever.adapters.client_config",
    "retriever.service",
    "mcp",
    "starlette",
    "uvicorn",
    "redis",
    "httpx",
    "snowballstemmer",
    "numpy.ma",
)


def _warm_query(root: Path) -> dict[str, object]:
    command = [sys.executable, "-c", _PROBE, QUESTION, str(root)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_a_warm_query_loads_no_parser_no_llm_no_renderer_and_no_other_command() -> None:
    first = _warm_query(COMPANY_CONTEXT)  # builds the index cache (in the test's own state folder)
    assert first["index_cache"] == "built"
    warm = _warm_query(COMPANY_CONTEXT)
    assert warm["index_cache"] == "hit"
    assert isinstance(warm["facts"], int) and warm["facts"] > 0
    modules = warm["modules"]
    assert isinstance(modules, list)
    loaded = [m for m in modules if any(m == name or m.startswith(name + ".") for name in OFF_THE_PATH)]
    assert loaded == []


def test_every_lazily_listed_command_is_defined_by_the_module_named_for_it() -> None:
    from importlib import import_module

    defined = {
        command.name: module
        for module in set(COMMAND_MODULES.values())
        for command in import_module(f"retriever.adapters.{module}").COMMANDS
    }
    assert defined == COMMAND_MODULES


def test_a_mistyped_command_is_offered_the_command_not_yet_loaded() -> None:
    result = CliRunner().invoke(cli, ["stauts"])
    assert result.exit_code == 2
    assert "No such command 'stauts'. Did you mean 'status'?" in result.output


# -- names that hold control characters ----------------------------------------------------------------

HOSTILE_FOLDER, HOSTILE_FILE = "te\nam", "la\x1b]0;pwned\x07unch.md"
LAUNCH = "# Launch\n\nThe launch date is 5 May 2026 and Ana owns the launch.\n"


def _hostile_tree(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    (root / HOSTILE_FOLDER).mkdir(parents=True)
    (root / HOSTILE_FOLDER / HOSTILE_FILE).write_text(LAUNCH, encoding="utf-8")
    (root / "other.md").write_text("# Other\n\nBilling is owned by Bob.\n", encoding="utf-8")
    return root


def _assert_terminal_safe(stdout: str) -> None:
    assert "\x1b" not in stdout and "\x07" not in stdout
    assert "memory/te\\nam/la\\x1b]0;pwned\\x07unch.md:3" in stdout  # the path, escaped on one line
    assert not any(line.startswith("am/") for line in stdout.splitlines())  # the newline started none


def test_query_prints_file_and_folder_names_with_control_characters_escaped(tmp_path: Path) -> None:
    root = _hostile_tree(tmp_path)

    result = CliRunner().invoke(cli, ["query", "who owns the launch", "--root", str(root)])

    assert result.exit_code == 0, result.stderr
    _assert_terminal_safe(result.stdout)


def test_query_at_a_revision_prints_names_with_control_characters_escaped(tmp_path: Path) -> None:
    from git_memory import git

    root = _hostile_tree(tmp_path)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "hostile names")

    result = CliRunner().invoke(cli, ["query", "who owns the launch", "--root", str(root), "--at", "HEAD"])

    assert result.exit_code == 0, result.stderr
    _assert_terminal_safe(result.stdout)


def test_query_json_keeps_names_with_control_characters_exact(tmp_path: Path) -> None:
    root = _hostile_tree(tmp_path)

    result = CliRunner().invoke(cli, ["query", "who owns the launch", "--root", str(root), "--json"])

    assert f"memory/{HOSTILE_FOLDER}/{HOSTILE_FILE}" in _strings(json.loads(result.stdout))


def test_query_json_escapes_c1_controls_and_bidi_overrides_from_a_title(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    title = "Launch \u202eenil\u009b31m plan"
    (root / "launch.md").write_text(LAUNCH.replace("# Launch", f"# {title}"), encoding="utf-8")

    result = CliRunner().invoke(cli, ["query", "who owns the launch", "--root", str(root), "--json"])

    assert result.exit_code == 0, result.stderr
    assert "\u202e" not in result.stdout and "\u009b" not in result.stdout
    assert title in _strings(json.loads(result.stdout))  # a script reads the title exact


def _strings(value: object) -> str:
    """Every string in a JSON value, joined: what a script reading the answer sees, unescaped."""
    if isinstance(value, dict):
        return " ".join(_strings(v) for v in value.values())
    if isinstance(value, list):
        return " ".join(_strings(v) for v in value)
    return value if isinstance(value, str) else ""
