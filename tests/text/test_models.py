"""Plain data: a pickled section keeps its statements packed until they are first read."""

from __future__ import annotations

import dataclasses
import logging
import pickle

import pytest

from retriever.text import models
from retriever.text.models import Document, PackedUnits, Section, Unit

UNITS = (
    Unit("sentence", "Receipts are filed within a week.", (5, 5), vector=b"\x01\x02"),
    Unit("row", "Plan: Starter; Price: 10", (7, 7), cells=(("Plan", "Starter"), ("Price", "10"))),
)


def _section(units: tuple[Unit, ...] = UNITS) -> Section:
    return Section(1, "## Expenses", "Expenses", 2, ("Expenses",), (3, 8), "Receipts are filed within a week.", units)


def _packed(section: Section) -> object:
    """What the section's ``units`` slot holds: its statements, or their packed bytes."""
    return models._UNITS.__get__(section, Section)


def test_a_pickled_section_holds_its_statements_packed_until_they_are_first_read() -> None:
    copy = pickle.loads(pickle.dumps(_section()))

    assert type(_packed(copy)) is PackedUnits
    assert copy.units == UNITS and copy.units[0].vector == b"\x01\x02"
    assert type(_packed(copy)) is tuple  # unpacked once, then kept
    assert copy == _section() and hash(copy) == hash(_section())


def test_plain_bytes_in_the_statements_slot_are_not_taken_for_packed_statements() -> None:
    # What a record of this version read by an older process would have looked like without ``PackedUnits``.
    odd = Section(1, None, "Expenses", 0, (), (1, 2), "", pickle.dumps(UNITS))  # type: ignore[arg-type]
    assert odd.units == pickle.dumps(UNITS)  # left as it is: only PackedUnits are unpacked
    assert b"PackedUnits" in pickle.dumps(_section())


def test_a_section_pickled_again_before_its_statements_are_read_passes_the_same_bytes_on() -> None:
    copy = pickle.loads(pickle.dumps(_section()))
    packed = _packed(copy)

    again = pickle.loads(pickle.dumps(copy))

    assert _packed(again) == packed and type(_packed(copy)) is PackedUnits  # passing it on did not unpack it
    assert again.units == UNITS


def test_a_document_read_back_equals_the_one_pickled_and_replace_keeps_the_statements() -> None:
    doc = Document("a.md", "A", None, (), None, {}, (), (_section(),), 9)
    copy = pickle.loads(pickle.dumps(doc))

    replaced = dataclasses.replace(copy.sections[0], title="Costs")

    assert replaced.units == UNITS and replaced.title == "Costs"
    assert copy == doc


@pytest.mark.parametrize(
    "packed",
    [
        pytest.param(b"\x80\x05\x95", id="cut-short"),
        pytest.param(b"not a pickle at all", id="text"),
        pytest.param(pickle.dumps(("a", "b")), id="not-statements"),
        pytest.param(pickle.dumps(7), id="not-a-tuple"),
    ],
)
def test_damaged_packed_statements_read_as_none_with_a_warning(packed: bytes, caplog: pytest.LogCaptureFixture) -> None:
    damaged = Section(1, None, "Expenses", 0, (), (1, 2), "", PackedUnits(packed))  # type: ignore[arg-type]

    with caplog.at_level(logging.WARNING):
        assert damaged.units == () and damaged.units == ()

    assert [r.message for r in caplog.records].count(
        "the statements of section 'Expenses' are damaged in the index cache; it is read without them"
    ) == 1
