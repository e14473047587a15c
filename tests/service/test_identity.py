"""Which memory a server answers from: sessions kept under a name every replica of that memory shares."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures import ACME
from git_memory import clone, git, origin_with

from retriever import Retriever, Settings
from retriever.service.identity import Identity, memory_identity, normalized_remote
from retriever.service.service import MemoryService
from retriever.service.stores.sqlite import SQLiteStore
from retriever.service.tools import TOOL_NAME


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/acme/memory.git",
        "https://deploy:s3cret@GitHub.com/acme/memory",
        "ssh://git@github.com/acme/memory.git/",
        "git@github.com:acme/memory.git",
        "github.com:acme/memory",
    ],
)
def test_a_remote_names_the_same_memory_however_it_is_written(url: str) -> None:
    assert normalized_remote(url) == "github.com/acme/memory"


@pytest.mark.parametrize("url", ["/srv/git/memory.git", "file:///srv/git/memory/", "/srv/git/memory"])
def test_a_local_remote_is_named_by_its_path(url: str) -> None:
    assert normalized_remote(url) == "/srv/git/memory"


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/acme/other.git",
        "https://gitlab.com/acme/memory.git",
        "git@github.com:acme/memory-staging.git",
    ],
)
def test_another_repository_is_another_memory(url: str) -> None:
    assert normalized_remote(url) != "github.com/acme/memory"


def test_a_clone_is_named_by_its_remote_and_folder_and_memory_id_overrides_both(tmp_path: Path) -> None:
    origin = origin_with(tmp_path, ACME, prefix="memory/")
    one, two = clone(origin, tmp_path / "a" / "checkout"), clone(origin, tmp_path / "b" / "elsewhere")

    first = memory_identity(one / "memory", Settings())
    remote = str(origin).removesuffix(".git")
    assert first == memory_identity(two / "memory", Settings()) == Identity("git remote", f"{remote}/memory")
    assert memory_identity(one, Settings()) == Identity("git remote", remote)  # the repository's top: another tree
    named = memory_identity(one / "memory", Settings(memory_id="acme-handbook"))
    assert named == Identity("memory_id", "acme-handbook")
    git(two, "remote", "remove", "origin")
    assert memory_identity(two / "memory", Settings()) == Identity("path", str((two / "memory").resolve()))


def test_two_clones_of_one_memory_at_different_paths_share_a_clients_session(tmp_path: Path) -> None:
    origin = origin_with(tmp_path, ACME)
    machine_a, machine_b = clone(origin, tmp_path / "a" / "memory"), clone(origin, tmp_path / "srv" / "mem")
    store = tmp_path / "shared.sqlite"  # one store, as a shared Redis would be
    first = MemoryService(Retriever(machine_a, Settings()), SQLiteStore(store), watch=False)
    second = MemoryService(Retriever(machine_b, Settings()), SQLiteStore(store), watch=False)
    try:
        first.call_tool(TOOL_NAME, {"prompt": "Tell me about the billing migration project", "session_id": "t-1"})
        assert first.store.flush()
        follow = second.call_tool(TOOL_NAME, {"prompt": "and who owns it?", "session_id": "t-1"})
    finally:
        first.close()
        second.close()

    assert "billing migration" in follow["structuredContent"]["triage"]["rewritten_query"]


def test_a_memory_id_keeps_two_memories_from_the_same_remote_apart(tmp_path: Path) -> None:
    origin = origin_with(tmp_path, ACME)
    one, two = clone(origin, tmp_path / "one"), clone(origin, tmp_path / "two")
    store = tmp_path / "shared.sqlite"
    first = MemoryService(Retriever(one, Settings(memory_id="prod")), SQLiteStore(store), watch=False)
    second = MemoryService(Retriever(two, Settings(memory_id="staging")), SQLiteStore(store), watch=False)
    try:
        first.call_tool(TOOL_NAME, {"prompt": "Tell me about the billing migration project", "session_id": "t-1"})
        assert first.store.flush()
        follow = second.call_tool(TOOL_NAME, {"prompt": "and who owns it?", "session_id": "t-1"})
    finally:
        first.close()
        second.close()

    assert follow["structuredContent"]["triage"]["rewritten_query"] == "and who owns it?"
