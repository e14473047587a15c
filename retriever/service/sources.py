"""``read_memory_source``: the text a ``retrieve_memory`` fact cites, so that an agent can follow a citation.

Contract: ``definition()`` is the tool as ``tools/list`` describes it.  ``validate(arguments)`` gives
(source_path, line) or raises ``InvalidArguments`` naming the bad one.  ``read(memory, source_path, line)`` gives the
cited document's sections (the one holding ``line``, else all of them, in order; for a line of the front matter, the
front matter, a field a line) with their tree paths, lines and text, at most ``MAX_SOURCE_CHARS`` of text
(``truncated`` says when more was left out); a line past the document's end is ``invalid_arguments``.
``source_path`` is read as answers cite it: the memory folder's name first (``company_context/policies/travel.md``),
or the path inside the memory, optionally with ``:LINE`` (``…/travel.md:51``, as the text report cites a fact; with
``line`` too, the two agree).  Only a document the memory indexed is read: a path that names none
(``../../etc/passwd``, a skipped file) is ``invalid_arguments``, so nothing outside the index is opened by name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from retriever.compat import assistant
from retriever.errors import InvalidArguments
from retriever.memory.memory import Memory
from retriever.pipeline.validate import check_text, json_type, quote_names
from retriever.service.tools import ANNOTATIONS, GET_MEMORY, validate_get_memory
from retriever.text.models import Document
from retriever.text.safe import preview

READ_SOURCE = "read_memory_source"
MAX_SOURCE_CHARS = 20_000  # of sections' text in one answer: a long document is read a section at a time
MAX_PATH_CHARS = 1_000
_CITED_LINE = re.compile(r"^(.*?):(\d{1,9})$")

DESCRIPTION = """\
Read-only. The text a retrieve_memory fact cites: pass its source_path (and line, or source_path:LINE as the \
text report cites it) to get the section holding that line, with its tree path and lines; without a line, the \
document's sections in order (at most 20,000 characters; `truncated` says when more was left out). Use it to \
follow a citation when the fact and excerpts are not enough. Only documents the memory indexed are read."""

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "source_path": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_PATH_CHARS,
            "description": "A fact's source_path, as retrieve_memory gives it (company_context/policies/travel.md), "
            "optionally with :LINE.",
        },
        "line": {"type": "integer", "minimum": 1, "description": "A line the fact cites; omit for the whole document."},
    },
    "required": ["source_path"],
    "additionalProperties": False,
}

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "source_path": {"type": "string"},
        "title": {"type": "string"},
        "sections": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "tree_path": {"type": "string"},
                    "lines": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
                    "text": {"type": "string"},
                },
                "required": ["tree_path", "lines", "text"],
            },
        },
        "truncated": {"type": "boolean"},
    },
    "required": ["source_path", "title", "sections", "truncated"],
}


def definition() -> dict[str, Any]:
    """``read_memory_source`` as ``tools/list`` describes it."""
    title = "Read a cited memory source"
    return {
        "name": READ_SOURCE,
        "title": title,
        "description": DESCRIPTION,
        "inputSchema": INPUT_SCHEMA,
        "outputSchema": OUTPUT_SCHEMA,
        "annotations": {**ANNOTATIONS, "title": title},
    }


def validate(arguments: Any) -> tuple[str, int | None]:
    """(source_path, line) from the arguments; ``source_path:LINE`` gives the line when none is passed."""
    if not isinstance(arguments, Mapping):
        shape = "arguments must be an object with 'source_path' and optional 'line'"
        raise InvalidArguments(f"{shape}, got {json_type(arguments)}")
    unknown = sorted(str(k) for k in arguments if k not in ("source_path", "line"))
    if unknown:
        raise InvalidArguments(f"unknown argument {quote_names(unknown)}: {READ_SOURCE} accepts 'source_path', 'line'")
    path, line = arguments.get("source_path"), arguments.get("line")
    if not isinstance(path, str) or not path.strip():
        raise InvalidArguments("'source_path' is required: pass a fact's source_path as retrieve_memory gives it")
    if len(path) > MAX_PATH_CHARS:
        raise InvalidArguments(f"'source_path' is {len(path):,} characters; the limit is {MAX_PATH_CHARS:,}")
    check_text("source_path", path)
    if line is not None:
        _check_line("'line'", line)
    cited = _CITED_LINE.match(path.strip())
    if not cited:
        return path.strip(), line
    _check_line(f"the line {preview(path.strip())} cites", int(cited[2]))
    if line is not None and line != int(cited[2]):
        raise InvalidArguments(f"'source_path' cites line {cited[2]} and 'line' is {line}: pass one of them")
    return cited[1], int(cited[2])


def _check_line(what: str, line: Any) -> None:
    if not isinstance(line, int) or isinstance(line, bool):
        raise InvalidArguments(f"{what} must be a line number (1 or more), got {json_type(line)}: omit it or fix it")
    if line < 1:
        raise InvalidArguments(f"{what} must be a line number (1 or more), got {line}: lines count from 1")


def read(memory: Memory, source_path: str, line: int | None) -> dict[str, Any]:
    """The cited document's sections (see the module's contract)."""
    rel_path = _indexed(memory, source_path)
    doc = memory.document(rel_path)
    if line is not None and doc.line_count and line > doc.line_count:
        raise InvalidArguments(
            f"line {line:,} is past the end of {preview(source_path)}, which has {doc.line_count:,} lines: "
            "pass a line a fact cites, or omit 'line' for the whole document"
        )
    if line is not None and doc.front_matter and line < (doc.sections[0].lines[0] if doc.sections else line + 1):
        return _front_matter(memory, rel_path, doc)
    sections = [s for s in doc.sections if line is None or s.lines[0] <= line <= s.lines[1]]
    if line is not None and not sections:  # a line between sections: the nearest one before
        sections = [s for s in doc.sections if s.lines[0] <= line][-1:] or list(doc.sections[:1])
    out: list[dict[str, Any]] = []
    left = MAX_SOURCE_CHARS
    for section in sections:
        text = section.text[:left]
        if not text and section.text:
            break
        left -= len(text)
        out.append({"tree_path": memory.tree_path(rel_path, section), "lines": list(section.lines), "text": text})
    shown = sum(len(o["text"]) for o in out)
    truncated = shown < sum(len(s.text) for s in sections)
    return {"source_path": memory.source_path(rel_path), "title": doc.title, "sections": out, "truncated": truncated}


def _front_matter(memory: Memory, rel_path: str, doc: Document) -> dict[str, Any]:
    """A front-matter line's answer: the document's front matter, a field a line ("owner: Rui Costa"), where a fact
    citing a field (its reason, its owner) is read; it had answered with the first section, which holds no such line."""
    end = doc.sections[0].lines[0] - 1 if doc.sections else doc.line_count
    whole = "\n".join(f"{key}: {_field_text(value)}" for key, value in doc.front_matter.items())
    text = whole[:MAX_SOURCE_CHARS]
    section = {"tree_path": f"{doc.title} > front matter", "lines": [1, max(1, end)], "text": text}
    shown = {"sections": [section], "truncated": len(text) < len(whole)}
    return {"source_path": memory.source_path(rel_path), "title": doc.title, **shown}


def _field_text(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_field_text(v) for v in value) + "]"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def answering(name: str, arguments: Any) -> Callable[[Memory], dict[str, Any]]:
    """What answers a call of the JSON tools (``get_memory``, ``read_memory_source``) over a memory, its
    arguments validated first (``InvalidArguments``), so that a bad call is refused whatever the memory."""
    if name == GET_MEMORY:
        agent, query = validate_get_memory(arguments)
        return lambda memory: assistant.get_memory(memory, agent, query)
    source_path, line = validate(arguments)
    return lambda memory: read(memory, source_path, line)


def _indexed(memory: Memory, source_path: str) -> str:
    """The catalog's path for a cited ``source_path``; ``InvalidArguments`` when the memory indexed no such file."""
    prefix = f"{memory.root_name}/"
    for candidate in (source_path.removeprefix(prefix), source_path):
        if candidate in memory.state.catalog:
            return candidate
    raise InvalidArguments(
        f"no document {preview(source_path)} in this memory; pass a source_path a retrieve_memory fact cites"
    )
