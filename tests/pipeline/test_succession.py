"""Superseded records among the documents read: how far each is scaled, for a chain of three records too."""

from __future__ import annotations

import pytest
from conftest import TreeFactory

from retriever import Settings
from retriever.memory.memory import Memory
from retriever.pipeline import succession

# A chain's files named so that their names' order is not the chain's, and its links written either way.
CHAINS = [
    # (oldest, middle, newest), how each of the two links is written: on the older record or on the newer one
    (("a.md", "b.md", "c.md"), ("superseded_by", "superseded_by")),
    (("c.md", "a.md", "b.md"), ("supersedes", "supersedes")),
    (("b.md", "c.md", "a.md"), ("superseded_by", "supersedes")),
    (("c.md", "b.md", "a.md"), ("supersedes", "superseded_by")),
]


def _record(year: int, link: str = "") -> str:
    return f"---\ntitle: Engine decision {year}\n{link}---\n# Engine decision {year}\n\nWe use engine {year}.\n"


def _chain(make_tree: TreeFactory, names: tuple[str, str, str], ways: tuple[str, str]) -> Memory:
    """Three records, 2024 superseded by 2025 superseded by 2026, in the files ``names`` (oldest first)."""
    links = {name: "" for name in names}
    for (older, newer), way in zip(((0, 1), (1, 2)), ways, strict=True):
        if way == "superseded_by":
            links[names[older]] += f"superseded_by: Engine decision {2024 + newer}\n"
        else:
            links[names[newer]] += f"supersedes: Engine decision {2024 + older}\n"
    files = {name: _record(2024 + i, links[name]) for i, name in enumerate(names)}
    return Memory.open(make_tree(files), Settings.from_env())


def _ranked(best: dict[str, float], scale: dict[str, float]) -> list[str]:
    return sorted(best, key=lambda doc: -best[doc] * scale.get(doc, 1.0))


@pytest.mark.parametrize(("names", "ways"), CHAINS)
def test_in_a_chain_of_three_records_the_newest_ranks_first_and_the_oldest_last(
    make_tree: TreeFactory, names: tuple[str, str, str], ways: tuple[str, str]
) -> None:
    oldest, middle, newest = names
    memory = _chain(make_tree, names, ways)
    best = {oldest: 1.0, middle: 0.9, newest: 0.5}  # the question's words favour the oldest record
    scale = succession.scales(best, memory)
    assert _ranked(best, scale) == [newest, middle, oldest]
    assert best[middle] * scale[middle] == pytest.approx(0.95 * 0.5)
    assert best[oldest] * scale[oldest] == pytest.approx(0.95 * 0.95 * 0.5)


@pytest.mark.parametrize(("names", "ways"), CHAINS)
def test_asked_what_held_before_a_chain_of_three_turns_whole_the_oldest_first(
    make_tree: TreeFactory, names: tuple[str, str, str], ways: tuple[str, str]
) -> None:
    oldest, middle, newest = names
    memory = _chain(make_tree, names, ways)
    best = {oldest: 0.6, middle: 0.7, newest: 1.0}  # the question is named after the newest record
    scale = succession.scales(best, memory, earlier=True)
    assert _ranked(best, scale) == [oldest, middle, newest]
    assert best[oldest] * scale[oldest] == pytest.approx(1.0)


def test_asked_what_held_before_two_records_swap_places(make_tree: TreeFactory) -> None:
    memory = _chain(make_tree, ("a.md", "b.md", "c.md"), ("superseded_by", "superseded_by"))
    scale = succession.scales({"b.md": 0.6, "c.md": 1.0}, memory, earlier=True)
    assert scale == {"b.md": pytest.approx(1.0 / 0.6), "c.md": pytest.approx(0.95)}


def test_links_that_lead_back_are_left_out_and_other_links_still_count(make_tree: TreeFactory) -> None:
    files = {
        "a.md": _record(2024, "superseded_by: Engine decision 2025\n"),
        "b.md": _record(2025, "superseded_by: Engine decision 2024\n"),  # a slip: each the other's successor
        "c.md": _record(2026),
        "d.md": _record(2027, "supersedes: Engine decision 2026\n"),
    }
    memory = Memory.open(make_tree(files), Settings.from_env())
    best = {"a.md": 1.0, "b.md": 0.9, "c.md": 0.8, "d.md": 0.5}
    for earlier in (False, True):
        scale = succession.scales(best, memory, earlier=earlier)
        assert "a.md" not in scale and "b.md" not in scale
    assert succession.scales(best, memory) == {"c.md": pytest.approx(0.95 * 0.5 / 0.8)}


def test_a_question_reading_two_records_of_a_three_record_cycle_orders_neither_by_it(make_tree: TreeFactory) -> None:
    files = {  # 2024 → 2025 → 2026, and a slip on 2026 naming 2024 as its successor
        "a.md": _record(2024, "superseded_by: Engine decision 2025\n"),
        "b.md": _record(2025, "superseded_by: Engine decision 2026\n"),
        "c.md": _record(2026, "superseded_by: Engine decision 2024\n"),
    }
    memory = Memory.open(make_tree(files), Settings.from_env())
    for earlier in (False, True):
        assert succession.scales({"a.md": 1.0, "b.md": 0.9}, memory, earlier=earlier) == {}


def test_predecessors_leave_out_a_cycle_and_keep_a_record_outside_it(make_tree: TreeFactory) -> None:
    files = {
        "a.md": _record(2024, "supersedes: Engine decision 2025\n"),  # a slip: a cycle of three records,
        "b.md": _record(2025, "supersedes: Engine decision 2023\n"),  # each naming the one after it as replaced
        "e.md": _record(2023, "supersedes: Engine decision 2024\n"),
        "c.md": _record(2026),
        "d.md": _record(2027, "supersedes: [Engine decision 2026, Engine decision 2025]\n"),
    }
    memory = Memory.open(make_tree(files), Settings.from_env())
    assert succession.predecessors("d.md", memory) == ["c.md", "b.md"]
    assert [succession.predecessors(path, memory) for path in ("a.md", "b.md", "e.md")] == [[], [], []]
