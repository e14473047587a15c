"""Values a client sent, made safe to log, store, echo and serialise as JSON.

Contract:
- ``bounded(value)`` returns a JSON-ready copy of any value: strings cut at ``MAX_CHARS`` with a
  visible marker, containers capped at ``MAX_ITEMS`` entries and ``MAX_DEPTH`` levels, lone
  surrogates replaced by U+FFFD, NaN and ±Infinity as ``None`` (JSON's null, as pydantic writes
  them), keys as strings, huge integers and foreign objects as short strings.  It never raises.
- ``json_safe(value)`` is the same with generous caps: for our own responses, which are bounded by
  construction, so that a rare bad value cannot stop a record from being stored.
- ``lone_surrogate(text)`` finds what UTF-8 cannot encode; ``preview(text)`` quotes a bounded prefix
  for error messages; ``one_line(text)`` escapes what would break a line of terminal or log output;
  ``terminal_text(text)`` escapes the same in many lines of text, keeping its line breaks and tabs;
  ``json_text(value)`` is indented JSON with the same characters as JSON escapes.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

MAX_CHARS = 8000
MAX_ITEMS = 100
MAX_DEPTH = 8
MAX_INT_BITS = 256  # wider integers become text: Python refuses to print ones over 4,300 digits
CUT = "…[cut: {} more characters]"


def lone_surrogate(text: str) -> int | None:
    """The index of the first code point UTF-8 cannot encode (a lone surrogate), else None."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def clean_text(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (a surrogate pair becomes its character)."""
    if lone_surrogate(text) is None:
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")  # embeddings, overrides, isolates


def one_line(text: str) -> str:
    """``text`` for one line of a terminal or a log: control characters, line and paragraph separators and
    bidirectional overrides written as escapes (``\\n``, ``\\x00``, ``\\u202e``), so a file name or a session id
    holding them can neither start a line of its own (a CI annotation) nor reorder what is shown."""
    if text.isprintable():
        return text
    return "".join(_escaped(ch) for ch in text)


def single_line(text: str) -> str:
    """``text``'s words on one line (white space, line breaks among it, collapsed to one space), then ``one_line``:
    a value from the memory put in a line of an answer can neither start a line of its own nor drive a terminal."""
    if text.isprintable() and "  " not in text and text == text.strip():  # most texts: nothing to do (~0.2 µs)
        return text
    return one_line(" ".join(text.split()))


def _escaped(ch: str) -> str:
    if ch in _BIDI or unicodedata.category(ch) in ("Cc", "Zl", "Zp"):
        return ch.encode("unicode_escape").decode("ascii")
    return ch


# What ``one_line`` escapes, but for "\t" and "\n": Cc is U+0000-U+001F and U+007F-U+009F, Zl and Zp one each.
_DRIVES_A_TERMINAL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029" + "".join(sorted(_BIDI)) + "]")


def terminal_text(text: str) -> str:
    """Text of many lines for a terminal: what ``one_line`` escapes (ESC and BEL sequences that retitle or
    recolour it, carriage returns that overwrite a line, bidirectional overrides) escaped the same way, but
    line breaks (``\\n``) and tabs kept, since they are the text's own layout.  A name that must stay on one
    line (a file's path) is ``one_line``'d before it is put in the text."""
    return _DRIVES_A_TERMINAL.sub(lambda match: _escaped(match.group()), text)


def json_text(value: Any) -> str:
    """``value`` as indented JSON for a terminal or a pipe: UTF-8 kept readable (``ensure_ascii=False``), but what
    ``terminal_text`` escapes and JSON does not (DEL, C1 controls, line and paragraph separators, bidirectional
    overrides) written as ``\\uXXXX``, which every JSON reader decodes back to the same character. Such characters
    stand only inside strings (keys and values), so the escape keeps the document valid."""
    text = json.dumps(value, ensure_ascii=False, indent=2)
    return _DRIVES_A_TERMINAL.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def cut(text: str, limit: int) -> str:
    """A prefix of at most ``limit`` characters plus a marker saying how much was left out."""
    return text if len(text) <= limit else text[:limit] + CUT.format(len(text) - limit)


def preview(text: str, limit: int = 80) -> str:
    """A quoted, bounded, encodable rendering of client text for an error message."""
    return repr(cut(clean_text(text), limit))


def bounded(value: Any, *, chars: int = MAX_CHARS, items: int = MAX_ITEMS, depth: int = MAX_DEPTH) -> Any:
    """A JSON-ready, bounded copy of ``value`` (see the module's contract); never raises."""
    return _Bounder(chars, items).copy(value, depth)


def json_safe(value: Any) -> Any:
    """Like ``bounded`` with caps far above what our own responses hold."""
    return bounded(value, chars=10_000_000, items=1_000_000, depth=64)


class _Bounder:
    def __init__(self, chars: int, items: int) -> None:
        self.chars, self.items = chars, items

    def copy(self, value: Any, depth: int) -> Any:
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, str):
            return cut(clean_text(value), self.chars)
        if isinstance(value, int):
            return value if value.bit_length() <= MAX_INT_BITS else f"<integer of {value.bit_length()} bits>"
        if isinstance(value, float):
            return value if math.isfinite(value) else None
        if isinstance(value, Mapping | list | tuple):
            return self._container(value, depth)
        return cut(clean_text(f"<{type(value).__name__}>"), self.chars)  # no repr: it may be huge or raise

    def _container(self, value: Mapping[Any, Any] | list[Any] | tuple[Any, ...], depth: int) -> Any:
        if depth <= 0:
            return f"…[cut: {type(value).__name__} nested too deep]"
        if isinstance(value, Mapping):
            return self._mapping(value, depth)
        out = [self.copy(item, depth - 1) for item in value[: self.items]]
        if len(value) > self.items:
            out.append(f"…[cut: {len(value) - self.items} more items]")
        return out

    def _mapping(self, value: Mapping[Any, Any], depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for number, (key, item) in enumerate(value.items()):
            if number == self.items:
                out["…"] = f"[cut: {len(value) - self.items} more keys]"
                break
            name = cut(clean_text(key), self.chars) if isinstance(key, str) else str(self.copy(key, 0))
            out[name] = self.copy(item, depth - 1)
        return out
