"""``retriever --version`` names the commit that runs: from the installer's record, else from the clone it runs in."""

from __future__ import annotations

from pathlib import Path

from retriever.adapters.build_info import installed_commit, source_commit
from tests.git_memory import git, write

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def test_an_install_from_a_git_address_names_the_recorded_commit() -> None:
    record = {"url": "https://example.test/retriever.git", "vcs_info": {"vcs": "git", "commit_id": COMMIT}}
    assert installed_commit(record) == COMMIT[:12]


def test_an_install_from_a_folder_or_a_bad_record_names_no_commit() -> None:
    assert installed_commit({"url": "file:///src", "dir_info": {"editable": True}}) is None
    assert installed_commit({"vcs_info": "git"}) is None
    assert installed_commit({"vcs_info": {"commit_id": 7}}) is None
    assert installed_commit(None) is None


def _clone_with_package(tmp_path: Path) -> Path:
    repo = tmp_path / "clone"
    write(repo, {"retriever/__init__.py": "", "README.md": "x\n"})
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    return repo


def test_a_package_at_the_top_of_a_clone_names_its_head(tmp_path: Path) -> None:
    repo = _clone_with_package(tmp_path)
    head = git(repo, "rev-parse", "HEAD").strip()

    assert source_commit(repo / "retriever") == head[:12]


def test_a_package_whose_files_differ_from_head_says_so(tmp_path: Path) -> None:
    repo = _clone_with_package(tmp_path)
    (repo / "retriever" / "__init__.py").write_text("changed = True\n", encoding="utf-8")
    (repo / "README.md").write_text("other files do not count\n", encoding="utf-8")

    head = git(repo, "rev-parse", "HEAD").strip()
    assert source_commit(repo / "retriever") == f"{head[:12]} with uncommitted changes"


def test_a_package_installed_in_a_venv_inside_a_repository_names_no_commit(tmp_path: Path) -> None:
    repo = _clone_with_package(tmp_path)
    installed = repo / ".venv" / "lib" / "site-packages" / "retriever"
    installed.mkdir(parents=True)

    assert source_commit(installed) is None
    assert source_commit(tmp_path / "nowhere" / "retriever") is None


def test_a_clone_whose_index_git_cannot_read_names_no_commit_and_raises_nothing(tmp_path: Path) -> None:
    repo = _clone_with_package(tmp_path)
    (repo / ".git" / "index").write_bytes(b"garbage")

    assert source_commit(repo / "retriever") is None
