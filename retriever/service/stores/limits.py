"""What one request-log row may hold: a JSON value cut to a budget of bytes, with markers saying what went.

Contract: ``capped(value, limit)`` returns ``value`` itself when its compact UTF-8 JSON (the form
``encode_record`` stores) takes at most ``limit`` bytes; otherwise a copy that does, cut from the end:
a string keeps a prefix and ends ``…[cut: N more characters]``, an object keeps its first keys and
gains ``"…": "[cut: N more keys]"``, an array its first items and a last item ``…[cut: N more items]``.
An object stays an object (a record's ``arguments`` keep their ``prompt`` first).  ``value`` must be
JSON-ready (``safe.bounded`` or ``safe.json_safe`` output); sizes are computed, never guessed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from retriever.text.safe import CUT

KEY_BYTES = 1024  # a key longer than this is cut too (a client may send a megabyte as a name)
_RESERVE = 48  # room kept in a container for its own cut marker
_ROOM = 64  # below this a value is not started (a cut string's marker alone takes ~40): the container is cut


def size(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON."""
    return len(dumps(value).encode("utf-8"))


def dumps(value: Any) -> str:
    """Compact JSON without ASCII escapes (what the stores keep)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def capped(value: Any, limit: int) -> Any:
    """``value``, or a copy cut to at most ``limit`` bytes of JSON (see the module's contract)."""
    whole = size(value)
    if whole <= limit:
        return value
    cut_value, cut_size = _fit(value, limit)
    if cut_size <= limit and size(cut_value) <= limit:
        return cut_value
    marker = f"[cut: all {whole:,} bytes of JSON]"  # a limit too small for any structure
    return {"…": marker} if isinstance(value, Mapping) else f"…{marker}"


def _fit(value: Any, budget: int) -> tuple[Any, int]:
    """(value cut to about ``budget`` bytes, its exact size)."""
    if isinstance(value, str):
        return _fit_text(value, budget)
    if isinstance(value, Mapping):
        return _fit_mapping(value, budget)
    if isinstance(value, list):
        return _fit_list(value, budget)
    return value, size(value)


def _fit_text(text: str, budget: int) -> tuple[str, int]:
    whole = size(text)
    if whole <= budget:
        return text, whole
    room = budget - size(CUT.format(len(text)))
    prefix = text.encode("utf-8")[: max(room, 0)].decode("utf-8", "ignore")
    while prefix and (excess := size(prefix) - room) > 0:  # escapes made it longer than its bytes
        prefix = prefix[: max(len(prefix) - excess, 0)]
    kept = prefix + CUT.format(len(text) - len(prefix))
    return kept, size(kept)


def _fit_mapping(value: Mapping[str, Any], budget: int) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {}
    used = 2  # {}
    for index, (key, item) in enumerate(value.items()):
        comma = 1 if out else 0
        name, name_size = _fit_text(str(key), KEY_BYTES)
        room = budget - used - comma - name_size - 1 - _RESERVE
        if room < _ROOM or name in out:
            return _with_marker(out, used, f"[cut: {len(value) - index:,} more keys]")
        kept, kept_size = _fit(item, room)
        out[name] = kept
        used += comma + name_size + 1 + kept_size
    return out, used


def _with_marker(out: dict[str, Any], used: int, marker: str) -> tuple[dict[str, Any], int]:
    if "…" in out:  # a marker ``safe.bounded`` left: ours replaces it
        del out["…"]
        used = size(out)
    out["…"] = marker
    return out, used + (1 if len(out) > 1 else 0) + size("…") + 1 + size(marker)


def _fit_list(value: list[Any], budget: int) -> tuple[list[Any], int]:
    out: list[Any] = []
    used = 2  # []
    for index, item in enumerate(value):
        comma = 1 if out else 0
        room = budget - used - comma - _RESERVE
        if room < _ROOM:
            marker = f"…[cut: {len(value) - index:,} more items]"
            out.append(marker)
            return out, used + comma + size(marker)
        kept, kept_size = _fit(item, room)
        out.append(kept)
        used += comma + kept_size
    return out, used
