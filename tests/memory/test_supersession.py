"""Supersession links over a whole memory: which lead back to where they start, and which records they leave
superseded."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import TreeFactory
from hypothesis import given
from hypothesis import strategies as st

from retriever import Settings
from retriever.memory import supersession
from retriever.memory.cache import IndexCache
from retriever.memory.memory import Memory


def _record(year: int, link: str = "") -> str:
    return f"---\ntitle: Engine decision {year}\n{link}---\n# Engine decision {year}\n\nWe use engine {year}.\n"


def _superseded(memory: Memory) -> dict[str, bool]:
    return {path: memory.when(memory.document(path)).superseded for path in sorted(memory.state.catalog)}


def test_records_on_a_cycle_are_not_superseded_and_a_record_with_a_true_successor_is(make_tree: TreeFactory) -> None:
    files = {
        "a.md": _record(2024, "superseded_by: Engine decision 2025\n"),
        "b.md": _record(2025, "superseded_by: Engine decision 2026\n"),
        "c.md": _record(2026, "superseded_by: [Engine decision 2024, Engine decision 2030]\n"),  # 2024: the slip
        "z.md": _record(2030),
        "d.md": _record(2023, "superseded_by: [Engine decision 2024, Engine decision 2027]\n"),  # 2027: no such record
        "e.md": _record(2022, "superseded_by: Engine decision 2025\nstatus: superseded\n"),
        "f.md": _record(2021, "superseded_by: [Engine decision 2025, Engine decision 2023]\n"),
        "g.md": _record(2020, "superseded_by: 7.5\n"),  # no name at all, yet it says it was superseded
        "h.md": _record(2019, "superseded_by: Engine decision 2019\n"),  # itself: passed over, as a name of nothing
        "i.md": _record(2018, "superseded_by: Engine decision 2019\n"),
        "j.md": _record(2017, "superseded_by: Engine decision 2016\nstatus: superseded\n"),  # its status says so
        "k.md": _record(2016, "superseded_by: Engine decision 2017\n"),
    }
    memory = Memory.open(make_tree(files), Settings.from_env())
    cycle = {("a.md", "b.md"), ("b.md", "c.md"), ("c.md", "a.md"), ("j.md", "k.md"), ("k.md", "j.md")}
    assert memory.supersession_cycles() == cycle
    # c names one successor over a link on the cycle and a true one; d, e, f and i name successors over links that
    # lead into a cycle or to a record that names itself, not round a cycle (d's second name resolves to nothing)
    on_cycle = {"a.md": False, "b.md": False, "c.md": True, "j.md": True, "k.md": False}
    others = {"d.md": True, "e.md": True, "f.md": True, "g.md": True, "h.md": True, "i.md": True, "z.md": False}
    assert _superseded(memory) == {**on_cycle, **others}


def test_a_record_a_later_ones_supersedes_names_is_superseded_without_a_word_of_its_own(make_tree: TreeFactory) -> None:
    files = {
        "a.md": _record(2024),  # nothing written here: the team added b and c and left a as it was
        "b.md": _record(2025, "supersedes: Engine decision 2024\n"),
        "c.md": _record(2026, "supersedes: Engine decision 2025\n"),
        "x.md": _record(2020, "supersedes: Engine decision 2021\n"),  # x and y name each other: a cycle
        "y.md": _record(2021, "supersedes: Engine decision 2020\n"),
    }
    memory = Memory.open(make_tree(files), Settings.from_env())
    assert memory.superseded_records() == {"a.md", "b.md"}
    assert _superseded(memory) == {"a.md": True, "b.md": True, "c.md": False, "x.md": False, "y.md": False}


def test_names_past_the_first_of_a_key_say_nothing(make_tree: TreeFactory) -> None:
    beyond = ", ".join(["Engine decision 2025"] * supersession.MAX_NAMES + ["Engine decision 2030"])
    files = {
        "a.md": _record(2024, f"superseded_by: [{beyond}]\n"),  # 2030, a true successor, comes too late
        "b.md": _record(2025, "superseded_by: Engine decision 2024\n"),
        "z.md": _record(2030),
    }
    memory = Memory.open(make_tree(files), Settings.from_env())
    assert memory.supersession_cycles() == {("a.md", "b.md"), ("b.md", "a.md")}
    assert _superseded(memory) == {"a.md": False, "b.md": False, "z.md": False}


def test_a_shared_name_means_the_first_document_in_path_order_whatever_the_refreshes(make_tree: TreeFactory) -> None:
    fillers = {f"f{i:02}.md": _record(1900 + i) for i in range(60)}  # so that a refresh updates, not rebuilds
    root = make_tree(
        {
            **fillers,
            "a.md": _record(2024, "superseded_by: Engine decision 2025\n"),
            "b1.md": _record(2025, "superseded_by: Engine decision 2024\n"),
            "b2.md": _record(2025),  # the same title: "Engine decision 2025" is b1's
        }
    )
    memory = Memory.open(root, Settings.from_env())
    assert memory.supersession_cycles() == {("a.md", "b1.md"), ("b1.md", "a.md")}
    (root / "b1.md").write_text(_record(2025, "superseded_by: Engine decision 2024\n") + "More.\n", encoding="utf-8")
    assert not memory.refresh().rebuilt  # b1 leaves the catalog and comes back last
    assert memory.resolve("Engine decision 2025") == "b1.md"
    assert memory.supersession_cycles() == {("a.md", "b1.md"), ("b1.md", "a.md")}


def test_a_record_of_front_matter_alone_mended_changes_the_cycles_after_a_refresh(make_tree: TreeFactory) -> None:
    root = make_tree(
        {
            "a.md": _record(2024, "superseded_by: Engine decision 2025\n"),
            "b.md": "---\ntitle: Engine decision 2025\nsuperseded_by: Engine decision 2024\n---\n",  # no section
        }
    )
    memory = Memory.open(root, Settings.from_env())
    before = memory.version
    assert memory.supersession_cycles() == {("a.md", "b.md"), ("b.md", "a.md")}
    (root / "b.md").write_text("---\ntitle: Engine decision 2025\nsupersedes: Engine decision 2024\n---\n")
    memory.refresh()
    assert memory.version != before
    assert memory.supersession_cycles() == frozenset()
    assert memory.when(memory.document("a.md")).superseded


def test_only_the_first_names_of_a_key_are_read() -> None:
    many = [f"Record {i}" for i in range(supersession.MAX_NAMES + 5)]
    assert len(supersession.written({"superseded_by": many, "supersedes": many})) == 2 * supersession.MAX_NAMES


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
    resolve = {"a": "a.md", "b": "b.md", "c": "c.md"}.get
    names = (("superseded_by", "b"), ("supersedes", "a"), ("supersedes", "c"), ("supersedes", "x"))
    found = list(supersession.resolved("c.md", names, resolve))  # c names itself, and x is no document
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


def test_a_refresh_that_goes_on_without_its_cache_changes_the_version_and_the_cycles(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree(
        {
            "a.md": _record(2024, "superseded_by: Engine decision 2025\n"),
            "b.md": _record(2025, "superseded_by: Engine decision 2024\n"),
        }
    )
    memory = Memory.open(root, Settings.from_env())
    before = memory.version
    assert memory.supersession_cycles() == {("a.md", "b.md"), ("b.md", "a.md")}
    (root / "b.md").write_text(_record(2025, "supersedes: Engine decision 2024\n") + "More.\n", encoding="utf-8")

    def full(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(IndexCache, "put_encoded", full)  # before the new index is swapped in
    memory.refresh()
    assert memory.cache is None  # it went on in memory
    assert memory.version != before
    assert memory.supersession_cycles() == frozenset()
    assert memory.when(memory.document("a.md")).superseded


def test_a_record_superseded_by_its_status_or_by_no_name_needs_no_cycles_worked_out(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {
        "a.md": _record(2024, "status: superseded\nsuperseded_by: Engine decision 2025\n"),
        "b.md": _record(2025, "superseded_by: 7.5\n"),
        "c.md": _record(2026, "supersedes: Engine decision 2025\n"),
    }
    memory = Memory.open(make_tree(files), Settings.from_env())
    worked: list[int] = []
    real = supersession.cycles
    monkeypatch.setattr(supersession, "cycles", lambda *args: worked.append(1) or real(*args))
    assert _superseded(memory) == {"a.md": True, "b.md": True, "c.md": False}
    assert worked == []


def test_the_words_teams_write_for_supersession_are_read_as_its_keys(make_tree: TreeFactory) -> None:
    # The author review: "replaces:", "replaced_by:" and "status: replaced" had been read by nothing.
    files = {
        "a.md": _record(2023, "status: replaced\n"),
        "b.md": _record(2024, "replaced_by: Engine decision 2025\n"),
        "c.md": _record(2025, "replaces: Engine decision 2024\n"),
        "d.md": _record(2026, "status: deprecated\n"),  # no longer advised, not replaced: nothing changes
    }
    memory = Memory.open(make_tree(files), Settings.from_env())
    assert _superseded(memory) == {"a.md": True, "b.md": True, "c.md": False, "d.md": False}
    assert supersession.written({"replaces": "A", "obsoleted_by": "B"}) == (("superseded_by", "B"), ("supersedes", "A"))


def test_a_supersession_name_written_as_a_wiki_link_is_read(make_tree: TreeFactory) -> None:
    files = {
        "decisions/old.md": _record(2024),
        "decisions/new.md": _record(2025, 'supersedes: "[[decisions/old#Context|the 2024 decision]]"\n'),
    }
    memory = Memory.open(make_tree(files), Settings.from_env())
    assert _superseded(memory) == {"decisions/new.md": False, "decisions/old.md": True}


def test_a_supersession_name_written_as_a_path_from_the_file_is_read(make_tree: TreeFactory) -> None:
    # The author review: links are written from the file ("../decisions/x.md"); relation paths had been root-only.
    files = {
        "decisions/old.md": _record(2024),
        "decisions/new/engine.md": _record(2025, "supersedes: ../old.md\n"),
    }
    memory = Memory.open(make_tree(files), Settings.from_env())
    assert _superseded(memory) == {"decisions/new/engine.md": False, "decisions/old.md": True}
