"""``retriever init``: the files it writes, its refusal to overwrite, and a scaffold that checks clean."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from retriever.adapters.cli import cli
from retriever.config import Settings
from retriever.lint.check import check
from retriever.lint.config import load_config
from retriever.lint.scaffold import FILES, FOLDERS, TargetChanged, TargetNotEmpty, TargetNotOwned, scaffold
from retriever.memory.memory import Memory

EXPECTED = [
    "README.md",
    "people/maria_lopez.md",
    "teams/platform_team.md",
    "projects/billing_migration.md",
    "decisions/dec_0001_move_billing_to_stripe.md",
    "processes/incident_response.md",
    "policies/on_call.md",
    "meetings/2026-01-15_platform_weekly.md",
    "glossary/glossary.md",
    ".retriever.toml",
    ".pre-commit-config.yaml",
    ".github/workflows/memory-check.yml",
]


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_scaffold_writes_every_file_and_returns_them_in_order(tmp_path: Path) -> None:
    target = tmp_path / "memory"
    written = scaffold(target)
    assert written == [target / rel for rel in EXPECTED]
    assert all(path.read_text(encoding="utf-8") == FILES[rel] for rel, path in zip(EXPECTED, written, strict=True))


def test_every_topic_folder_holds_one_example_of_its_type(tmp_path: Path) -> None:
    scaffold(tmp_path / "memory")
    memory = Memory.open(tmp_path / "memory", Settings.from_env())
    types = {path.split("/")[0]: info.doc_type for path, info in memory.state.catalog.items() if "/" in path}
    assert types == {
        "people": "person",
        "teams": "team",
        "projects": "project",
        "decisions": "decision",
        "processes": "process",
        "policies": "policy",
        "meetings": "meeting",
        "glossary": "glossary",
    }
    assert set(types) == set(FOLDERS)


def test_the_example_documents_carry_the_conventional_front_matter(tmp_path: Path) -> None:
    scaffold(tmp_path / "memory")
    memory = Memory.open(tmp_path / "memory", Settings.from_env())
    for rel_path in memory.state.catalog:
        if "/" in rel_path:
            front_matter = memory.document(rel_path).front_matter
            assert {"title", "type", "summary", "owner", "created", "updated", "related"} <= set(front_matter)


def test_the_scaffold_passes_every_check_rule(tmp_path: Path) -> None:
    scaffold(tmp_path / "memory")
    memory = Memory.open(tmp_path / "memory", Settings.from_env())
    assert memory.skipped == []
    assert check(memory, load_config(tmp_path / "memory")) == []


def test_the_hooks_run_retriever_check_on_the_tree(tmp_path: Path) -> None:
    scaffold(tmp_path / "memory")
    pre_commit = yaml.safe_load((tmp_path / "memory" / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    [hook] = pre_commit["repos"][0]["hooks"]
    assert pre_commit["repos"][0]["repo"] == "local"
    # Errors block a commit, warnings (an outside attendee with no page) are listed: the hook had blocked on them.
    entry = "retriever check --root . --fail-on error"
    assert (hook["id"], hook["entry"], hook["pass_filenames"]) == ("retriever-check", entry, False)
    assert hook["always_run"] is True  # a commit that only deletes a document passes pre-commit no file
    workflow = yaml.safe_load((tmp_path / "memory" / ".github/workflows/memory-check.yml").read_text(encoding="utf-8"))
    steps = workflow["jobs"]["check"]["steps"]
    assert steps[-1] == {"run": "retriever check --root . --format github --fail-on error"}


def test_scaffold_fills_an_existing_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    assert len(scaffold(tmp_path / "memory")) == len(EXPECTED)


def test_scaffold_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "notes.md").write_text("mine\n", encoding="utf-8")
    with pytest.raises(TargetNotEmpty) as caught:
        scaffold(tmp_path / "memory")
    assert (
        caught.value.message == f"{tmp_path / 'memory'} already exists and is not empty; choose a new or empty folder"
    )
    assert sorted(p.name for p in (tmp_path / "memory").iterdir()) == ["notes.md"]


def test_init_prints_what_it_created(runner: CliRunner, tmp_path: Path) -> None:
    target = tmp_path / "memory"
    result = runner.invoke(cli, ["init", str(target), "--source", "git+https://example.test/org/retriever@v1"])
    assert result.exit_code == 0, result.stderr
    # The "Next:" command runs this very retriever (here `python -P -m retriever`), on PATH or not.
    assert result.stdout.splitlines() == [
        f"Created a memory tree in {target}:",
        *(f"  {rel}" for rel in EXPECTED),
        f"Next: cd {target} && git init && {os.path.abspath(sys.executable)} -P -m retriever check --root .",
    ]
    assert result.stderr == ""
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()) == sorted(EXPECTED)


def test_init_refuses_a_folder_that_is_not_empty_with_exit_2(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / ".git").mkdir()
    result = runner.invoke(cli, ["init", str(tmp_path / "memory")])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"Error (invalid_arguments): {tmp_path / 'memory'} already exists and is not empty; "
        "choose a new or empty folder\n"
    )


def test_init_refuses_a_path_that_is_a_file(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "memory").write_text("x\n", encoding="utf-8")
    result = runner.invoke(cli, ["init", str(tmp_path / "memory")])
    assert result.exit_code == 2
    assert f"{tmp_path / 'memory'} already exists and is a file, not a folder; choose a new" in result.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes and /dev/null are POSIX")
@pytest.mark.parametrize(
    ("make", "what"),
    [
        (lambda path: os.mkfifo(path), "a named pipe (FIFO)"),
        (lambda path: path.symlink_to(path.parent / "nowhere"), "a dangling symlink (it points to nothing)"),
        (lambda path: path.symlink_to(path), "a symlink that loops"),
        (lambda path: path.symlink_to("/dev/null"), "a device"),
    ],
    ids=["fifo", "dangling-link", "link-loop", "dev-null"],
)
def test_init_says_what_an_existing_path_that_is_no_folder_is(
    runner: CliRunner, tmp_path: Path, make: Any, what: str
) -> None:
    target = tmp_path / "memory"
    make(target)
    result = runner.invoke(cli, ["init", str(target)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (
        f"Error (invalid_arguments): {target} already exists and is {what}, not a folder; "
        "choose a new or empty folder\n"
    )


def test_init_refuses_a_path_thousands_of_folders_deep_in_one_short_line_making_nothing(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli, ["init", "/".join(["d"] * 2000)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("Error (invalid_arguments): cannot write 'd/d/d/")
    assert "init makes at most 64 new nested folders; nothing was written: pass a shorter path" in result.stderr
    assert len(result.stderr) < 400 and "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_init_names_a_path_too_long_for_the_system_briefly_and_leaves_no_folder_behind(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli, ["init", "/".join(["d" * 250] * 30)])  # 7,529 characters, 250 per folder
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("Error (invalid_arguments): cannot write 'ddd")
    assert "more characters]': File name too long; nothing was written: pass a shorter path" in result.stderr
    assert len(result.stderr) < 400
    assert list(tmp_path.iterdir()) == []


def test_the_initialised_tree_checks_clean_through_the_command(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(cli, ["init", "memory"]).exit_code == 0
    for output in ("text", "github"):
        result = runner.invoke(cli, ["check", "--root", "memory", "--format", output])
        assert (result.exit_code, result.stdout, result.stderr) == (0, "No findings in 9 files.\n", "")


def _plant_after_the_emptiness_check(monkeypatch: pytest.MonkeyPatch, target: Path, name: str, points_to: Path) -> None:
    """Plant the symlink ``target/name`` right after init looked into ``target`` and found it empty: the moment
    another user with write access to the folder would pick (deterministic: hooked, not raced)."""
    listed = Path.iterdir

    def iterdir_then_plant(self: Path) -> Any:
        entries = list(listed(self))
        if self == target:
            (target / name).symlink_to(points_to)
        return iter(entries)

    monkeypatch.setattr(Path, "iterdir", iterdir_then_plant)


def test_a_symlink_planted_after_the_emptiness_check_is_never_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = tmp_path / "victim.toml"
    victim.write_text("my settings\n", encoding="utf-8")
    (tmp_path / "memory").mkdir()
    _plant_after_the_emptiness_check(monkeypatch, tmp_path / "memory", ".retriever.toml", victim)
    with pytest.raises(TargetChanged) as caught:
        scaffold(tmp_path / "memory")
    assert victim.read_text(encoding="utf-8") == "my settings\n"
    assert str(tmp_path / "memory" / ".retriever.toml") in caught.value.message
    assert "overwrote nothing" in caught.value.message and "new folder you own" in caught.value.message


def test_a_folder_symlink_planted_after_the_check_gets_no_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "memory").mkdir()
    _plant_after_the_emptiness_check(monkeypatch, tmp_path / "memory", "people", elsewhere)
    with pytest.raises(TargetChanged):
        scaffold(tmp_path / "memory")
    assert list(elsewhere.iterdir()) == []


def test_init_reports_a_planted_file_as_an_error_naming_the_folder_without_a_traceback(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = tmp_path / "victim.md"
    victim.write_text("mine\n", encoding="utf-8")
    (tmp_path / "memory").mkdir()
    _plant_after_the_emptiness_check(monkeypatch, tmp_path / "memory", "README.md", victim)
    result = runner.invoke(cli, ["init", str(tmp_path / "memory")])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith(f"Error (invalid_arguments): {tmp_path / 'memory' / 'README.md'} appeared")
    assert "Traceback" not in result.stderr
    assert victim.read_text(encoding="utf-8") == "mine\n"


def test_scaffold_refuses_a_dangling_symlink_as_the_target(tmp_path: Path) -> None:
    (tmp_path / "memory").symlink_to(tmp_path / "nowhere")
    with pytest.raises(TargetNotEmpty):
        scaffold(tmp_path / "memory")
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a folder away needs root")
def test_init_refuses_an_empty_folder_that_belongs_to_another_user(runner: CliRunner, tmp_path: Path) -> None:
    target = tmp_path / "memory"
    target.mkdir(mode=0o777)
    os.chown(target, 12345, 12345)  # as another user's shared, world-writable folder would be
    result = runner.invoke(cli, ["init", str(target)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (
        f"Error (invalid_arguments): {target} belongs to another user (uid 12345), who could swap what init "
        "writes for links to your files; nothing was written: pass a folder that does not exist yet (init "
        "creates it) or one you own\n"
    )
    assert list(target.iterdir()) == []
    with pytest.raises(TargetNotOwned):
        scaffold(target)
