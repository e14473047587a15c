"""Supersession links between a memory's documents, and those a cycle of links makes meaningless.

A record names its successor (``superseded_by``) or what it replaced (``supersedes``).  Links that lead back to where
they start ("a superseded by b" and "b superseded by a": one front-matter slip, ``superseded_by`` written on the new
record) say nothing about which record is newer.  They are worked out once per memory version, over every document,
so that a question reading only part of a cycle reads it as a cycle too.

Contract: ``written(front_matter)`` is the (key, name) pairs a document's front matter writes, kept in its catalog
entry (``DocInfo.supersession``) so the whole memory's links are known without loading every document.
``resolved(path, written, resolve)`` and ``links(path, front_matter, resolve)`` yield each link as
((superseded, successor), key, name written); names that resolve to no document, or to the record itself, are
passed over.
``resolving_once(resolve)`` resolves each distinct name once.  ``acyclic(pairs)`` keeps the links no chain leads
back from; ``cycles(catalog, resolve)`` is the set of the memory's links that one does; ``settled`` gives those and
the records the other links make superseded (named by either side).
``superseded_only_by(path, front_matter, resolve, on_cycles)`` says a document's front matter calls it superseded
only by links on a cycle: it names no successor that is one, so it does not rank as superseded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from retriever.text import vocabulary

# A record replaces a few others, not thousands: past this many names of one key, a document's are passed over
# everywhere (the catalog, the score stage, ``retriever check``).  2,000 files naming 1,999 successors each took
# 17 s and 1.4 GB to a first question, 0.7 s and 320 MB with the cap.
MAX_NAMES = 100
Written = tuple[tuple[str, str], ...]  # (key, name) pairs: ``superseded_by`` and ``supersedes`` names, as written
Link = tuple[str, str]  # (superseded, successor)
Resolve = Callable[[str], "str | None"]


class Linked(Protocol):
    """A catalog entry: what its document's front matter writes of supersession."""

    @property
    def supersession(self) -> Written: ...


def written(front_matter: Mapping[str, Any]) -> Written:
    """The supersession names ``front_matter`` writes, with their keys: the first ``MAX_NAMES`` of each key, a
    number in a list read as a name (``vocabulary.names``; the linter also reports it as a ``field-type``)."""
    return tuple(
        (key, name)
        for written_as, key in vocabulary.SUPERSESSION_KEYS.items()  # "replaces" is read as "supersedes"
        for name in vocabulary.names(front_matter.get(written_as))[:MAX_NAMES]
    )


def resolved(path: str, names: Iterable[tuple[str, str]], resolve: Resolve) -> Iterator[tuple[Link, str, str]]:
    """Each link of ``names`` (``written``) as ((superseded, successor), key, name): ``superseded_by`` names the
    successor, ``supersedes`` the superseded.  A name resolving to no document, or to ``path`` itself, is passed over
    (often a title two documents share: the record still says it was superseded, and ``retriever check`` reports
    the name)."""
    for key, name in names:
        other = vocabulary.resolved_from(path, name, resolve)  # "../decisions/dec_0008.md", as links are written
        if other is not None and other != path:
            yield ((path, other) if key == vocabulary.SUPERSEDED_BY else (other, path)), key, name


def links(path: str, front_matter: Mapping[str, Any], resolve: Resolve) -> Iterator[tuple[Link, str, str]]:
    """Each supersession link ``path``'s front matter writes (``resolved`` of ``written``)."""
    return resolved(path, written(front_matter), resolve)


def cycles(catalog: Mapping[str, Linked], resolve: Resolve) -> frozenset[Link]:
    """The memory's (superseded, successor) links that a chain of links leads back from: linear in the links, each
    distinct name resolved once."""
    return settled(catalog, resolve)[0]


def settled(catalog: Mapping[str, Linked], resolve: Resolve) -> tuple[frozenset[Link], frozenset[str]]:
    """The memory's links on cycles (``cycles``), and the records a link off every cycle makes superseded,
    whichever side wrote it: a new record's ``supersedes: A`` alone makes A superseded, as A's own
    ``superseded_by`` would (a team adds the new record and seldom edits the old).  Linear in the links."""
    once = resolving_once(resolve)
    pairs = list({pair for path, info in catalog.items() for pair, *_ in resolved(path, info.supersession, once)})
    kept = acyclic(pairs)
    return frozenset(pairs) - frozenset(kept), frozenset(old for old, _ in kept)


def resolving_once(resolve: Resolve) -> Resolve:
    """``resolve``, each distinct name resolved once: many records name the same few successors."""
    known: dict[str, str | None] = {}

    def once(name: str) -> str | None:
        if name not in known:
            known[name] = resolve(name)
        return known[name]

    return once


def superseded_only_by(
    path: str, front_matter: Mapping[str, Any], resolve: Resolve, on_cycles: Callable[[], frozenset[Link]]
) -> bool:
    """``front_matter`` calls ``path`` superseded only by links on a cycle: no ``status: superseded``, and every
    ``superseded_by`` name it writes (``written``) resolves to a successor over a link in ``on_cycles()`` (asked
    only then: the memory's cycles are worked out on first use).  A name resolving to nothing, or to the record
    itself, still says the record was superseded, as it always has."""
    if vocabulary.status_superseded(front_matter):
        return False
    named = [name for key, name in written(front_matter) if key == vocabulary.SUPERSEDED_BY]
    if not named:
        return False
    cycles = on_cycles()
    return all((other := resolve(name)) is not None and (path, other) in cycles for name in named)


def acyclic(pairs: Sequence[Link]) -> list[Link]:
    """The (superseded, successor) links no chain of links leads back from, in their order: a cycle says nothing
    about which record is newer, so its links are left out (``retriever check`` reports them: lint rule
    ``supersession-cycle``), and the rest settle in as many passes as their longest chain.  Linear in the links
    (Kosaraju's strongly connected components)."""
    newer: dict[str, list[str]] = {}
    older: dict[str, list[str]] = {}
    for old, new in pairs:
        newer.setdefault(old, []).append(new)
        older.setdefault(new, []).append(old)
    component: dict[str, str] = {}
    for root in reversed(_finish_order(newer)):
        if root not in component:
            component[root] = root
            todo = [root]
            while todo:
                for prior in older.get(todo.pop(), ()):
                    if prior not in component:
                        component[prior] = root
                        todo.append(prior)
    return [(old, new) for old, new in pairs if component[old] != component[new]]


def _finish_order(newer: Mapping[str, list[str]]) -> list[str]:
    """Every document the links name, in the order a depth-first walk along them finishes it (no recursion)."""
    order: list[str] = []
    seen: set[str] = set()
    for start in [*newer, *(n for targets in newer.values() for n in targets)]:
        if start in seen:
            continue
        seen.add(start)
        stack = [(start, iter(newer.get(start, ())))]
        while stack:
            node, rest = stack[-1]
            step = next(rest, None)
            if step is None:
                stack.pop()
                order.append(node)
            elif step not in seen:
                seen.add(step)
                stack.append((step, iter(newer.get(step, ()))))
    return order
