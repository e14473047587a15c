"""Reading one file: a parsed document's statements carry their vectors and their terms."""

from __future__ import annotations

from retriever.memory.intake import prepare
from retriever.text import analyzer
from retriever.text.parser import parse_document

PAGE = "# Leave\n\n## Carry-over\n\nStaff carry over five days of leave.\n\n- Requests:\n  - File them in Workday.\n"


def test_each_statement_carries_its_texts_terms_as_the_analyzer_reads_them() -> None:
    doc = prepare(parse_document("leave.md", PAGE)).document()

    units = [u for s in doc.sections for u in s.units]

    assert units and all(u.terms == tuple(analyzer.terms(u.text)) for u in units)
    assert units[0].terms == ("staff", "carri", "five", "day", "leav")


def test_a_prepared_record_keeps_the_statements_terms() -> None:
    parsed = prepare(parse_document("leave.md", PAGE))

    units = [u for s in parsed.document().sections for u in s.units]

    assert units and all(u.terms == tuple(analyzer.terms(u.text)) for u in units)
