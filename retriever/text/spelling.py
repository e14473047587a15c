"""British and American spellings: one word for both, before stemming.

Snowball stems by suffix, so "colour" and "color", "organisation" and "organization", "licence" and
"license" stay apart, and a memory that mixes them (most handbooks do: one page says "behaviour",
seventy say "behavior") answers a question in one spelling from only part of itself.  The analyser
reads each British form of ``data/spelling_en.tsv`` as its American twin, at index and query time
alike, so either spelling finds both.

Contract: ``american(word)`` is the American spelling of a lower-case British ``word``, or ``word``
itself.  The table (1,713 pairs of inflected forms, from breame, Apache-2.0: see its header and
``data/NOTICE``) is read once, on first use (~1 ms); a missing or unreadable table logs a warning and
leaves every word as it is.
"""

from __future__ import annotations

import logging
from functools import cache
from pathlib import Path

log = logging.getLogger(__name__)

TABLE_PATH = Path(__file__).with_name("data") / "spelling_en.tsv"


def parse(text: str) -> dict[str, str]:
    """British → American pairs of a table's text: ``british<TAB>american`` lines, ``#`` comments and blank lines
    skipped, a line without exactly two different lower-case words passed over."""
    pairs: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        words = line.split("\t")
        if len(words) != 2:
            continue
        british, american = (w.strip() for w in words)
        if british != american and british.isalpha() and american.isalpha() and british.islower():
            pairs[british] = american.lower()
    return pairs


@cache
def _pairs() -> dict[str, str]:
    try:
        return parse(TABLE_PATH.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("cannot read the spelling table %s (%s): British and American words stay apart", TABLE_PATH, exc)
        return {}


def american(word: str) -> str:
    """The American spelling of ``word`` (lower case), or ``word`` where it has no British form in the table."""
    return _pairs().get(word, word)
