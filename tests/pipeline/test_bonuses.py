"""Tests of ``pipeline.bonuses``: what a statement's form adds to its rank."""

from __future__ import annotations

import pytest
from conftest import TreeFactory
from hypothesis import given
from hypothesis import strategies as st

from retriever import Retriever, Settings
from retriever.pipeline import bonuses


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("What changed in Pulse 4.3?", ("4.3",)),
        ("Is v2.10.1 out, and 3.0?", ("2.10.1", "3.0")),
        ("Who approves a 12.5% discount?", ()),  # an amount, not a version
        ("Can I spend €2.5 on it?", ()),
        ("Ask about 4.3 and 4.3 again", ("4.3",)),
        ("Released on 2026-11-10", ()),
    ],
)
def test_versions_are_the_dotted_numbers_a_text_names_not_its_amounts(text: str, found: tuple[str, ...]) -> None:
    assert bonuses.versions(text) == found


@given(st.text(alphabet="0123456789.v%€ ", max_size=300))
def test_versions_are_few_and_each_a_dotted_number(text: str) -> None:
    found = bonuses.versions(text)
    assert len(found) <= 8
    assert all("." in v and v.replace(".", "").isdigit() for v in found)


_NOTES = (
    "---\ntitle: Pulse Release Notes\naliases: [Pulse 4.3.0, Pulse 4.2.1]\n---\n# Pulse Release Notes\n\n"
    "## 4.3.0 — 2026-11-10\n\n- Insights Copilot closed beta.\n- Report templates in Dutch.\n\n"
    "## 4.2.1 — 2026-10-02\n\n- Patch: a query-planner change in 4.2.0 made dashboards time out.\n"
)


def test_a_changelogs_section_headed_by_the_asked_version_answers_what_changed_in_it(make_tree: TreeFactory) -> None:
    # The aliases give every section "4.3", and 4.2.1's patch says "change": it had led "What changed in Pulse 4.3?".
    retriever = Retriever(make_tree({"notes.md": _NOTES}), Settings.from_env())
    facts = retriever.retrieve("What changed in Pulse 4.3?").facts
    assert facts[0].section_heading == "4.3.0 — 2026-11-10"
    assert retriever.retrieve("What changed in Pulse 4.2.1?").facts[0].section_heading == "4.2.1 — 2026-10-02"
