"""``read_memory_source``: an agent follows a fact's citation to the text it cites."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import COMPANY_CONTEXT, TreeFactory
from hypothesis import given
from hypothesis import strategies as st

from retriever import Retriever, Settings
from retriever.errors import InvalidArguments
from retriever.service import sources
from retriever.service.service import MemoryService
from retriever.service.stores.sqlite import SQLiteStore
from retriever.service.tools import tool_definitions

DOC = (
    "---\ntitle: Travel\n---\n# Travel\n\nIntro line.\n\n## Approval\n\nManagers approve trips.\n\n"
    "## Per diem\n\nEUR 45 a day.\n"
)


@pytest.fixture
def service(make_tree: TreeFactory, tmp_path: Path) -> MemoryService:
    root = make_tree({"policies/travel.md": DOC, "other.md": "# Other\n\nText.\n"})
    return MemoryService(Retriever(root, Settings.from_env()), SQLiteStore(tmp_path / "s.sqlite"), watch=False)


def _read(service: MemoryService, arguments: Any) -> dict[str, Any]:
    return service.call_tool(sources.READ_SOURCE, arguments)


def test_a_cited_line_reads_the_section_holding_it(service: MemoryService) -> None:
    result = _read(service, {"source_path": "memory/policies/travel.md", "line": 10})
    assert result["isError"] is False
    assert result["structuredContent"] == {
        "source_path": "memory/policies/travel.md",
        "title": "Travel",
        "sections": [
            {"tree_path": "Memory > Policies > Travel > Approval", "lines": [8, 11], "text": "Managers approve trips."}
        ],
        "truncated": False,
    }
    # the text report's "path:line" form, and the path inside the memory, read the same
    assert _read(service, {"source_path": "memory/policies/travel.md:10"}) == result
    assert _read(service, {"source_path": "policies/travel.md", "line": 10}) == result


def test_a_line_of_the_front_matter_reads_the_front_matter(service: MemoryService) -> None:
    # It had answered with the first section, which holds no such line.
    found = _read(service, {"source_path": "memory/policies/travel.md:2"})["structuredContent"]
    assert found["sections"] == [{"tree_path": "Travel > front matter", "lines": [1, 3], "text": "title: Travel"}]


def test_without_a_line_the_documents_sections_come_in_order(service: MemoryService) -> None:
    found = _read(service, {"source_path": "memory/policies/travel.md"})["structuredContent"]
    assert [s["text"] for s in found["sections"]] == ["Intro line.", "Managers approve trips.", "EUR 45 a day."]


def test_a_fact_retrieve_memory_cites_can_be_followed(tmp_path: Path) -> None:
    retriever = Retriever(COMPANY_CONTEXT, Settings.from_env())
    service = MemoryService(retriever, SQLiteStore(tmp_path / "s.sqlite"), watch=False)
    fact = service.call_tool("retrieve_memory", {"prompt": "Who approves travel?"})["structuredContent"]["retrieval"][
        "facts"
    ][0]
    found = _read(service, {"source_path": fact["source_path"], "line": fact["lines"][0]})["structuredContent"]
    assert found["sections"][0]["tree_path"] == fact["tree_path"]
    assert fact["statement"][:40] in found["sections"][0]["text"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"source_path": "../../etc/passwd"}, "no document '../../etc/passwd' in this memory"),
        ({"source_path": "memory/missing.md"}, "no document 'memory/missing.md' in this memory"),
        ({}, "'source_path' is required"),
        ({"source_path": "x", "line": 0}, "'line' must be a line number (1 or more), got 0"),
        ({"source_path": "x", "line": "36"}, "'line' must be a line number (1 or more), got string"),
        ({"source_path": "x:0"}, "the line 'x:0' cites must be a line number (1 or more), got 0"),
        ({"source_path": "memory/policies/travel.md:10", "line": 14}, "'source_path' cites line 10 and 'line' is 14"),
        ({"source_path": "memory/policies/travel.md", "line": 16}, "line 16 is past the end of"),
        ({"source_path": "x", "line": True}, "'line' must be a line number (1 or more), got boolean"),
        ({"source_path": "x", "top": 1}, "unknown argument 'top'"),
        ({"source_path": "x" * 1001}, "'source_path' is 1,001 characters; the limit is 1,000"),
        ("x", "arguments must be an object with 'source_path' and optional 'line', got string"),
    ],
)
def test_a_bad_citation_is_invalid_arguments_naming_it(service: MemoryService, arguments: Any, message: str) -> None:
    result = _read(service, arguments)
    assert result["isError"] is True and result["structuredContent"]["error_code"] == "invalid_arguments"
    assert result["structuredContent"]["error_message"].startswith(message)


def test_a_long_document_is_cut_at_the_limit_and_says_so(make_tree: TreeFactory, tmp_path: Path) -> None:
    long = "# Log\n\n" + "".join(f"## Day {i}\n\n" + "word " * 400 + "\n\n" for i in range(30))
    root = make_tree({"log.md": long})
    service = MemoryService(Retriever(root, Settings.from_env()), SQLiteStore(tmp_path / "s.sqlite"), watch=False)
    found = _read(service, {"source_path": "log.md"})["structuredContent"]
    assert found["truncated"] is True
    assert sum(len(s["text"]) for s in found["sections"]) == sources.MAX_SOURCE_CHARS


def test_tools_list_describes_the_tool_with_its_schemas() -> None:
    [tool] = [t for t in tool_definitions() if t["name"] == sources.READ_SOURCE]
    assert tool["inputSchema"]["required"] == ["source_path"] and tool["annotations"]["readOnlyHint"] is True
    assert tool["outputSchema"]["required"] == ["source_path", "title", "sections", "truncated"]


ARGUMENTS = st.one_of(
    st.none(), st.text(max_size=30), st.dictionaries(st.text(max_size=12), st.text(max_size=12) | st.integers())
)


@given(ARGUMENTS)
def test_any_arguments_are_validated_or_refused_with_invalid_arguments(arguments: Any) -> None:
    try:
        path, line = sources.validate(arguments)
    except InvalidArguments:
        return
    assert isinstance(path, str) and path and (line is None or line >= 1)
