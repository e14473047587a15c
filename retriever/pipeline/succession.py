"""Which documents of a retrieval supersede which, and how far the superseded ones' statements are scaled.

Contract: ``scales(best, memory)`` takes each read document's best rank value and returns, for each superseded
document whose successor was read too, the factor that brings its best to ``SUCCESSOR_MARGIN`` of the
successor's best (documents not listed keep their values).  For a question asking what held before
(``scales(…, earlier=True)``: "Which engine was originally chosen?") the roles turn: the superseded document takes
the better best of the two, and the successor is brought to ``SUCCESSOR_MARGIN`` of it (of several read documents
one record superseded, those at ``EARLIER_SHARE`` of the best of them or more).  A chain of records is ordered whole,
newest first (oldest first when ``earlier``), whatever order the documents and links come in; links that lead back
to where they start, anywhere in the memory, are left out (``Memory.supersession_cycles``), even where the question
reads only part of the cycle.  The successor is named by the old document's ``superseded_by`` or by the new one's
``supersedes`` front matter (``memory.resolve``).
``predecessors(path, memory)`` are the documents ``path``'s ``supersedes`` names, except over a link on a cycle.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from retriever.memory.memory import Memory
from retriever.memory.supersession import links
from retriever.pipeline.signals import EARLIER_SHARE, SUCCESSOR_MARGIN
from retriever.text import vocabulary


def scales(best: Mapping[str, float], memory: Memory, *, earlier: bool = False) -> dict[str, float]:
    """Superseded document (and its successor, when ``earlier``) → the factor its statements' rank values are
    scaled by (see the module docstring).  The same for any order of ``best`` and of the front matter's links."""
    pairs = sorted(set(successions(best, memory)))
    if pairs:  # a cycle's links, worked out over the whole memory, say nothing of which record is newer
        on_cycles = memory.supersession_cycles()
        pairs = [pair for pair in pairs if pair not in on_cycles]
    final = _earlier(best, pairs) if earlier else _later(best, pairs)
    return {doc: value / best[doc] for doc, value in final.items() if best[doc] > 0 and value != best[doc]}


def _later(best: Mapping[str, float], pairs: Sequence[tuple[str, str]]) -> dict[str, float]:
    """Each superseded document at most ``SUCCESSOR_MARGIN`` of its successor's value once the successor is
    scaled itself: in a chain the oldest record ends last, however the pairs come."""
    value = dict(best)
    for _ in range(len(pairs)):  # a chain of n links settles within n passes (no cycle is left)
        changed = False
        for old, new in pairs:
            if value[old] > SUCCESSOR_MARGIN * value[new]:
                value[old], changed = SUCCESSOR_MARGIN * value[new], True
        if not changed:
            break
    return value


def _earlier(best: Mapping[str, float], pairs: Sequence[tuple[str, str]]) -> dict[str, float]:
    """The roles turned: each superseded document the question's words reach takes at least its successor's
    value, and each successor then ends at ``SUCCESSOR_MARGIN`` of the lowest of those predecessors.  A chain
    is turned whole, its oldest record first; newest records are raised from and lowered last."""
    rivals: dict[str, float] = {}  # each successor's best predecessor
    for old, new in pairs:
        rivals[new] = max(rivals.get(new, 0.0), best[old])
    turned = [(o, n) for o, n in pairs if best[o] > 0 and best[n] > 0 and best[o] >= EARLIER_SHARE * rivals[n]]
    depth = _depths(turned)
    value = dict(best)
    for old, new in sorted(turned, key=lambda pair: depth[pair[0]]):  # from the newest record down
        value[old] = max(value[old], value[new])
    for old, new in sorted(turned, key=lambda pair: -depth[pair[0]]):  # from the oldest record up
        value[new] = min(value[new], SUCCESSOR_MARGIN * value[old])
    return value


def _depths(pairs: Sequence[tuple[str, str]]) -> dict[str, int]:
    """How many links below the newest record of its chain each document is (the longest way down)."""
    depth = dict.fromkeys([doc for pair in pairs for doc in pair], 0)
    for _ in range(len(pairs)):
        changed = False
        for old, new in pairs:
            if depth[old] < depth[new] + 1:
                depth[old], changed = depth[new] + 1, True
        if not changed:
            break
    return depth


def predecessors(path: str, memory: Memory) -> list[str]:
    """The documents ``path``'s front matter names as superseded by it (``supersedes``), except those named over a
    link on a supersession cycle (``Memory.supersession_cycles``)."""
    written = links(path, memory.document(path).front_matter, memory.resolve)
    named = [old for (old, _), key, _ in written if key == vocabulary.SUPERSEDES]
    if not named:
        return []
    on_cycles = memory.supersession_cycles()
    return list(dict.fromkeys(old for old in named if (old, path) not in on_cycles))


def successions(paths: Iterable[str], memory: Memory) -> Iterator[tuple[str, str]]:
    """(superseded document, its successor) for the pairs among ``paths`` that front matter links either way."""
    read = set(paths)
    for path in sorted(read):
        for (old, new), _, _ in links(path, memory.document(path).front_matter, memory.resolve):
            if old in read and new in read:
                yield old, new
