"""Provenance from git, recency and superseded ranking, and answers as of a revision (real git)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from retriever import Retriever, Settings
from retriever.adapters.cli import cli
from retriever.memory import gitinfo
from retriever.memory.memory import Memory
from retriever.text import analyzer

pytestmark = pytest.mark.skipif(os.system("git --version > /dev/null 2>&1") != 0, reason="git is not installed")

LEAVE = (
    "---\ntype: policy\ntitle: Leave Policy\n---\n# Leave Policy\n\n## Sick leave\n\n"
    "Employees earn {n} sick days per year.\n"
)


def git(repo: Path, *args: str, author: str = "Alice Example", date: str = "2026-01-10T09:00:00+00:00") -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": author,
        "GIT_AUTHOR_EMAIL": "a@example.test",
        "GIT_COMMITTER_NAME": author,
        "GIT_COMMITTER_EMAIL": "a@example.test",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    return subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True, text=True).stdout


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose memory lives in ``memory/``: two commits by two authors, a tag between."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo / "memory" / "policies" / "leave.md", LEAVE.format(n=10))
    write(repo / "README.md", "# The repository, outside the memory\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "first")
    git(repo, "tag", "v1")
    write(repo / "memory" / "policies" / "leave.md", LEAVE.format(n=12))
    write(repo / "memory" / "teams" / "platform.md", "# Platform\n\nThe platform team runs CI.\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "second", author="Bob Example", date="2026-02-20T15:30:00+00:00")
    return repo


def test_provenance_gives_first_and_last_commit_and_author(repo: Path) -> None:
    history = gitinfo.history(repo, "memory")
    leave = history.provenance("policies/leave.md", frozenset())
    assert (leave.created_at, leave.valid_at, leave.author, leave.uncommitted) == (
        "2026-01-10T09:00:00+00:00",
        "2026-02-20T15:30:00+00:00",
        "Bob Example",
        False,
    )
    platform = history.provenance("teams/platform.md", frozenset())
    assert (platform.created_at, platform.valid_at) == ("2026-02-20T15:30:00+00:00", "2026-02-20T15:30:00+00:00")
    assert set(history.last) == {"policies/leave.md", "teams/platform.md"}  # README.md is outside the prefix


def test_a_file_name_git_would_quote_keeps_its_provenance(repo: Path) -> None:
    write(repo / "memory" / 'q"uo\'te\tname.md', "# Quote\n\nThe thingamajig lives here.\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "quote", author="Cy Example", date="2026-03-01T10:00:00+00:00")
    quoted = Memory.open(repo / "memory", Settings.from_env()).provenance('q"uo\'te\tname.md')
    assert quoted is not None
    assert (quoted.created_at, quoted.author, quoted.uncommitted) == ("2026-03-01T10:00:00+00:00", "Cy Example", False)


def test_a_merge_credits_its_conflict_resolution_and_a_date_reads_the_branch_as_it_was(repo: Path) -> None:
    leave = repo / "memory" / "policies" / "leave.md"
    git(repo, "checkout", "-q", "-b", "feature")
    write(leave, LEAVE.format(n=14))
    git(repo, "commit", "-q", "-am", "feature: 14", author="Dave Example", date="2026-03-01T10:00:00+00:00")
    git(repo, "checkout", "-q", "main")
    write(leave, LEAVE.format(n=15))
    git(repo, "commit", "-q", "-am", "main: 15", author="Erin Example", date="2026-03-05T10:00:00+00:00")
    subprocess.run(["git", "-C", str(repo), "merge", "-q", "feature"], capture_output=True, check=False)  # conflicts
    write(leave, LEAVE.format(n=16))
    git(repo, "commit", "-q", "-am", "merge, resolved", author="Res Olver", date="2026-03-10T10:00:00+00:00")

    resolved = gitinfo.history(repo, "memory").provenance("policies/leave.md", frozenset())
    assert (resolved.valid_at, resolved.author) == ("2026-03-10T10:00:00+00:00", "Res Olver")
    on_main = Retriever(repo / "memory", at="2026-03-02").retrieve("How many sick days do employees earn?")
    assert on_main.facts[0].statement == "Employees earn 12 sick days per year."  # not the feature branch's 14


def test_uncommitted_and_untracked_files_are_marked(repo: Path) -> None:
    write(repo / "memory" / "teams" / "platform.md", "# Platform\n\nThe platform team runs CI and CD.\n")
    write(repo / "memory" / "new.md", "# New\n\nNot committed yet.\n")
    assert gitinfo.dirty(repo, "memory") == frozenset({"teams/platform.md", "new.md"})
    memory = Memory.open(repo / "memory", Settings.from_env())
    assert memory.provenance("teams/platform.md").uncommitted is True  # type: ignore[union-attr]
    new = memory.provenance("new.md")
    assert new is not None and (new.uncommitted, new.created_at) == (True, None)
    assert memory.provenance("policies/leave.md").uncommitted is False  # type: ignore[union-attr]


def test_history_is_one_git_log_and_cached_by_commit(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real: Callable[..., bytes] = gitinfo._git

    def counting(repo_: Path, *args: str, **kw: Any) -> bytes:
        calls.append(args[0])
        return real(repo_, *args, **kw)

    monkeypatch.setattr(gitinfo, "_git", counting)
    Memory.open(repo / "memory", Settings.from_env())
    assert calls.count("log") == 1
    calls.clear()
    Memory.open(repo / "memory", Settings.from_env())  # same HEAD: the history comes from the cache
    assert calls.count("log") == 0
    git(repo, "commit", "-q", "--allow-empty", "-m", "third", date="2026-03-01T00:00:00+00:00")
    calls.clear()
    Memory.open(repo / "memory", Settings.from_env())
    assert calls.count("log") == 1


def test_facts_and_documents_carry_their_provenance(repo: Path) -> None:
    content = Retriever(repo / "memory").retrieve("How many sick days do employees earn?").structured
    fact = content["retrieval"]["facts"][0]
    assert fact["statement"] == "Employees earn 12 sick days per year."
    assert (fact["created_at"], fact["valid_at"], fact["author"], fact["uncommitted"]) == (
        "2026-01-10T09:00:00+00:00",
        "2026-02-20T15:30:00+00:00",
        "Bob Example",
        False,
    )
    document = content["retrieval"]["documents"][0]
    assert document["author"] == "Bob Example"


def test_outside_git_front_matter_dates_are_used(make_tree: Any) -> None:
    root = make_tree({"a.md": "---\ncreated: 2025-05-01\nupdated: 2026-04-02\n---\n# A\n\nQuokkas live on Rottnest.\n"})
    fact = Retriever(root).retrieve("Where do quokkas live?").structured["retrieval"]["facts"][0]
    assert (fact["created_at"], fact["valid_at"], fact["author"]) == ("2025-05-01", "2026-04-02", None)


def test_among_equal_facts_the_newer_document_wins(repo: Path) -> None:
    text = "# Coffee\n\nThe office coffee machine is descaled on Fridays at {hour}.\n"
    write(repo / "memory" / "a" / "coffee.md", text.format(hour=9))  # sorts first: without recency it would win
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "old", date="2026-03-01T00:00:00+00:00")
    write(repo / "memory" / "b" / "coffee.md", text.format(hour=8))
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "new", date="2026-04-01T00:00:00+00:00")
    facts = Retriever(repo / "memory").retrieve("When is the coffee machine descaled?").facts
    assert [f.rel_path for f in facts[:2]] == ["b/coffee.md", "a/coffee.md"]


def test_a_superseded_decision_ranks_below_its_successor(make_tree: Any) -> None:
    root = make_tree(
        {
            "decisions/dec_1.md": "---\ntype: decision\ntitle: DEC-1 Host analytics in Frankfurt\nstatus: superseded\n"
            "superseded_by: DEC-2 Host analytics in Dublin\n---\n# DEC-1 Host analytics in Frankfurt\n\n"
            "Analytics data is hosted in Frankfurt for all clients.\n",
            "decisions/dec_2.md": "---\ntype: decision\ntitle: DEC-2 Host analytics in Dublin\nstatus: accepted\n"
            "supersedes: DEC-1 Host analytics in Frankfurt\n---\n# DEC-2 Host analytics in Dublin\n\n"
            "Analytics data is hosted in Dublin for all clients.\n",
        }
    )
    result = Retriever(root).retrieve("Where is analytics data hosted for clients?")
    assert [f.rel_path for f in result.facts[:2]] == ["decisions/dec_2.md", "decisions/dec_1.md"]
    assert result.structured["retrieval"]["facts"][1]["superseded"] is True
    assert "; superseded)" in result.text


def test_answers_as_of_a_tag_a_date_and_a_commit_come_from_git_objects(repo: Path) -> None:
    before = (repo / "memory" / "policies" / "leave.md").read_text()
    for rev in ("v1", "2026-01-31", git(repo, "rev-parse", "v1").strip()):
        result = Retriever(repo / "memory", at=rev).retrieve("How many sick days do employees earn?")
        assert result.facts[0].statement == "Employees earn 10 sick days per year."
        revision = result.structured["diagnostics"]["revision"]
        assert revision["requested"] == rev and revision["committed_at"] == "2026-01-10T09:00:00+00:00"
        assert f"Answered from revision {rev} (commit " in result.text
        assert "teams/platform.md" not in {f.rel_path for f in result.facts}  # it did not exist yet
    assert (repo / "memory" / "policies" / "leave.md").read_text() == before  # the working tree is untouched
    now = Retriever(repo / "memory").retrieve("How many sick days do employees earn?")
    assert now.facts[0].statement == "Employees earn 12 sick days per year."
    assert now.structured["diagnostics"]["revision"] is None


@pytest.mark.parametrize("date", ["2100-01-01", "2999-12-31T10:00:00"])
def test_a_date_later_than_today_answers_from_the_latest_commit(repo: Path, date: str) -> None:
    result = Retriever(repo / "memory", at=date).retrieve("How many sick days do employees earn?")
    assert result.facts[0].statement == "Employees earn 12 sick days per year."
    assert result.structured["diagnostics"]["revision"]["committed_at"] == "2026-02-20T15:30:00+00:00"


def test_reading_a_revision_reports_its_progress(repo: Path) -> None:
    calls: list[tuple[str, int, int]] = []
    retriever = Retriever(repo / "memory", at="v1", progress=lambda *call: calls.append(call))
    assert retriever.retrieve("How many sick days?").facts[0].statement == "Employees earn 10 sick days per year."
    assert calls == [("reading", 0, 1), ("reading", 1, 1)]


def test_the_cli_answers_at_a_revision_and_explains_bad_ones(repo: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    old = runner.invoke(cli, ["query", "sick days", "--root", str(repo / "memory"), "--at", "v1", "--json"])
    assert old.exit_code == 0, old.stderr
    assert json.loads(old.stdout)["retrieval"]["facts"][0]["statement"] == "Employees earn 10 sick days per year."
    bad = runner.invoke(cli, ["query", "sick days", "--root", str(repo / "memory"), "--at", "v9"])
    assert bad.exit_code == 2
    assert bad.stderr.startswith("Error (git_error): revision 'v9' not found in the git repository at ")
    long = runner.invoke(cli, ["query", "sick days", "--root", str(repo / "memory"), "--at", "v" * 100_000])
    assert long.exit_code == 2 and len(long.stderr) < 1_000  # the revision is echoed cut short
    later = runner.invoke(cli, ["query", "platform", "--root", str(repo / "memory" / "teams"), "--at", "v1"])
    assert later.exit_code == 2
    assert later.stderr.startswith("Error (git_error): 'memory/teams' did not exist at 'v1' (commit ")
    assert later.stderr.rstrip().endswith("; try a later revision")
    for impossible in ("2026-13-45", "2026-02-30"):
        wrong = runner.invoke(cli, ["query", "sick days", "--root", str(repo / "memory"), "--at", impossible])
        assert wrong.exit_code == 2 and f"'{impossible}' is not a date; give YYYY-MM-DD" in wrong.stderr
    early = runner.invoke(cli, ["query", "sick days", "--root", str(repo / "memory"), "--at", "2020-01-01"])
    assert early.exit_code == 2 and "no commit on or before 2020-01-01" in early.stderr
    plain = tmp_path / "plain"
    write(plain / "a.md", "# A\n\nText.\n")
    outside = runner.invoke(cli, ["query", "text", "--root", str(plain), "--at", "v1"])
    assert outside.exit_code == 2 and "is not inside a git repository" in outside.stderr


def test_reading_the_status_never_writes_the_index_so_the_users_git_commands_never_find_it_locked(
    repo: Path,
) -> None:
    # A file touched but not changed: a plain `git status` refreshes the index (under .git/index.lock) to
    # record its new stat data, and a `git pull` at that moment fails with "index.lock: File exists".
    leave = repo / "memory" / "policies" / "leave.md"
    index = repo / ".git" / "index"
    os.utime(leave, ns=(leave.stat().st_mtime_ns + 10**9,) * 2)
    before = index.stat().st_mtime_ns, index.read_bytes()
    assert gitinfo.dirty(repo, "memory") == frozenset()
    assert (index.stat().st_mtime_ns, index.read_bytes()) == before
    git(repo, "status", "--porcelain")  # the plain command does write it: the check above can fail
    assert index.read_bytes() != before[1]


def test_a_shallow_clone_is_named_in_the_warnings_until_it_is_unshallowed(repo: Path, tmp_path: Path) -> None:
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow))
    leave = "policies/leave.md"
    memory = Memory.open(shallow / "memory", Settings.from_env())
    assert [w for w in memory.warnings if "shallow clone" in w] == [
        f"the git repository at {shallow} is a shallow clone: created dates are those of its oldest fetched "
        "commit; run `git fetch --unshallow` for true dates"
    ]
    assert memory.provenance(leave).created_at == "2026-02-20T15:30:00+00:00"  # type: ignore[union-attr]
    result = Retriever(shallow / "memory").retrieve("How many sick days do employees earn?")
    assert any("shallow clone" in w for w in result.structured["diagnostics"]["warnings"])
    memory.refresh()
    assert sum("shallow clone" in w for w in memory.warnings) == 1  # named once, not once per refresh
    git(shallow, "fetch", "-q", "--unshallow")  # HEAD does not move, yet the cached history is stale
    memory.refresh()
    assert not any("shallow clone" in w for w in memory.warnings)
    assert memory.provenance(leave).created_at == "2026-01-10T09:00:00+00:00"  # type: ignore[union-attr]
    reopened = Memory.open(shallow / "memory", Settings.from_env())
    assert not any("shallow clone" in w for w in reopened.warnings)
    assert not any("shallow clone" in w for w in Memory.open(repo / "memory", Settings.from_env()).warnings)


def test_a_shallow_clone_read_at_a_revision_is_named_in_the_warnings(repo: Path, tmp_path: Path) -> None:
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow))
    memory = Memory.at_revision(shallow / "memory", Settings.from_env(), "HEAD")
    assert any("is a shallow clone" in w for w in memory.warnings)


def test_a_renamed_file_keeps_its_original_created_date(repo: Path) -> None:
    git(repo, "mv", "memory/policies/leave.md", "memory/policies/time-off.md")
    git(repo, "commit", "-q", "-m", "rename", author="Cy Example", date="2026-03-01T10:00:00+00:00")
    git(repo, "mv", "memory/policies/time-off.md", "memory/time off \"policy\".md")  # a name git would quote
    write(repo / "memory" / "time off \"policy\".md", LEAVE.format(n=13))  # a rename with an edit
    git(repo, "commit", "-q", "-am", "move and edit", author="Di Example", date="2026-03-05T10:00:00+00:00")
    history = gitinfo.history(repo, "memory")
    moved = history.provenance('time off "policy".md', frozenset())
    assert (moved.created_at, moved.valid_at, moved.author) == (
        "2026-01-10T09:00:00+00:00",  # the original file's first commit, through both renames
        "2026-03-05T10:00:00+00:00",  # the last commit touching the current path
        "Di Example",
    )
    memory = Memory.open(repo / "memory", Settings.from_env())
    assert memory.provenance('time off "policy".md').created_at == "2026-01-10T09:00:00+00:00"  # type: ignore[union-attr]


def test_a_name_reused_after_a_rename_dates_the_new_file_from_its_own_first_commit(repo: Path) -> None:
    git(repo, "mv", "memory/policies/leave.md", "memory/policies/time-off.md")
    git(repo, "commit", "-q", "-m", "rename", date="2026-03-01T10:00:00+00:00")
    write(repo / "memory" / "policies" / "leave.md", "# Leave\n\nSee the time-off policy.\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "a new leave.md", date="2026-03-05T10:00:00+00:00")
    history = gitinfo.history(repo, "memory")
    assert history.provenance("policies/time-off.md", frozenset()).created_at == "2026-01-10T09:00:00+00:00"
    reused = history.provenance("policies/leave.md", frozenset())
    assert (reused.created_at, reused.valid_at) == ("2026-03-05T10:00:00+00:00", "2026-03-05T10:00:00+00:00")


def test_a_rename_on_a_merged_branch_keeps_the_original_created_date(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    git(repo, "mv", "memory/teams/platform.md", "memory/teams/platform-team.md")
    git(repo, "commit", "-q", "-m", "rename on a branch", date="2026-03-01T10:00:00+00:00")
    git(repo, "checkout", "-q", "main")
    write(repo / "memory" / "policies" / "leave.md", LEAVE.format(n=15))
    git(repo, "commit", "-q", "-am", "main moves on", date="2026-03-02T10:00:00+00:00")
    git(repo, "merge", "-q", "--no-edit", "feature", date="2026-03-03T10:00:00+00:00")
    moved = gitinfo.history(repo, "memory").provenance("teams/platform-team.md", frozenset())
    assert (moved.created_at, moved.valid_at) == ("2026-02-20T15:30:00+00:00", "2026-03-01T10:00:00+00:00")

@pytest.mark.parametrize("rev", ["HEAD", "v1", "main", "2026-01-01", "2999-01-01"])
def test_a_revision_in_a_repository_without_commits_says_to_commit_first(tmp_path: Path, rev: str) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "main")
    write(empty / "memory" / "a.md", "# A\n\nText.\n")
    git(empty, "add", ".")  # added, never committed
    result = CliRunner().invoke(cli, ["query", "text", "--root", str(empty / "memory"), "--at", rev])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error (git_error): the git repository at {empty} has no commits yet")
    assert "commit the files first" in result.stderr and "drop --at" in result.stderr
    assert "usage" not in result.stderr.lower()


def test_a_memory_read_at_a_revision_stores_its_statements_vectors(repo: Path) -> None:
    memory = Memory.at_revision(repo / "memory", Settings.from_env(), "HEAD")
    units = [u for s in memory.document("policies/leave.md").sections for u in s.units]
    assert units and all(len(u.vector) == 256 + 4 for u in units)


def test_a_memory_read_at_a_revision_stores_its_statements_terms(repo: Path) -> None:
    memory = Memory.at_revision(repo / "memory", Settings.from_env(), "HEAD")
    units = [u for s in memory.document("policies/leave.md").sections for u in s.units]
    assert units and all(u.terms and u.terms == tuple(analyzer.terms(u.text)) for u in units if u.text.strip())


def test_a_committed_symlink_is_no_document_at_a_revision(repo: Path) -> None:
    # a link's blob is its target's name: read as text, "/etc/passwd" had been a document of its own
    (repo / "memory" / "passwd.md").symlink_to("/etc/passwd")
    (repo / "memory" / "leave-link.md").symlink_to("policies/leave.md")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "links")
    memory = Memory.at_revision(repo / "memory", Settings.from_env(), "HEAD")
    assert sorted(memory.state.catalog) == ["policies/leave.md", "teams/platform.md"]


def test_a_root_named_like_git_pathspec_magic_is_read_as_its_folder(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo / ":(top)mem" / "leave.md", LEAVE.format(n=10))
    write(repo / "other.md", "# Outside the memory\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "first")
    memory = Memory.at_revision(repo / ":(top)mem", Settings.from_env(), "HEAD")
    assert sorted(memory.state.catalog) == ["leave.md"]
    assert Memory.open(repo / ":(top)mem", Settings.from_env()).when(memory.document("leave.md")).created_at


def test_a_repository_whose_folder_name_is_not_utf8_keeps_its_memory_and_provenance(tmp_path: Path) -> None:
    top = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9"))
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    write(top / "memory" / "policies" / "leave.md", LEAVE.format(n=10))
    git(top, "add", ".")
    git(top, "commit", "-q", "-m", "first")

    assert gitinfo.find_repo(top / "memory") == top
    result = Retriever(top / "memory", Settings()).retrieve("How many sick days do employees earn?")
    assert result.facts[0].statement == "Employees earn 10 sick days per year."
    assert result.facts[0].when.author == "Alice Example"


def _parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The commits whose files are parsed from here on (``snapshot.snapshot_changes`` calls)."""
    from retriever.memory import snapshot

    parsed: list[str] = []
    real = snapshot.snapshot_changes

    def counting(snap: gitinfo.GitSnapshot, *args: Any, **kwargs: Any) -> Any:
        parsed.append(snap.commit)
        return real(snap, *args, **kwargs)

    monkeypatch.setattr(snapshot, "snapshot_changes", counting)
    return parsed


def test_a_revision_asked_again_is_loaded_as_kept_not_parsed_again(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every --at had parsed the whole tree again: 7.3 s a question on the 883-file handbook, 0.8 s now.
    parsed = _parses(monkeypatch)
    first = Memory.at_revision(repo / "memory", Settings.from_env(), "v1")
    again = Memory.at_revision(repo / "memory", Settings.from_env(), "v1")
    assert len(parsed) == 1 and again.stats.parsed == 0
    assert sorted(again.state.catalog) == sorted(first.state.catalog) == ["policies/leave.md"]
    assert "Employees earn 10 sick days" in again.document("policies/leave.md").sections[-1].text
    # another size limit may skip other files: parsed anew
    Memory.at_revision(repo / "memory", Settings.from_env(max_file_bytes=10), "v1")
    assert len(parsed) == 2


def test_a_new_revision_parses_only_the_files_a_kept_revision_holds_at_another_blob(repo: Path) -> None:
    # Asking at one revision after another had parsed the whole tree each time.
    write(repo / "memory" / "teams" / "platform.md", "# Platform\n\nThe platform team runs CI and on-call.\n")
    git(repo, "commit", "-q", "-am", "third")
    Memory.at_revision(repo / "memory", Settings.from_env(), "HEAD~1")
    later = Memory.at_revision(repo / "memory", Settings.from_env(), "HEAD")
    assert later.stats.parsed == 1  # platform.md; leave.md is taken as HEAD~1 parsed it
    assert sorted(later.state.catalog) == ["policies/leave.md", "teams/platform.md"]
    assert "runs CI and on-call" in later.document("teams/platform.md").sections[-1].text
    facts = Retriever(repo / "memory", Settings.from_env(), at="HEAD").retrieve("sick days").facts
    assert facts[0].statement == "Employees earn 12 sick days per year."


def test_a_revision_takes_the_files_the_working_trees_cache_holds_at_the_same_bytes(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first question at a revision had parsed every file: 6.2 s on the 883-file handbook, ~2 s now.
    write(repo / "memory" / "teams" / "platform.md", "# Platform\n\nEdited, not committed.\n")
    Memory.open(repo / "memory", Settings.from_env())  # the working tree indexed and cached: one file edited
    at_head = Memory.at_revision(repo / "memory", Settings.from_env(), "HEAD")
    assert at_head.stats.parsed == 1  # platform.md, which the cache holds as edited; leave.md is the cache's
    monkeypatch.setenv("RETRIEVER_STATE_DIR", str(tmp_path / "elsewhere"))  # no cache: every file parsed
    fresh = Memory.at_revision(repo / "memory", Settings.from_env(), "HEAD")
    assert fresh.stats.parsed == 2
    for path in ("policies/leave.md", "teams/platform.md"):
        assert at_head.document(path) == fresh.document(path)


def test_only_the_last_two_revisions_are_kept_and_a_corrupt_one_is_parsed_again(
    repo: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from retriever.config import index_cache_dir

    parsed = _parses(monkeypatch)
    for rev in ("v1", "HEAD", "HEAD~1"):  # HEAD~1 is v1's commit again
        Memory.at_revision(repo / "memory", Settings.from_env(), rev)
    folder = index_cache_dir(Settings.from_env(), repo / "memory")
    kept = sorted(folder.glob("at-*.pkl"))
    assert len(kept) == 2 and len(parsed) == 2  # v1's commit was kept when asked again
    for path in kept:
        path.write_bytes(b"\x80\x05\x95")
    Memory.at_revision(repo / "memory", Settings.from_env(), "HEAD")
    assert len(parsed) == 3 and "the saved revision in" in caplog.text


def test_a_damaged_record_of_the_working_trees_cache_is_let_go_and_the_revisions_file_parsed(repo: Path) -> None:
    # It had been decoded with no fallback: the file was skipped at the revision, and the skip kept for the commit.
    import sqlite3

    from retriever.config import index_cache_dir

    Memory.open(repo / "memory", Settings.from_env())
    database = index_cache_dir(Settings.from_env(), repo / "memory") / "records.sqlite"
    with sqlite3.connect(database) as db:
        db.execute("UPDATE files SET record = ? WHERE rel_path = 'policies/leave.md'", (b"\x80\x05\x95",))
    at_head = Memory.at_revision(repo / "memory", Settings.from_env(), "HEAD")
    assert at_head.skipped == [] and "12 sick days" in at_head.document("policies/leave.md").sections[-1].text
