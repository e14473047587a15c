"""Which documents of a retrieval supersede which, and how far the superseded ones' statements are scaled.

Contract: ``scales(best, memory)`` takes each read document's best rank value and returns, for each superseded
document whose successor was read too, the factor that brings its best to ``SUCCESSOR_MARGIN`` of the
successor's best (documents not listed keep their values).  For a question asking what held before
(``scales(…, earlier=True)``: "Which engine was originally chosen?") the roles turn: the superseded document takes
the better best of the two, and the successor is brought to ``SUCCESSOR_MARGIN`` of it (of several read documents
one record superseded, those at ``EARLIER_SHARE`` of the best of them or more).  The successor is named by the old
document's ``superseded_by`` or by the new one's ``supersedes`` front matter (``memory.resolve``).
``predecessors(path, memory)`` are the documents ``path``'s ``supersedes`` names.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from retriever.memory.memory import Memory
from retriever.text import vocabulary

# Where a superseded document's successor is among the statements read, the old one's best statement is
# brought to this share of the successor's best (all its statements scaled alike, keeping their order).
SUCCESSOR_MARGIN = 0.95
# For a question asking what held before, of the read documents one record superseded, those whose best is at least
# this share of the best of them take its place: a record that replaced several ("JSON log lines" and the engine)
# is asked about one of them, and the question's words reach that one.
EARLIER_SHARE = 0.5


def scales(best: Mapping[str, float], memory: Memory, *, earlier: bool = False) -> dict[str, float]:
    """Superseded document (and its successor, when ``earlier``) → the factor its statements' rank values are
    scaled by (see the module docstring)."""
    out: dict[str, float] = {}
    pairs = list(successions(best, memory))
    for old, new in pairs:
        if earlier:  # the question is named after the new record, and asks for an old one: it takes the new one's place
            rivals = max(best[o] for o, n in pairs if n == new)
            if best[old] > 0 and best[new] > 0 and best[old] >= EARLIER_SHARE * rivals:
                top = max(best[old], best[new])
                out[old] = max(out.get(old, 1.0), top / best[old])
                out[new] = min(out.get(new, 1.0), SUCCESSOR_MARGIN * top / best[new])
            continue
        limit = SUCCESSOR_MARGIN * best[new]
        if best[old] > limit:
            out[old] = min(out.get(old, 1.0), limit / best[old])
    return out


def predecessors(path: str, memory: Memory) -> list[str]:
    """The documents ``path``'s front matter names as superseded by it (``supersedes``)."""
    front = memory.document(path).front_matter
    named = [memory.resolve(name) for name in vocabulary.names(front.get(vocabulary.SUPERSEDES))]
    return [old for old in dict.fromkeys(named) if old is not None and old != path]


def successions(paths: Iterable[str], memory: Memory) -> Iterator[tuple[str, str]]:
    """(superseded document, its successor) for the pairs among ``paths`` that front matter links either way."""
    read = set(paths)
    for path in sorted(read):
        front = memory.document(path).front_matter
        for name in vocabulary.names(front.get(vocabulary.SUPERSEDED_BY)):
            new = memory.resolve(name)
            if new in read and new != path:
                yield path, new
        for name in vocabulary.names(front.get(vocabulary.SUPERSEDES)):
            old = memory.resolve(name)
            if old in read and old != path:
                yield old, path
