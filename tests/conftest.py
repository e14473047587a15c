"""Shared fixtures: every test gets its own state folder; trees are built from dicts."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
COMPANY_CONTEXT = REPO / "company_context"
SHARED_SCHEMAS = REPO.parent / "shared" / "schemas"


@pytest.fixture(autouse=True)
def isolated_state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Caches and stores go to a temporary folder, never the user's; no ambient settings leak in."""
    state = tmp_path_factory.mktemp("state")
    for name in list(os.environ):
        if name.startswith("RETRIEVER_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("RETRIEVER_STATE_DIR", str(state))
    # Even code that ignores RETRIEVER_STATE_DIR (plain Settings()) must not reach the user's cache.
    monkeypatch.setenv("XDG_CACHE_HOME", str(state / "xdg-cache"))
    yield state


TreeFactory = Callable[[Mapping[str, str | bytes]], Path]


@pytest.fixture
def make_tree(tmp_path: Path) -> TreeFactory:
    """Write ``{relative path: text or bytes}`` under ``tmp_path/memory`` and return that root."""

    def build(files: Mapping[str, str | bytes]) -> Path:
        root = tmp_path / "memory"
        root.mkdir(exist_ok=True)
        for rel, content in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        return root

    return build
