"""How the code is laid out (issue 10): layers that point one way, modules and functions of a readable size."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

PACKAGE = REPO / "retriever"
DATA_MODULES = {"lint/templates.py"}  # templates written out by ``retriever init``: data, not code
MAX_MODULE_LINES, MAX_FUNCTION_LINES = 400, 40
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_every_module_stays_under_400_lines_except_data() -> None:
    long = {
        p.relative_to(PACKAGE).as_posix(): n
        for p in _modules()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert set(long) <= DATA_MODULES, long


def test_no_function_runs_over_40_lines() -> None:
    long = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({lines} lines)")
    assert long == []


def test_ci_runs_exactly_the_test_command_the_readme_gives_with_the_layers_contract() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    command = re.search(r"Run the tests.*?```bash\n(.+?)\n```", readme, re.S)
    assert command is not None
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert ci == command.group(1)
    assert ".venv/bin/lint-imports &&" in ci


@pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is a test dependency")
def test_an_import_that_runs_up_a_layer_breaks_the_contract(tmp_path: Path) -> None:
    shutil.copytree(PACKAGE, tmp_path / "retriever", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")

    def lint() -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": str(tmp_path)}  # the copy, not the installed package
        return subprocess.run(
            [str(LINT_IMPORTS), "--no-cache"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )

    assert lint().returncode == 0
    cache = tmp_path / "retriever" / "memory" / "cache.py"
    cache.write_text(cache.read_text(encoding="utf-8") + "\nfrom retriever.pipeline import results\n")
    broken = lint()
    assert broken.returncode == 1
    assert "retriever.memory is not allowed to import retriever.pipeline" in broken.stdout
    assert "retriever.memory.cache -> retriever.pipeline.results" in broken.stdout


def test_test_folders_mirror_the_packages_and_test_file_names_are_unique() -> None:
    tests = REPO / "tests"
    folders = {p.name for p in tests.iterdir() if p.is_dir() and not p.name.startswith((".", "__"))}
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert folders <= packages, folders - packages
    names = [p.name for p in tests.rglob("test_*.py")]
    assert len(names) == len(set(names))
