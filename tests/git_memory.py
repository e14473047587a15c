"""Real git repositories for tests: an origin with a memory tree, clones of it, commits, pulls."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.test",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.test",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd`` (no user or system config); its stdout."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    env = {**os.environ, **_ENV, "HOME": str(cwd)}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, f"git {' '.join(args)} failed: {done.stderr}"
    return done.stdout


def write(folder: Path, files: Mapping[str, str]) -> None:
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def origin_with(folder: Path, files: Mapping[str, str], prefix: str = "") -> Path:
    """A bare repository at ``folder/origin.git`` whose one commit holds ``files`` (under ``prefix``)."""
    origin = folder / "origin.git"
    origin.mkdir(parents=True)
    git(origin, "init", "-q", "--bare", "-b", "main")
    author = clone(origin, folder / "author")
    commit(author, {f"{prefix}{rel}": text for rel, text in files.items()}, "first version")
    return origin


def clone(origin: Path, dest: Path) -> Path:
    git(dest.parent if dest.parent.exists() else _made(dest.parent), "clone", "-q", str(origin), str(dest))
    return dest


def commit(repo: Path, files: Mapping[str, str], message: str) -> str:
    """Write ``files``, commit them and push to origin; the new commit."""
    write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    git(repo, "push", "-q", "origin", "HEAD:main")
    return git(repo, "rev-parse", "HEAD").strip()


def _made(folder: Path) -> Path:
    folder.mkdir(parents=True)
    return folder
