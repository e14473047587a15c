"""Superseded records among the documents read: how far each is scaled, for a chain of three records too."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from conftest import TreeFactory

from retriever import Settings
from retriever.memory.memory import Memory
from retriever.pipeline import succession


def _record(year: int, link: str) -> str:
    return f"---\ntitle: Engine decision {year}\n{link}---\n# Engine decision {year}\n\nWe use engine {year}.\n"


def _chain(make_tree: TreeFactory, reverse_links: bool = False) -> Memory:
    """a.md (2024) superseded by b.md (2025), superseded by c.md (2026); linked from the old records or the new."""
    if reverse_links:
        files = {
            "a.md": _record(2024, ""),
            "b.md": _record(2025, "supersedes: Engine decision 2024\n"),
            "c.md": _record(2026, "supersedes: Engine decision 2025\n"),
        }
    else:
        files = {
            "a.md": _record(2024, "superseded_by: Engine decision 2025\n"),
            "b.md": _record(2025, "superseded_by: Engine decision 2026\n"),
            "c.md": _record(2026, ""),
        }
    root: Path = make_tree(files)
    return Memory.open(root, Settings.from_env())


def _ranked(best: dict[str, float], scale: dict[str, float]) -> list[str]:
    return sorted(best, key=lambda doc: -best[doc] * scale.get(doc, 1.0))


@pytest.mark.parametrize("reverse_links", [False, True])
def test_in_a_chain_of_three_records_the_newest_ranks_first_and_the_oldest_last_in_any_order(
    make_tree: TreeFactory, reverse_links: bool
) -> None:
    memory = _chain(make_tree, reverse_links)
    values = {"a.md": 1.0, "b.md": 0.9, "c.md": 0.5}
    for order in itertools.permutations(values):
        best = {doc: values[doc] for doc in order}
        scale = succession.scales(best, memory)
        assert _ranked(best, scale) == ["c.md", "b.md", "a.md"]
        assert best["b.md"] * scale["b.md"] == pytest.approx(0.95 * 0.5)
        assert best["a.md"] * scale["a.md"] == pytest.approx(0.95 * 0.95 * 0.5)


@pytest.mark.parametrize("reverse_links", [False, True])
def test_asked_what_held_before_a_chain_of_three_turns_whole_the_oldest_first_in_any_order(
    make_tree: TreeFactory, reverse_links: bool
) -> None:
    memory = _chain(make_tree, reverse_links)
    values = {"a.md": 0.6, "b.md": 0.7, "c.md": 1.0}  # the question is named after the newest record
    for order in itertools.permutations(values):
        best = {doc: values[doc] for doc in order}
        scale = succession.scales(best, memory, earlier=True)
        assert _ranked(best, scale) == ["a.md", "b.md", "c.md"]
        assert best["a.md"] * scale["a.md"] == pytest.approx(1.0)


def test_asked_what_held_before_two_records_swap_places(make_tree: TreeFactory) -> None:
    memory = _chain(make_tree)
    scale = succession.scales({"b.md": 0.6, "c.md": 1.0}, memory, earlier=True)
    assert scale == {"b.md": pytest.approx(1.0 / 0.6), "c.md": pytest.approx(0.95)}
