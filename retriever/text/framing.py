"""A statement as it is scored and embedded: its own text, framed when it is too short to stand alone.

Contract: ``framed(unit, section, speaker)`` is ``unit.text``, prefixed by its parent list item when it has one
and fewer than ``FRAMED_ITEM_WORDS`` words ("Owner: Olena" under "Riverbed"), else by its section's title when it
has fewer than ``SHORT_WORDS`` words and a heading ("Hotels: Up to 130 euros."), and by ``speaker`` (of the turn
it continues, which it does not name itself: ``pipeline.speakers``) when given.  A table row keeps its own
(its cells name their columns), and a front-matter field too: it speaks of its document, not of the section it
opens, and is cited at the front-matter lines, which do not say that section's title.  It depends on the unit and
its section alone, so the index embeds it when the file is read (``memory.vectors.document_vectors``).
"""

from __future__ import annotations

from retriever.text.models import Section, Unit

SHORT_WORDS = 6
FRAMED_ITEM_WORDS = 12


def framed(unit: Unit, section: Section, speaker: str | None = None) -> str:
    """The unit's text with its frame (see the module contract)."""
    text = unit.text if speaker is None else f"{speaker}: {unit.text}"
    words = len(unit.text.split())
    if unit.context and words < FRAMED_ITEM_WORDS:
        return f"{unit.context.rstrip(' :')}: {text}"
    if words < SHORT_WORDS and section.heading_path and unit.kind not in ("row", "field"):
        return f"{section.title.rstrip(' :')}: {text}"
    return text
