"""A ``.gitignore``'s bytes as the rules the walk applies, in bounded time and memory.

Contract: ``compiled(data, max_bytes, max_lines)`` gives (rules, why lines were left out, or None): a file of plain
names, suffixes and anchored paths as ``Plain`` rules, matched without pathspec; any other through pathspec.
- Lines end at ``\\n`` only, as git reads them.  The first ``max_bytes`` and ``max_lines`` apply; each file is
  matched against every rule at every refresh, so a longer file's rest is left out, and said.
- A line that is no valid pattern (``!``, a trailing backslash, ``[z-a]``), or one over ``MAX_PATTERN_CHARS``, is
  left out, as git leaves an invalid one out, and the others apply; the reason names the first such line.
- Rules are matched by RE2 where it is installed (``pathspec[re2]``: linear time; Python's ``re`` backtracks, and
  "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*c" against a name of 250 letters hung every walk).  Rules RE2 cannot hold at once
  are cut to the first half it can, and said.  Never raises.
- Kept by content and bounds (64 files, ~2.5 MB held for a 0.9 MB file): a server's refresh reads the tree's
  ``.gitignore`` files every two seconds, and compiling a long one took a second.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from retriever.text.safe import preview

if TYPE_CHECKING:
    import pathspec

MAX_GITIGNORE_BYTES = 1 << 20  # past this (1 MiB) a .gitignore is read no further
MAX_GITIGNORE_LINES = 1_000  # of a .gitignore's lines, those that apply (real ones hold a few dozen)
MAX_PATTERN_CHARS = 4_096  # of one line: RE2 spent 21 s on a 900 KB line, then refused it
BAD_LINES_NAMED = 5  # of a .gitignore's invalid lines, the first is shown and the next ones' numbers, then a count

# RE2's error for rules it cannot hold ("failed to compile Set"); none where RE2 is not installed, and pathspec
# then matches with Python's re (backtracking): the walk still works.
_SET_TOO_LARGE: tuple[type[Exception], ...] = ()
try:
    from re2 import error as _re2_error

    _SET_TOO_LARGE = (_re2_error,)
except ImportError:
    pass


class _TooLong(ValueError):
    """A line RE2 cannot compile on its own, or over ``MAX_PATTERN_CHARS``: left out like an invalid one."""

    msg = "too long to match"


class Matcher(Protocol):
    """What the walk asks of a set of ignore rules: ``pathspec.PathSpec``, ``Plain`` or ``repo_ignores.Above``."""

    def match_file(self, file: str) -> bool: ...


_SIMPLE = re.compile(r"(/?)(\*?)([^*?\[\]\\!#]+?)(/?)")  # "name", "/a/b", "*.pyc", "build/": no other glob


@dataclass(frozen=True, slots=True)
class Plain:
    """The rules of a ``.gitignore`` of plain names, suffixes ("*.pyc") and anchored paths only (as most are),
    matched as git matches them without compiling them: pathspec and RE2 cost a query ~10 ms to load.  ``of``
    gives None for any other line (a negation, a glob, an escape), which pathspec then matches."""

    rules: tuple[tuple[tuple[str, ...], bool, bool, bool], ...]  # (segments, anchored, a suffix, folders only)

    @classmethod
    def of(cls, lines: list[str]) -> Plain | None:
        rules = []
        for raw in lines:
            line = raw.removesuffix("\r").rstrip(" ")
            if not line or line.startswith("#"):
                continue
            found = _SIMPLE.fullmatch(line)
            if found is None or (found[2] and (found[1] or "/" in found[3])) or "//" in found[3]:
                return None  # a negation, a glob, an escape, an anchored suffix: pathspec's to match
            lead, star, body, trail = found.groups()
            segments = tuple(body.split("/"))
            rules.append((segments, bool(lead) or len(segments) > 1, bool(star), bool(trail)))
        return cls(tuple(rules))

    def match_file(self, file: str) -> bool:
        folder = file.endswith("/")
        parts = file.rstrip("/").split("/")
        return any(self._matches(rule, parts, folder) for rule in self.rules)

    @staticmethod
    def _matches(rule: tuple[tuple[str, ...], bool, bool, bool], parts: list[str], folder: bool) -> bool:
        segments, anchored, suffix, folders_only = rule
        if anchored:
            n = len(segments)
            return parts[:n] == list(segments) and (len(parts) > n or folder or not folders_only)
        name = segments[0]
        return any(
            (part.endswith(name) if suffix else part == name) and (i < len(parts) - 1 or folder or not folders_only)
            for i, part in enumerate(parts)
        )


@functools.lru_cache(maxsize=64)
def compiled(data: bytes, max_bytes: int, max_lines: int) -> tuple[Matcher, str | None]:
    """The rules of a ``.gitignore`` holding ``data`` (read up to ``max_bytes`` + 1), and why lines were left out."""
    over = len(data) > max_bytes
    text = data.decode("utf-8", errors="replace").removesuffix("\n")  # "a\n" is one line, as git reads it
    lines = [line.removesuffix("\r") for line in text.split("\n")] if text else []
    cut = None
    if over:  # the lines that fit still apply: none would index all that it hides
        lines = lines[: data[:max_bytes].count(b"\n")]
        cut = f"it is over {max_bytes >> 20} MiB: only its first {len(lines):,} lines apply; shorten it"
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        cut = f"it has over {max_lines:,} lines: only its first {max_lines:,} apply; shorten it"
    plain = Plain.of(lines)
    if plain is not None:  # every line plain: nothing to compile, nor to load pathspec for
        return plain, cut
    spec, bad = rules(lines)
    return spec, "; ".join(why for why in (cut, bad) if why) or None


def rules(lines: list[str]) -> tuple[pathspec.PathSpec[Any], str | None]:
    """``lines`` as gitignore rules, without the lines that are no valid pattern, and why (None: all are).

    Compiled at once; only when that fails is each line compiled on its own to find the bad ones (linear
    either way), and the rest compiled together, in their order."""
    try:
        return _spec(lines)
    except (ValueError, re.error):
        pass
    bad: list[tuple[int, str, Exception]] = []
    for number, line in enumerate(lines, start=1):
        try:
            _spec([line])
        except (ValueError, re.error) as exc:
            bad.append((number, line, exc))
    left_out = {number for number, _, _ in bad}
    spec, cut = _spec([line for number, line in enumerate(lines, start=1) if number not in left_out])
    return spec, "; ".join(why for why in (cut, _left_out(bad) if bad else None) if why) or None


def _spec(lines: list[str]) -> tuple[pathspec.PathSpec[Any], str | None]:
    """``lines`` compiled, or as many of the first of them as RE2 can hold in one set, and the reason when that is
    not all.  Raises ``ValueError`` or ``re.error`` for a line that is no pattern (``_TooLong`` for one too long)."""
    import pathspec  # only trees with a .gitignore need it (a warm `retriever query` starts faster without)

    if any(len(line) > MAX_PATTERN_CHARS for line in lines):
        raise _TooLong
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines), None
    except _SET_TOO_LARGE:
        if len(lines) <= 1:
            raise _TooLong from None
    kept = len(lines) // 2
    spec, _ = _spec(lines[:kept])
    return spec, f"its rules are too many to match at once: only its first {kept:,} lines apply; shorten it"


def _left_out(bad: list[tuple[int, str, Exception]]) -> str:
    """The reason a ``.gitignore`` with invalid lines is listed: the first line shown, the next numbered."""
    number, line, exc = bad[0]
    why = exc.msg if isinstance(exc, re.error | _TooLong) else "not a pattern git reads"
    others = [str(n) for n, _, _ in bad[1:BAD_LINES_NAMED]]
    others += [f"{len(bad) - BAD_LINES_NAMED} more"] if len(bad) > BAD_LINES_NAMED else []
    also, them = "", "it"
    if others:
        listed = others[0] if len(others) == 1 else f"{', '.join(others[:-1])} and {others[-1]}"
        also = f", and so is the one at line {listed}" if len(bad) == 2 else f", and so are those at lines {listed}"
        them = "them"
    return (
        f"the pattern at line {number} ({preview(line, 40)}) is invalid ({why}){also}: git leaves such lines "
        f"out, and so does the retriever, which applies the file's other lines; fix or remove {them}"
    )
