"""Supersession links over a whole memory: which lead back to where they start, and which records they leave
superseded."""

from __future__ import annotations

from conftest import TreeFactory
from hypothesis import given
from hypothesis import strategies as st

from retriever import Settings
from retriever.memory import supersession
from retriever.memory.memory import Memory


def _record(year: int, link: str = "") -> str:
    return f"---\ntitle: Engine decision {year}\n{link}---\n# Engine decision {year}\n\nWe use engine {year}.\n"


def _superseded(memory: Memory) -> dict[str, bool]:
    return {path: memory.when(memory.document(path)).superseded for path in sorted(memory.state.catalog)}


def test_records_on_a_cycle_are_not_superseded_and_a_record_with_a_true_successor_is(make_tree: TreeFactory) -> None:
    files = {
        "a.md": _record(2024, "superseded_by: Engine decision 2025\n"),
        "b.md": _record(2025, "superseded_by: Engine decision 2026\n"),
        "c.md": _record(2026, "superseded_by: Engine decision 2024\n"),  # the slip that closes the cycle
        "d.md": _record(2023, "superseded_by: [Engine decision 2024, Engine decision 2027]\n"),
        "e.md": _record(2022, "superseded_by: Engine decision 2025\nstatus: superseded\n"),
    }
    memory = Memory.open(make_tree(files), Settings.from_env())
    assert memory.supersession_cycles() == {("a.md", "b.md"), ("b.md", "c.md"), ("c.md", "a.md")}
    # d names one successor on no cycle (a's link from d is not on it) and one that resolves to nothing;
    # e says so in its status
    assert _superseded(memory) == {"a.md": False, "b.md": False, "c.md": False, "d.md": True, "e.md": True}


def test_mending_the_slip_makes_the_cycle_a_chain_after_a_refresh(make_tree: TreeFactory) -> None:
    root = make_tree(
        {
            "a.md": _record(2024, "superseded_by: Engine decision 2025\n"),
            "b.md": _record(2025, "superseded_by: Engine decision 2024\n"),
        }
    )
    memory = Memory.open(root, Settings.from_env())
    assert _superseded(memory) == {"a.md": False, "b.md": False}
    (root / "b.md").write_text(_record(2025, "supersedes: Engine decision 2024\n"), encoding="utf-8")
    memory.refresh()
    assert memory.supersession_cycles() == frozenset()
    assert _superseded(memory) == {"a.md": True, "b.md": False}


def test_written_reads_both_keys_and_passes_over_what_names_nothing() -> None:
    front_matter = {"superseded_by": ["B", 7, {"x": 1}, " "], "supersedes": "A", "title": "C"}
    assert supersession.written(front_matter) == (("superseded_by", "B"), ("superseded_by", "7"), ("supersedes", "A"))
    assert supersession.written(front_matter, numbers=False) == (("superseded_by", "B"), ("supersedes", "A"))
    resolve = {"a": "a.md", "b": "b.md", "c": "c.md"}.get
    names = (("superseded_by", "b"), ("supersedes", "a"), ("supersedes", "c"))  # the last names itself
    found = list(supersession.resolved("c.md", names, resolve))
    assert found == [(("c.md", "b.md"), "superseded_by", "b"), (("a.md", "c.md"), "supersedes", "a")]


def test_acyclic_keeps_a_chain_and_leaves_out_every_link_of_a_cycle() -> None:
    assert supersession.acyclic([("a", "b"), ("b", "c")]) == [("a", "b"), ("b", "c")]
    links = [("a", "b"), ("b", "c"), ("c", "a"), ("x", "a"), ("c", "y")]
    assert supersession.acyclic(links) == [("x", "a"), ("c", "y")]
    clique = [(f"d{i}", f"d{j}") for i in range(60) for j in range(60) if i != j]
    assert supersession.acyclic(clique) == []


def _reaches(links: list[tuple[str, str]], start: str, goal: str) -> bool:
    todo, seen = [start], {start}
    while todo:
        node = todo.pop()
        for old, new in links:
            if old == node and new not in seen:
                if new == goal:
                    return True
                seen.add(new)
                todo.append(new)
    return False


@given(st.lists(st.tuples(st.sampled_from("abcdefg"), st.sampled_from("abcdefg")), max_size=20))
def test_acyclic_drops_exactly_the_links_a_chain_leads_back_from(links: list[tuple[str, str]]) -> None:
    kept = supersession.acyclic(links)
    assert kept == [link for link in links if link in kept]  # a subsequence, in the links' order
    for old, new in links:
        on_cycle = old == new or _reaches(links, new, old)
        assert ((old, new) in kept) is not on_cycle
    assert not any(_reaches(kept, new, old) for old, new in kept)  # what is kept has no cycle
