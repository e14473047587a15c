"""Text that was UTF-8, read as Windows-1252 and saved again as UTF-8 ("donâ€™t" for "don’t", "cafÃ©" for "café").

A wiki copied through a tool that guessed the wrong encoding keeps such text: the retriever serves it as written
(it is valid UTF-8), and a reader cannot search for "don’t" in it.  Contract: ``mojibake(tree)`` yields a warning
for the first line of each file that holds such a run, with the run as written, what it was and how many lines of
the file hold one.  A run is two or more characters of Windows-1252's upper half, the first a UTF-8 lead byte's
letter (Â-ô), that encoded as Windows-1252 decode as UTF-8: "SÃO PAULO", "naïve" or "Ä" alone are no run.  Each
line is scanned once, by one bounded pattern.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from retriever.lint.tree import Problem, Tree

# Bytes 0x80-0x9F as Windows-1252 reads them: 27 letters and marks outside Latin-1.
_CP1252_ONLY = "\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u0192\u02c6\u02dc\u2013\u2014\u2018-\u201e"
_CP1252_ONLY += "\u2020-\u2022\u2026\u2030\u2039\u203a\u20ac\u2122"
_CONTINUATION = "\u0080-\u00bf" + _CP1252_ONLY  # bytes 0x80-0xBF as read
# A UTF-8 lead byte (0xC2-0xF4) read as a letter, then its continuation bytes (0x80-0xBF) read as what they are.
_RUN = re.compile(f"[\u00c2-\u00f4][{_CONTINUATION}]{{1,3}}")
_SHOWN = 3  # runs named in a finding
# What a misread run was, to be taken for one: Latin-1 and Latin Extended, Greek and Cyrillic, general punctuation to
# miscellaneous symbols, and anything past the Basic Multilingual Plane (emoji).
_WAS = ((0x80, 0x24F), (0x370, 0x52F), (0x2000, 0x2BFF), (0x10000, 0x10FFFF))


def mojibake(tree: Tree) -> Iterator[Problem]:
    for file in tree.files:
        found = [(number, run) for number, line in enumerate(file.lines, 1) for run in _runs(line)]
        if found:
            line, _ = found[0]
            runs = list(dict.fromkeys(f"{run!r} (was {_repaired(run)!r})" for _, run in found))
            named = ", ".join(runs[:_SHOWN]) + (f" and {len(runs) - _SHOWN} more" if len(runs) > _SHOWN else "")
            lines = len({number for number, _ in found})
            yield Problem(
                file.rel_path,
                line,
                f"{named}: UTF-8 text read as Windows-1252 and saved again ({lines} line{'s' * (lines != 1)}); "
                "convert the file back with `iconv -f utf-8 -t cp1252` into a new file, or re-export it as UTF-8",
            )


def _runs(line: str) -> Iterator[str]:
    """The misread runs of ``line``: of each match, the longest beginning that was UTF-8 ("Ã©" of "Ã©©")."""
    if not line.isascii():
        for match in _RUN.finditer(line):
            run = match.group()
            found = next((run[:k] for k in range(len(run), 1, -1) if _repaired(run[:k]) is not None), None)
            if found is not None:
                yield found


def _repaired(run: str) -> str | None:
    """What ``run`` was before it was misread, or None where it is no misread UTF-8 or was a character of a script
    the memory's text is not written in (``_WAS``): "ß“" of „Fuß“ reads as a valid N'Ko letter."""
    try:
        was = run.encode("cp1252").decode("utf-8")
    except UnicodeError:
        return None
    return was if was != run and all(_was(ch) for ch in was) else None


def _was(ch: str) -> bool:
    """A character misread UTF-8 is likely to have been: Latin, Greek, Cyrillic, punctuation and symbols, emoji."""
    point = ord(ch)
    return any(low <= point <= high for low, high in _WAS)
