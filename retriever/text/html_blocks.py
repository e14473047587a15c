"""An HTML block's statements: a table's rows under their header, and the text of its paragraphs and list items.

Exported pages (Confluence, Notion, hand-edited wikis) hold HTML tables and paragraphs that markdown leaves as one raw
block. Read whole, a 44-row table had been one statement of every cell ("Role Responsibility Security team The …"),
the row asked about lost in it, and a run of ``<p>`` one statement of four sentences.

Contract: ``read(block)`` gives the block's pieces in order, each with the line it starts on (1-based, in the block):
``Row(cells, header, line)`` for a table row, its cells' entities decoded (``header``: the cells of its table's
heading row, a first row of ``<th>`` cells or of wholly bold ones; () when it has none), ``Text(text, line, item,
label, summary)`` for a paragraph's, a list item's (``item``), a ``<details>`` block's ``<summary>`` (``summary``) or
any other run of text, its entities left for the parser's ``clean_inline`` to decode once and its line breaks kept,
so its sentences find their lines, and ``Closed(line)`` where a ``</details>`` stands. A title row across a
table (``colspan``) is a ``label``; a text of under three words outside a list labels the text after it ("Carly Jones:
VP, People & Talent"), and one without a letter or digit is none. A table left open at the block's end gives its last
row; the cells of a table the block did not open (markdown parted it at a blank line) are one text, words apart.
Text in ``<script>`` and ``<style>`` is no text. Linear in the block's length (a tag scan that never looks past the
next "<"); nothing is fetched or run.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

# Tags that end a run of text: what stands on either side of them is not one sentence.
_BREAKS = frozenset(
    "p div br li ul ol dl dt dd h1 h2 h3 h4 h5 h6 blockquote details summary section article header footer "
    "aside nav figure figcaption pre hr table caption".split()
)
_SILENT = frozenset({"script", "style", "template"})
_BOLD = frozenset({"strong", "b"})
_TABLE_TAGS = frozenset({"tr", "thead", "td", "th"})
_FEWEST_WORDS = 3  # of a piece of text outside a list: fewer is a label of the text after it (``_kept``)
_WORDY = re.compile(r"[^\W_]")


@dataclass(frozen=True, slots=True)
class Row:
    cells: tuple[str, ...]
    header: tuple[str, ...]
    line: int


@dataclass(frozen=True, slots=True)
class Closed:
    """Where a ``</details>`` stands: what its ``<summary>`` asked is answered by then."""

    line: int


@dataclass(frozen=True, slots=True)
class Text:
    text: str
    line: int
    item: bool = False
    label: bool = False  # a table's title row
    summary: bool = False  # a <details> block's <summary>: what the text after it, to </details>, answers


# A tag is "<", a name, then anything but "<" and ">" (a ">" inside a quoted attribute ends it early: rare, and the
# rest reads as text). Each match stops at the next "<", so the scan is linear; html.parser rescans an unclosed
# comment or quote to the end for every one (a megabyte of "<!--" took minutes).
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:-]*)[^<>]*>")
_COMMENT = re.compile(r"<!--.*?-->", re.S)  # up to the last "-->" only: linear


Piece = Row | Text | Closed


def read(block: str) -> list[Piece]:
    """The pieces of ``block`` (see the module's contract)."""
    end = block.rfind("-->")
    if end >= 0 and "<!--" in block:  # comments as their line breaks: lines keep their numbers
        end += 3
        block = _COMMENT.sub(lambda m: "\n" * m.group().count("\n"), block[:end]) + block[end:]
    reader, at, line = _Reader(), 0, 1
    for match in _TAG.finditer(block):
        data = block[at : match.start()]
        reader.data(data, line)
        line += data.count("\n")
        if match.group(1):
            reader.line = line
            reader.end(match.group(2).lower())
        else:
            reader.start(match.group(2).lower(), line, "colspan" in match.group().lower())
        line += match.group().count("\n")
        at = match.end()
    reader.data(block[at:], line)
    while reader.tables:  # a table the block leaves open (markdown ends an HTML block at a blank line): its last row
        reader.end("table")
    reader.flush()
    return _kept(reader.pieces)


# A <summary> of these words only names no question: "Click to expand", "Show more", "Details".
_CONTROL_WORDS = frozenset(
    "click tap here to expand collapse show hide more less details detail see view open toggle".split()
)


def says_nothing(summary: str) -> bool:
    """Whether a ``<summary>`` is only a control's words ("Click to expand"), which label no answer."""
    return all(word.strip(".:…!()[]").lower() in _CONTROL_WORDS for word in summary.split())


def details(block: str) -> str:
    """"opens" where ``block`` leaves a ``<details>`` open after its ``<summary>``, "closes" where a ``</details>``
    comes after its last ``<summary>`` (or it has none), else "" (what its ``<summary>`` pieces label runs on)."""
    lowered = block.lower()
    summary, closing = lowered.rfind("<summary"), lowered.rfind("</details")
    if closing > summary:
        return "closes"
    return "opens" if summary >= 0 else ""


def labelled(label: str, text: str) -> str:
    """``text`` under ``label``: "Carly Jones: VP, People & Talent"; after a question, "What if …? Borrow a …"."""
    return f"{label} {text}" if label.endswith("?") else f"{label.rstrip(' :')}: {text}"


def _kept(pieces: list[Piece]) -> list[Piece]:
    """``pieces`` with each short text outside a list (under ``_FEWEST_WORDS`` words: a name in its own ``<div>``)
    as the label of the text after it ("Carly Jones: VP, People & Talent"), and text with no letter or digit
    ("—-------") left out."""
    out: list[Piece] = []
    pending: Text | None = None
    for piece in pieces:
        if isinstance(piece, Text) and _is_label(piece):
            if _WORDY.search(piece.text):
                pending = piece if pending is None else Text(f"{pending.text} {piece.text}", pending.line)
            continue
        if pending is not None and isinstance(piece, Text) and not piece.item:
            piece = Text(labelled(pending.text, piece.text), pending.line, label=piece.label, summary=piece.summary)
        elif pending is not None:
            out.append(pending)  # before a row or an item: a piece of its own
        pending = None
        out.append(piece)
    return [*out, pending] if pending is not None else out


def _is_label(piece: Text) -> bool:
    """A short text outside a list, and not a ``<summary>`` (which labels what follows it by itself)."""
    return not piece.item and not piece.summary and len(piece.text.split()) < _FEWEST_WORDS


def _apart(run: list[str]) -> None:
    """A space after ``run``'s text, unless it is empty or ends in one: what stands on either side is two words."""
    if run and not run[-1][-1:].isspace():
        run.append(" ")


@dataclass
class _Table:
    header: tuple[str, ...] = ()
    rows: int = 0  # rows read so far
    in_head: bool = False
    row: list[str] = field(default_factory=list)
    row_line: int = 0
    all_heads: bool = True  # every cell of the row so far is a <th>
    plain: bool = False  # some text of the row so far stands outside <strong> and <b>
    bold: int = 0  # <strong> and <b> open in the cell
    spans: bool = False  # a cell of the row spans columns (colspan)
    cell: list[str] | None = None  # the open cell's text


class _Reader:
    """What the tags and the text between them make (``read``)."""

    def __init__(self) -> None:
        self.pieces: list[Piece] = []
        self.tables: list[_Table] = []
        self.run: list[str] = []
        self.run_line = 0
        self.item = False  # the open run is a list item's
        self.summary = False  # the open run is a <summary>'s
        self.silent = 0
        self.line = 1  # of the tag being read

    def start(self, tag: str, line: int, spans: bool = False) -> None:
        self.line = line
        if tag in _SILENT:
            self.silent += 1
        elif tag == "table":
            self.flush()
            self.tables.append(_Table())
        elif self.tables and tag in _TABLE_TAGS:
            self.flush()  # text between a table's rows is a piece of its own
            self._table_tag(self.tables[-1], tag, spans)
        elif tag in _BOLD and self._in_cell():
            self.tables[-1].bold += 1
        elif self._in_cell():
            self._cell_break(tag)
        elif tag in ("td", "th"):  # a cell of a table this block did not open: one piece, cells apart
            _apart(self.run)
        elif tag in _BREAKS or tag in _TABLE_TAGS:
            self.flush()
            self.item, self.summary = tag == "li", tag == "summary"

    def end(self, tag: str) -> None:
        if tag in _SILENT:
            self.silent = max(0, self.silent - 1)
        elif tag == "table" and self.tables:
            self._end_row(self.tables.pop())
        elif self.tables and tag in _TABLE_TAGS:
            self._table_end(self.tables[-1], tag)
        elif tag in _BOLD and self._in_cell():
            self.tables[-1].bold = max(0, self.tables[-1].bold - 1)
        elif self._in_cell():
            self._cell_break(tag)
        elif tag in ("td", "th"):
            _apart(self.run)
        elif tag in _BREAKS or tag in _TABLE_TAGS:
            self.flush()
            if tag == "details":
                self.pieces.append(Closed(self.line))

    def _cell_break(self, tag: str) -> None:
        """A block tag in a cell (``<br>``, ``<p>``, ``<li>``) parts its words: "Merge the PR.<br>Wait" is two."""
        cell = self.tables[-1].cell
        if tag in _BREAKS and cell is not None:
            _apart(cell)

    def data(self, data: str, line: int) -> None:
        if self.silent or not data:
            return
        table = self.tables[-1] if self.tables else None
        if table is not None and table.cell is not None:
            table.cell.append(data)
            table.plain = table.plain or (not table.bold and not data.isspace())
        elif self.run or data.strip():  # outside a cell: a caption, text between rows, a paragraph
            if not self.run:
                self.run_line = line + data[: len(data) - len(data.lstrip())].count("\n")
            self.run.append(data)

    def flush(self) -> None:
        text = "".join(self.run).strip()  # entities kept: the parser's clean_inline decodes them, once
        if text:
            self.pieces.append(Text(text, self.run_line, self.item, summary=self.summary))
        self.run, self.item, self.summary = [], False, False

    def _in_cell(self) -> bool:
        return bool(self.tables) and self.tables[-1].cell is not None

    def _table_tag(self, table: _Table, tag: str, spans: bool) -> None:
        if tag == "thead":
            table.in_head = True
        elif tag == "tr":
            self._end_row(table)
            table.row_line = self.line
        else:
            self._end_cell(table)
            table.cell = []
            table.all_heads = table.all_heads and tag == "th"
            table.spans = table.spans or spans
            table.row_line = table.row_line or self.line

    def _table_end(self, table: _Table, tag: str) -> None:
        if tag == "thead":
            self._end_row(table)
            table.in_head = False
        elif tag == "tr":
            self._end_row(table)
        else:
            self._end_cell(table)

    def _end_cell(self, table: _Table) -> None:
        if table.cell is not None:
            table.row.append(" ".join(html.unescape("".join(table.cell)).split()))
            table.cell = None

    def _end_row(self, table: _Table) -> None:
        self._end_cell(table)
        cells = [cell for cell in table.row if cell]
        if table.spans and len(cells) == 1:  # a title across the table ("Career Levels V2", colspan): a label
            self.pieces.append(Text(cells[0], table.row_line, label=True))
        elif cells:
            # A first row of <th> cells, or of cells wholly bold (as Google Docs and Confluence export them), heads it.
            heading = table.in_head or (table.rows == 0 and (table.all_heads or not table.plain))
            if heading:
                table.header = tuple(table.row)
            else:
                self.pieces.append(Row(tuple(table.row), table.header, table.row_line))
            table.rows += 1
        table.row, table.row_line, table.all_heads, table.plain, table.bold, table.spans = [], 0, True, False, 0, False
