"""The project builds an sdist and a wheel that install into a fresh venv and run there
(``scripts/check_package.py``, offline: the wheel's declared dependencies are linked from this
environment, so an undeclared one fails the import)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import REPO


def test_the_wheel_built_from_the_sdist_installs_in_a_fresh_venv_and_answers_a_query(tmp_path: Path) -> None:
    out = tmp_path / "package"
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "check_package.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("built: company_memory_retriever-") and ".whl" in lines[0]
    assert lines[1].startswith("sdist: ") and "memory files, LICENSE, README" in lines[1]
    assert lines[3].startswith("installed: retriever, version ")
    assert lines[4].startswith("query: ") and "first from company_context/" in lines[4]
    assert lines[-1] == "ok"
    assert (out / "venv" / "bin" / "retriever").is_file()
