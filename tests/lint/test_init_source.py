"""``retriever init``: the CI workflow installs from a source the user sets (RETRIEVER_SOURCE, defaulting to
the git URL this copy came from), and the "Next:" line works whether or not ``retriever`` is on PATH."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from conftest import child_env

from retriever.adapters import cli_setup
from retriever.adapters.cli import cli
from retriever.lint.scaffold import WORKFLOW_PATH

SOURCE = "git+https://github.com/acme/company-memory-retriever@v0.1.0"


def _workflow(target: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((target / WORKFLOW_PATH).read_text(encoding="utf-8"))
    return loaded


def _install_step(target: Path) -> str:
    [step] = [s for s in _workflow(target)["jobs"]["check"]["steps"] if s.get("name") == "Install the retriever"]
    return str(step["run"])


def _run_step(script: str, source: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """The install step under bash, with a ``python`` that prints what it was asked to run."""
    shims = tmp_path / "shims"
    shims.mkdir(exist_ok=True)
    (shims / "python").write_text('#!/bin/sh\necho "python $*"\n', encoding="utf-8")
    (shims / "python").chmod(0o755)
    env = {"PATH": f"{shims}:/usr/bin:/bin", "RETRIEVER_SOURCE": source}
    return subprocess.run(["bash", "-e", "-c", script], capture_output=True, text=True, env=env, timeout=30)


def test_the_workflow_installs_from_the_source_given_unless_the_repository_variable_is_set(tmp_path: Path) -> None:
    target = tmp_path / "memory"
    assert CliRunner().invoke(cli, ["init", str(target), "--source", SOURCE]).exit_code == 0
    workflow = _workflow(target)
    assert workflow["jobs"]["check"]["env"]["RETRIEVER_SOURCE"] == f"${{{{ vars.RETRIEVER_SOURCE || '{SOURCE}' }}}}"
    assert "pip install company-memory-retriever" not in (target / WORKFLOW_PATH).read_text(encoding="utf-8")
    done = _run_step(_install_step(target), SOURCE, tmp_path)
    assert (done.returncode, done.stdout) == (0, f"python -m pip install {SOURCE}\n")


def test_without_a_source_the_workflow_fails_saying_how_to_set_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli_setup, "install_source", lambda: None)
    target = tmp_path / "memory"
    result = CliRunner().invoke(cli, ["init", str(target)])
    assert result.exit_code == 0
    assert "Note: set the repository variable RETRIEVER_SOURCE (or pass --source)" in result.stderr
    assert _workflow(target)["jobs"]["check"]["env"]["RETRIEVER_SOURCE"] == "${{ vars.RETRIEVER_SOURCE || '' }}"
    done = _run_step(_install_step(target), "", tmp_path)
    assert done.returncode == 1
    assert done.stdout.startswith("::error::Set the repository variable RETRIEVER_SOURCE")


@pytest.mark.parametrize("source", ["x' }}\nevil: 1", 'a"b', "pkg\\name", "{{ secrets.TOKEN }}"])
def test_a_source_that_could_break_the_workflow_is_refused_and_nothing_is_written(tmp_path: Path, source: str) -> None:
    target = tmp_path / "memory"
    result = CliRunner().invoke(cli, ["init", str(target), "--source", source])
    assert result.exit_code == 2
    assert "is not a pip requirement this workflow can hold" in result.stderr
    assert not target.exists()


class _Dist:
    def __init__(self, direct_url: dict[str, Any] | None) -> None:
        self.direct_url = direct_url

    def read_text(self, name: str) -> str | None:
        return json.dumps(self.direct_url) if self.direct_url is not None and name == "direct_url.json" else None


@pytest.mark.parametrize(
    ("direct_url", "expected"),
    [
        (
            {
                "url": "https://github.com/acme/company-memory-retriever",
                "vcs_info": {"vcs": "git", "commit_id": "ab12"},
            },
            "git+https://github.com/acme/company-memory-retriever@ab12",
        ),
        ({"url": "file:///home/me/company-memory-retriever", "vcs_info": {"vcs": "git", "commit_id": "ab12"}}, None),
        ({"url": "file:///home/me/company-memory-retriever", "dir_info": {"editable": True}}, None),
        (None, None),  # installed from an index
    ],
)
def test_the_default_source_is_the_remote_git_url_this_copy_was_installed_from(
    monkeypatch: pytest.MonkeyPatch, direct_url: dict[str, Any] | None, expected: str | None
) -> None:
    monkeypatch.setattr(cli_setup.metadata, "distribution", lambda name: _Dist(direct_url))
    assert cli_setup.install_source() == expected


def _script() -> Path:
    script = Path(sys.executable).with_name("retriever")
    if not script.is_file():
        pytest.skip("the retriever script is not installed next to this interpreter")
    return script


@pytest.mark.parametrize("on_path", [True, False])
def test_the_next_line_runs_whether_or_not_retriever_is_on_path(tmp_path: Path, on_path: bool) -> None:
    script = _script()
    path = f"{script.parent}:/usr/bin:/bin" if on_path else "/usr/bin:/bin"
    target = tmp_path / "my memory"
    env = {**child_env(), "PATH": path}
    done = subprocess.run(
        ["retriever", "init", str(target), "--source", SOURCE],
        executable=str(script),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    next_line = done.stdout.splitlines()[-1]
    command = "retriever" if on_path else str(script)
    assert next_line == f"Next: cd {shlex.quote(str(target))} && git init && {command} check --root ."
    # Run it as printed (git init aside): the scaffold checks clean.
    check = next_line.removeprefix("Next: ").replace("git init && ", "")
    ran = subprocess.run(["bash", "-c", check], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert (ran.returncode, ran.stdout) == (0, "No findings in 9 files.\n"), ran.stderr
    assert os.path.isdir(target)


def test_the_next_line_names_a_folder_starting_with_a_dash_as_a_path(tmp_path: Path) -> None:
    """`retriever init -` had printed "cd - && …", which goes back to the previous folder instead."""
    script = _script()
    done = subprocess.run(
        ["retriever", "init", "--source", SOURCE, "--", "-notes"],
        executable=str(script),
        capture_output=True,
        text=True,
        env={**child_env(), "PATH": f"{script.parent}:/usr/bin:/bin"},
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith("Next: cd ./-notes && git init && ")
    assert (tmp_path / "-notes").is_dir()


def test_an_empty_dir_argument_is_refused_not_read_as_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`retriever init "$UNSET"` had scaffolded into the current folder."""
    from click.testing import CliRunner

    from retriever.adapters.cli import cli

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["init", "  ", "--source", SOURCE])
    assert result.exit_code == 2 and "is empty (an unset variable?)" in result.output
    assert os.listdir(tmp_path) == []
