"""Markdown file text → ``Document``: front matter, sections by heading, candidate statements.

Contract: ``parse_document(rel_path, text)`` returns a ``Document`` or raises ``ParseError``
with a reason a user can act on (bad YAML, front matter that is not a mapping, nested too
deeply or expanding past a budget, a file with too many headings, statements, blocks or link reference
definitions, with lists or quotes nested past ``MAX_NESTING``, with an unresolved merge conflict
(``conflicts``), or with nested quotes continued by more lines
without their ">" marks, or quotes reading plain lines again, past ``quotes.MAX_QUOTE_REREADS``).
It raises nothing else, takes time linear in the text and bounded memory: markdown-it's
tokens are handed over block by block instead of held for the whole file.
Headings come from markdown-it-py's block parser, so ``#`` lines inside code fences,
indented code or HTML blocks never make sections.  Line numbers are file line numbers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from markdown_it.token import Token

from retriever.text import blocks, conflicts, dialects, field_statements, html_blocks
from retriever.text.blocks import MAX_NESTING
from retriever.text.front_matter import ParseError, split_front_matter
from retriever.text.markup import (
    INDEX_NAMES,
    clean_inline,
    default_title,
    find_acronyms,
    markdown_links,
    title_key,
    truncate,
)
from retriever.text.models import Document, Section, Unit, UnitKind
from retriever.text.sentences import statement_pieces

__all__ = ["INDEX_NAMES", "ParseError", "default_title", "parse_document", "split_front_matter"]

_LONG_UNIT = 600  # characters; longer list items are split into sentences
_LIST_OPEN = frozenset({"bullet_list_open", "ordered_list_open"})
_LIST_CLOSE = frozenset({"bullet_list_close", "ordered_list_close"})
_CODE_CHARS = 160  # of the first line of a lead-in's code block
_ROW_NUMBER_HEADERS = frozenset({"#", "No.", "No", "№"})

# Budgets per file (the front matter's are in ``front_matter``).  Real documents stay far below them
# (the largest of 1,226 handbook and meeting files: 147 headings, 1,843 statements, 4,303 tokens);
# hostile ones hit them early and are skipped.
MAX_LINES = 200_000  # markdown-it keeps five numbers per line: 2 MB of empty lines took 250 MB
MAX_HEADINGS = 5_000
MAX_UNITS = 50_000  # statements: sentences, list items, table rows
MAX_TOKENS = 600_000  # markdown-it block tokens in the file (each costs ~5 µs): the time bound
_CONTAINERS = frozenset({"blockquote_open", "list_item_open"})  # opened at MAX_NESTING - 1, their content is dropped


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip()) if "," in value else (value.strip(),)
    if isinstance(value, list):
        return tuple(str(v).strip() for v in value if isinstance(v, str | int | float) and str(v).strip())
    return ()


@dataclass
class _Builder:
    """Accumulates sections while walking the block token stream, one batch of blocks at a time."""

    rel_path: str
    offset: int  # lines of front matter before the body
    total_lines: int
    doc_title: str | None  # from the front matter; else set by the first heading, or the file name
    sections: list[Section] = field(default_factory=list)
    stack: list[tuple[int, str]] = field(default_factory=list)  # (level, plain heading)
    heading: str | None = None
    level: int = 0
    start: int = 1
    units: list[Unit] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    items: list[str] = field(default_factory=list)  # texts of the enclosing list items, outermost first
    lists: list[int] = field(default_factory=list)  # numbers of the enclosing lists, outermost first
    lists_opened: int = 0
    item_opening: bool = False  # an item has opened and its first paragraph is still to come
    # The open <details> block's <summary> ("What if my laptop has not arrived?"), until the statement after it opens
    # with it: not a statement of its own (it had led as one, with every word of the question and no answer).
    details: str = ""
    headings: int = 0
    unit_count: int = 0
    token_count: int = 0

    def open(self, token: Token, inline: Token) -> None:
        self.headings += 1
        if self.headings > MAX_HEADINGS:
            raise ParseError(f"more than {MAX_HEADINGS:,} headings; split it into smaller files")
        if self.doc_title is None:  # the first heading: an h1 titles the document
            title = clean_inline(inline.content) if token.tag == "h1" else ""
            self.doc_title = title or default_title(self.rel_path)
        self.close(token.map[0] + self.offset if token.map else self.total_lines)
        level = int(token.tag[1])
        plain = clean_inline(inline.content) or inline.content.strip()
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        self.stack.append((level, plain))
        self.heading, self.level = inline.content.strip(), level
        self.start = (token.map[0] if token.map else 0) + self.offset + 1
        self.details = ""

    def add(self, unit: Unit) -> None:
        self.unit_count += 1
        if self.unit_count > MAX_UNITS:
            raise ParseError(
                f"more than {MAX_UNITS:,} statements (sentences, list items, table rows); split it into smaller files"
            )
        if self.details:  # the answer's opening says what it answers, as a label's text does; a table's every row
            unit, self.details = _answering(unit, self.details), self.details if unit.kind == "row" else ""
        self.units.append(unit)

    def close(self, end_line: int) -> None:
        if self.heading is None and not self.texts:
            return  # an empty preamble is no section
        path = tuple(h for _, h in self.stack) if self.heading is not None else ()
        self.sections.append(
            Section(
                ordinal=len(self.sections),
                heading=self.heading,
                title=path[-1] if path else self.title,
                level=self.level,
                heading_path=path,
                lines=(self.start, max(self.start, end_line)),
                text="\n".join(self.texts),
                units=tuple(self.units),
            )
        )
        self.units, self.texts = [], []

    @property
    def title(self) -> str:
        return self.doc_title if self.doc_title is not None else default_title(self.rel_path)


def parse_document(rel_path: str, text: str) -> Document:
    """Parse one markdown file (its text already decoded) into a ``Document``."""
    # Windows line endings would hide the front matter's closing fence; lines stay the same.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    conflicted = conflicts.conflict(text)
    if conflicted is not None:
        raise ParseError(conflicts.refusal(conflicted))
    meta, body, offset = split_front_matter(text)
    body = dialects.readable(rel_path, body)  # MDX's and MkDocs's own syntax as plain markdown, lines kept
    total_lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if total_lines > MAX_LINES:
        raise ParseError(f"more than {MAX_LINES:,} lines ({total_lines:,}); split it into smaller files")
    builder = _Builder(rel_path, offset, total_lines, _meta_title(meta), start=offset + 1)
    _tokenize(body, builder)
    builder.close(total_lines)
    title = builder.title
    fields = field_statements.statements(meta, text, offset)
    sections = field_statements.opening(_drop_title_heading(builder.sections, title), fields, title)
    return Document(
        rel_path=rel_path,
        title=title,
        doc_type=str(meta["type"]).strip().lower() if isinstance(meta.get("type"), str) else None,
        aliases=_strings(meta.get("aliases")),
        summary=str(meta["summary"]) if isinstance(meta.get("summary"), str) else None,
        front_matter=meta,
        links=markdown_links(rel_path, body),
        sections=tuple(sections),
        line_count=total_lines,
        acronyms=tuple(dict.fromkeys(a for s in sections for a in find_acronyms(f"{s.title}\n{s.text}"))),
    )


def _tokenize(body: str, builder: _Builder) -> None:
    """Run markdown-it's block parser over ``body``, feeding the builder block by block."""
    if body:
        blocks.parse(body, lambda done: _walk(done, builder), builder.offset)


def _meta_title(meta: Mapping[str, Any]) -> str | None:
    if isinstance(meta.get("title"), str | int | float) and str(meta["title"]).strip():
        return clean_inline(str(meta["title"]))
    return None


def _drop_title_heading(sections: list[Section], title: str) -> list[Section]:
    """Leave the document title out of heading paths where the top heading repeats it."""
    key = title_key(title)
    return [
        dataclasses.replace(s, heading_path=s.heading_path[1:])
        if s.heading_path and title_key(s.heading_path[0]) == key
        else s
        for s in sections
    ]


def _walk(tokens: list[Token], builder: _Builder) -> None:
    """Route finished blocks' tokens to the builder: headings open sections, blocks add statements."""
    builder.token_count += len(tokens)
    if builder.token_count > MAX_TOKENS:
        raise ParseError(f"more than {MAX_TOKENS:,} markdown blocks and parts; split it into smaller files")
    if any(token.type in _CONTAINERS and token.level >= MAX_NESTING - 1 for token in tokens):  # content dropped
        raise ParseError(
            f"lists or quotes nested too deeply ({MAX_NESTING} levels, a list level counting two), past which "
            "markdown is not read; flatten them"
        )
    items = builder.items
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type == "heading_open" and token.level == 0:
            builder.open(token, tokens[i + 1])
            i += 3
            continue
        if token.type == "list_item_open":
            items.append("")
            builder.item_opening = True
        elif token.type == "list_item_close":
            items.pop()
            builder.item_opening = False
        elif token.type in _LIST_OPEN:
            builder.lists_opened += 1
            builder.lists.append(builder.lists_opened)
        elif token.type in _LIST_CLOSE:
            builder.lists.pop()
        elif token.type == "inline" and token.map:
            _inline_units(token, tokens[i - 1], items, builder)
        elif token.type == "table_open":
            i = _table(tokens, i, builder)
            continue
        elif token.type in ("fence", "code_block") and token.map:
            _code(token, builder)
        elif token.type == "html_block" and token.map:
            _html_units(token, builder)
        i += 1


def _inline_units(token: Token, opener: Token, items: list[str], builder: _Builder) -> None:
    first_line = token.map[0] + builder.offset + 1 if token.map else builder.start
    text = clean_inline(token.content)
    if not text:
        return
    builder.texts.append(text)
    lists, opens = tuple(builder.lists), builder.item_opening and opener.type == "paragraph_open"
    builder.item_opening = False
    if items and opener.type == "paragraph_open" and items[-1] == "" and len(text) <= _LONG_UNIT:
        items[-1] = text
        context = next((t for t in reversed(items[:-1]) if t), "")
        last = token.map[1] + builder.offset if token.map else first_line
        builder.add(Unit("item", text, (first_line, last), context=context, lists=lists, opens=opens))
        return
    kind: UnitKind = "item" if items else "sentence"
    for unit in _sentences(token.content, text, first_line, kind, (lists, opens)):
        builder.add(unit)


def _code(token: Token, builder: _Builder) -> None:
    """A code block: its text is the section's, a lead-in's command (``_code_after_lead_in``), and the answer to an
    open ``<summary>`` (the text after it answers something else)."""
    builder.texts.append(token.content.strip())
    builder.details = ""
    _code_after_lead_in(token, builder)


def _code_after_lead_in(token: Token, builder: _Builder) -> None:
    """Give the statement just before a code block its command when it is a lead-in ("…, run:") that the
    block follows closely (``Unit.introduces``): the block is what it introduces."""
    last = builder.units[-1] if builder.units else None
    first_line = token.map[0] + builder.offset + 1 if token.map else 0
    if last is None or not last.introduces(first_line):
        return
    lines = [line.strip() for line in token.content.splitlines() if line.strip()]
    if lines:
        shown, _ = truncate(lines[0], _CODE_CHARS, marker="…")
        more = " …" if len(lines) > 1 else ""
        end = token.map[1] + builder.offset if token.map else first_line
        builder.units[-1] = dataclasses.replace(last, code=shown + more, code_end=end)


def _sentences(
    raw: str, cleaned: str, first_line: int, kind: UnitKind, place: tuple[tuple[int, ...], bool] = ((), False)
) -> Iterator[Unit]:
    # Split the raw markdown (so offsets map to lines), then clean each sentence.  Lines are counted
    # from the previous sentence on, not from the start: a paragraph of 600,000 sentences stays linear.
    # A sentence that is the whole paragraph (its raw text stripped) takes the paragraph's ``cleaned``
    # text: ``clean_inline`` gives a text and its stripped form the same plain text.
    line, counted, whole = first_line, 0, len(raw.strip())
    lists, opens = place
    for offset, sentence in statement_pieces(raw):
        line += raw.count("\n", counted, offset)
        counted = offset
        text = cleaned if len(sentence) == whole else clean_inline(sentence)
        if text:
            yield Unit(kind, text, (line, line + sentence.count("\n")), lists=lists, opens=opens)
            opens = False  # ``place``: the lists it sits in, and whether its first sentence opens an item


def _table(tokens: list[Token], i: int, builder: _Builder) -> int:
    """Table rows as "column: value" statements; returns the index after the table."""
    header: list[str] = []
    row: list[str] = []
    row_map: list[int] | None = None
    in_head = False
    while tokens[i].type != "table_close":
        token = tokens[i]
        if token.type == "thead_open":
            in_head = True
        elif token.type == "thead_close":
            in_head = False
        elif token.type == "tr_open":
            row, row_map = [], token.map
        elif token.type == "inline":
            row.append(clean_inline(token.content))
        elif token.type == "tr_close" and in_head:
            header = row
        elif token.type == "tr_close" and row_map and any(row):
            _row_unit(header, row, row_map, builder)
        i += 1
    return i + 1


def _row_unit(header: list[str], row: list[str], row_map: list[int], builder: _Builder, add_text: bool = True) -> None:
    # A "#" column only numbers the rows; it says nothing about them.
    cells = zip([*header, *[""] * (len(row) - len(header))], row, strict=False)  # a cell past the header: unnamed
    kept = tuple((h, v) for h, v in cells if v and h not in _ROW_NUMBER_HEADERS)
    text = "; ".join(f"{h}: {v}" if h else v for h, v in kept)
    line = row_map[0] + builder.offset + 1
    builder.add(Unit("row", text, (line, line), cells=kept, lists=tuple(builder.lists)))
    if add_text:
        builder.texts.append(text)


def _answering(unit: Unit, summary: str) -> Unit:
    """``unit`` as the answer to a ``<summary>``: opening with it, or, a table row (whose text is its cells), with it
    as its context, as every row of the table takes it (up to a statement that is no row, code or ``</details>``)."""
    if unit.kind == "row":
        return dataclasses.replace(unit, context=summary)
    return dataclasses.replace(unit, text=html_blocks.labelled(summary, unit.text))


def _html_units(token: Token, builder: _Builder) -> None:
    """An HTML block's rows and sentences (``html_blocks``), each at its line; under three words, nothing but a
    ``<summary>``, which is the context of what follows up to its ``</details>`` (``_Builder.details``)."""
    text, details = clean_inline(token.content), html_blocks.details(token.content)
    if len(text.split()) < 3 and details != "opens":
        if details == "closes":  # a "</details>" line: its answer was given
            builder.details = ""
        return
    builder.texts.append(text)
    block = token.map[0] if token.map else builder.start - 1 - builder.offset  # the line before the block's first
    for piece in html_blocks.read(token.content):
        if isinstance(piece, html_blocks.Row):
            _row_unit(list(piece.header), list(piece.cells), [block + piece.line - 1], builder, add_text=False)
            continue
        if isinstance(piece, html_blocks.Closed) or piece.summary:  # in reading order: text after </details> is free
            label = clean_inline(piece.text) if isinstance(piece, html_blocks.Text) else ""
            builder.details = "" if html_blocks.says_nothing(label) else label
            continue
        kind: UnitKind = "item" if piece.item else "sentence"
        first_line, place = block + builder.offset + piece.line, (tuple(builder.lists), False)
        for unit in _sentences(piece.text, clean_inline(piece.text), first_line, kind, place):
            builder.add(unit)
