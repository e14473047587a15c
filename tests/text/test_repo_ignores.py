"""``text.repo_ignores``: the ignore rules a memory root inherits from the repository around it."""

from __future__ import annotations

from pathlib import Path

from retriever.text.gitignore import Plain
from retriever.text.repo_ignores import inherited
from retriever.text.walk import scan


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / "repo" / ".git" / "info").mkdir(parents=True)  # a repository's top, as git lays it out
    for name, text in files.items():
        path = tmp_path / "repo" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path / "repo"


def _paths(root: Path) -> list[str]:
    return [e.rel_path for e in scan(root)[0]]


MEMORY = {
    "docs/mem/a.md": "# A\n",
    "docs/mem/plan.draft.md": "# Draft\n",
    "docs/mem/excl.md": "# Excluded\n",
    "docs/mem/sub/b.md": "# B\n",
    "docs/mem/sub/notes.md": "# Notes\n",
}


def test_a_subfolder_root_leaves_out_what_the_repositorys_gitignores_and_exclude_file_ignore(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path,
        {
            **MEMORY,
            ".gitignore": "*.draft.md\n",
            "docs/.gitignore": "mem/sub/notes.md\n",  # relative to the folder it lives in
            ".git/info/exclude": "docs/mem/excl.md\n",
        },
    )
    assert _paths(repo / "docs" / "mem") == ["a.md", "sub/b.md"]
    assert _paths(repo) == ["docs/mem/a.md", "docs/mem/sub/b.md"]  # the root as the repository's top: the same


def test_a_root_the_rules_above_ignore_is_read_whole(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {**MEMORY, ".gitignore": "docs/\n*.draft.md\n"})
    assert inherited(repo / "docs" / "mem") == []
    assert len(_paths(repo / "docs" / "mem")) == 5


def test_a_root_with_its_own_repository_or_none_inherits_nothing_from_above(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {**MEMORY, ".gitignore": "*.md\n"})
    (repo / "docs" / "mem" / ".git").mkdir()
    assert inherited(repo / "docs" / "mem") == []
    outside = tmp_path / "plain" / "mem"
    outside.mkdir(parents=True)
    (tmp_path / "plain" / ".gitignore").write_text("*.md\n", encoding="utf-8")  # no repository: no meaning
    (outside / "a.md").write_text("# A\n", encoding="utf-8")
    assert _paths(outside) == ["a.md"]


def test_a_gitignore_above_that_is_no_regular_file_is_passed_over(tmp_path: Path) -> None:
    repo = _repo(tmp_path, MEMORY)
    (repo / ".gitignore").mkdir()
    assert len(_paths(repo / "docs" / "mem")) == 5


def test_the_repositorys_plain_gitignore_is_matched_without_pathspec(tmp_path: Path) -> None:
    # a warm query had loaded pathspec and RE2 (~10 ms) for a .gitignore of plain names and suffixes
    repo = _repo(tmp_path, {**MEMORY, ".gitignore": "*.pyc\n.venv/\nbuild/\n/bench-out/\n*.draft.md\n"})
    [above] = inherited(repo / "docs" / "mem")
    assert isinstance(above.spec, Plain)
    assert _paths(repo / "docs" / "mem") == ["a.md", "excl.md", "sub/b.md", "sub/notes.md"]


def test_a_worktree_takes_the_main_repositorys_exclude_file(tmp_path: Path) -> None:
    main = _repo(tmp_path, {".git/info/exclude": "secret.md\n"})
    (main / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (main / ".git" / "worktrees" / "wt" / "commondir").write_text("../..\n", encoding="utf-8")
    worktree = tmp_path / "wt"
    (worktree / "mem").mkdir(parents=True)
    (worktree / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'wt'}\n", encoding="utf-8")
    for name in ("a.md", "secret.md"):
        (worktree / "mem" / name).write_text("# T\n", encoding="utf-8")
    assert _paths(worktree / "mem") == ["a.md"]
    (worktree / ".git").write_text("not a gitdir line\n", encoding="utf-8")  # unreadable: nothing inherited
    assert _paths(worktree / "mem") == ["a.md", "secret.md"]
