"""Which build of the retriever runs: its version and, where it can be known, its commit (``retriever --version``).

An operator asking "what is deployed?" needs the commit, not only "0.1.0", which every build says. It is found:
1. in the installer's record (PEP 610's ``direct_url.json``): pip, pipx and uv installing from a git address
   record the commit they built;
2. else, when the package runs from a git clone (an editable install, or ``PYTHONPATH`` on a checkout), as the
   clone's HEAD, saying so when the package's files differ from it.
A wheel built elsewhere names no commit. Nothing here runs at import: ``--version`` asks, once.
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path
from typing import Any

from retriever import __version__
from retriever.memory import gitinfo

PACKAGE = "company-memory-retriever"
_SHORT = 12  # hex digits of a commit shown: unambiguous in any repository of this size


def describe() -> str:
    """``0.1.0``, ``0.1.0 (commit 904451a1b2c3)`` or ``0.1.0 (commit 904451a1b2c3 with uncommitted changes)``."""
    package = Path(__file__).resolve().parents[1]
    commit = installed_commit(_record(package)) or source_commit(package)
    return f"{_version()} (commit {commit})" if commit else _version()


def installed_commit(record: dict[str, Any] | None) -> str | None:
    """The commit an installer recorded building from a git address, else None."""
    vcs = record.get("vcs_info") if record else None
    commit = vcs.get("commit_id") if isinstance(vcs, dict) else None
    return commit[:_SHORT] if isinstance(commit, str) and commit else None


def source_commit(package: Path) -> str | None:
    """HEAD of the git clone whose top folder holds ``package``, else None. Only the top folder counts: a package
    installed into a venv that lies inside some repository is not that repository's code."""
    repo = gitinfo.find_repo(package.parent)
    if repo is None or repo.resolve() != package.parent.resolve():
        return None
    try:
        commit = gitinfo.head(repo)
        changed = commit is not None and bool(gitinfo.dirty(repo, gitinfo.prefix_of(repo, package)))
    except (gitinfo.GitError, OSError):  # a damaged index, git gone meanwhile: the version alone
        return None
    if commit is None:
        return None
    return f"{commit[:_SHORT]} with uncommitted changes" if changed else commit[:_SHORT]


def _version() -> str:
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:  # run from a checkout on PYTHONPATH, not installed
        return __version__


def _record(package: Path) -> dict[str, Any] | None:
    """The installer's record, when the installed package is the one running (a checkout on ``PYTHONPATH`` beside an
    install from git is not that commit)."""
    try:
        distribution = metadata.distribution(PACKAGE)
        if Path(str(distribution.locate_file("retriever/__init__.py"))).resolve() != package / "__init__.py":
            return None
        text = distribution.read_text("direct_url.json")
        record = json.loads(text) if text else None
    except (metadata.PackageNotFoundError, ValueError, OSError):
        return None  # not installed, or a record no installer wrote: no commit from it
    return record if isinstance(record, dict) else None
