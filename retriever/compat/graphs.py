"""Seed 003's ``POST /memories/retrieve``: the user's own memory and shared graphs, blended.

Graphs map onto trees: the server's root is graph ``default``; ``RETRIEVER_GRAPHS`` registers
shared trees by id (one folder per team's shared memory, say); ``RETRIEVER_USER_TREES/<user>``
is a user's own tree, found from ``X-External-User-Id`` or ``X-On-Behalf-Of``.  The user's own tree
is always read (seed 003: graphs are blended "alongside the user's own memory"); ``graph_ids`` left
out (or null) adds ``default``, and ``[]`` adds no shared graph.  ``low_info_skipped`` says triage
skipped the query as small talk, never that there was no tree to read.

A user id is a name, never a path (``users.canonical_user_id``).  Its folder must be a real folder (not a
symlink) directly in the users root.  At most
``RETRIEVER_USER_TREES_CACHED`` user trees stay open, the least recently used closing first.

Each tree runs
the same pipeline; because relevance is calibrated (it means the same in every tree), facts
from all trees are merged into one ranking.  Results are per section (ids stable across runs),
plus relationship edges; each says ``scope`` (``user`` or ``graph``) and its ``graph_id``.

A per-user context cache answers a repeated request without retrieving again, until any of the
trees involved changes (its index version moves on a refresh).  It is keyed by the trees read (not
the ``graph_ids`` as sent: a graph listed twice is read once) and holds at most ``CACHE_ENTRIES``
answers and ``CACHE_BYTES`` of them (as JSON), the least recently used going first.
"""

from __future__ import annotations

import json
import os
import threading
import time
import unicodedata
import uuid
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from retriever.compat.users import canonical_user_id, check_apart
from retriever.config import Settings
from retriever.errors import MemoryNotFound
from retriever.pipeline.contracts import MemoriesRetrieveRequest
from retriever.pipeline.results import Fact, Relationship
from retriever.pipeline.triage import triage
from retriever.retriever import RetrievalResult, Retriever
from retriever.text import reader
from retriever.text.safe import cut, preview, single_line

DEFAULT_GRAPH = "default"
CACHE_ENTRIES = 256
CACHE_BYTES = 8 * 1024 * 1024  # of cached answers and their keys, as UTF-8 JSON; answers are ~5-60 kB
_IDS = uuid.UUID("5b3a3f0e-7c1d-4f5e-9a8b-2c6d1e0f4a7b")  # namespace for stable result ids


class UnknownGraph(ValueError):
    """A requested graph id is not registered."""

    def __init__(self, index: int, graph_id: str, known: Sequence[str]) -> None:
        super().__init__(f"unknown graph id {preview(graph_id)}; known: {cut(', '.join(known), 500) or 'none'}")
        self.index, self.graph_id = index, graph_id


@dataclass(frozen=True, slots=True)
class Tree:
    retriever: Retriever
    scope: str  # "user" | "graph"
    graph_id: str | None
    key: str  # for stable ids: "graph:<id>" or "user:<id>"


@dataclass(frozen=True, slots=True)
class _Cached:
    created: float
    versions: tuple[Any, ...]
    response: dict[str, Any]
    size: int  # bytes it holds, as ``_entry_size`` counts them


class GraphRetrieval:
    """The trees a server knows, their retrievers, and the per-user context cache."""

    def __init__(self, default: Retriever, settings: Settings) -> None:
        """Raises ``ConfigError`` when the users' trees lie inside a shared tree (``users.check_apart``)."""
        check_apart(settings.user_trees, {DEFAULT_GRAPH: default.root, **settings.graphs})
        self.default = default
        self.settings = settings
        self._retrievers: dict[Path, Retriever] = {}  # shared graphs: as many as configured
        self._users: OrderedDict[str, Retriever] = OrderedDict()  # by canonical id, least recently used first
        self._cache: OrderedDict[tuple[Any, ...], _Cached] = OrderedDict()
        self._cache_bytes = 0  # the sum of the entries' sizes
        self._lock = threading.Lock()
        self._listing: frozenset[str] = frozenset()  # the users root's names, as last read (``_listed``)

    def known_graphs(self) -> list[str]:
        return [DEFAULT_GRAPH, *sorted(self.settings.graphs)]

    def _retriever(self, root: Path) -> Retriever:
        with self._lock:
            if root not in self._retrievers:
                self._retrievers[root] = Retriever(root, self.settings, llm=self.default.llm)
            return self._retrievers[root]

    def user_retriever(self, user: str) -> Retriever | None:
        """The retriever of ``user``'s own tree (a canonical id), or None when there is no such folder.

        The folder must be the user's own: a real folder named ``user`` directly in the users root.  A
        symlink is refused even when it leads inside the users root (``bob -> alice`` would hand alice's
        tree to a key bound only to bob), as is anything resolving elsewhere; the user then has no tree,
        as when the folder is missing.  Checked on every request, so a folder swapped later is refused too.
        """
        root = self.settings.user_trees
        if root is None:
            return None
        folder = root / user
        try:
            if folder.is_symlink() or folder.resolve() != root.resolve() / user or not folder.is_dir():
                return None
            if not self._listed(root, user):
                return None
        except OSError:  # unreadable or vanished: the user simply has no tree now
            return None
        with self._lock:
            found = self._users.get(user) or Retriever(folder, self.settings, llm=self.default.llm)
            self._users[user] = found
            self._users.move_to_end(user)
            while len(self._users) > self.settings.user_trees_cached:
                self._users.popitem(last=False)
            return found

    def _listed(self, root: Path, user: str) -> bool:
        """Whether ``root`` lists a folder named ``user`` exactly (Unicode forms aside, as user ids are): on a
        case-insensitive file system (macOS, Windows) ``users/ALICE`` opens alice's folder, and every path check
        above passes.  The listing is kept, and read again when it lacks the name (a folder made since)."""
        name = unicodedata.normalize("NFC", user)
        with self._lock:
            if name not in self._listing:
                self._listing = frozenset(unicodedata.normalize("NFC", entry) for entry in os.listdir(root))
            return name in self._listing

    def trees(self, graph_ids: Sequence[str] | None, user_id: str | None) -> list[Tree]:
        """The trees a request reads (each graph once); raises ``UnknownGraph`` or ``InvalidUserId``."""
        trees = []
        user = canonical_user_id(user_id) if user_id is not None else None
        own = self.user_retriever(user) if user is not None else None
        if own is not None:
            trees.append(Tree(own, "user", None, f"user:{user}"))
        seen: set[str] = set()
        for index, graph in enumerate(graph_ids if graph_ids is not None else [DEFAULT_GRAPH]):
            if graph in seen:
                continue
            seen.add(graph)
            if graph == DEFAULT_GRAPH:
                trees.append(Tree(self.default, "graph", DEFAULT_GRAPH, f"graph:{graph}"))
            elif graph in self.settings.graphs:
                trees.append(Tree(self._retriever(self.settings.graphs[graph]), "graph", graph, f"graph:{graph}"))
            else:
                raise UnknownGraph(index, graph, self.known_graphs())
        return trees

    # -- the endpoint ---------------------------------------------------------------------------

    def retrieve(
        self, request: MemoriesRetrieveRequest, user_id: str | None, trees: Sequence[Tree] | None = None
    ) -> dict[str, Any]:
        """Seed 003's 200 response for a validated request, from ``trees`` (default: every tree it names, ``trees``;
        the service passes those that are there); ``user_id`` should be canonical."""
        began = time.perf_counter()
        user_id = canonical_user_id(user_id) if user_id is not None else None
        trees = self.trees(request.graph_ids, user_id) if trees is None else list(trees)
        key = (
            user_id,
            request.agent_id,
            tuple(tree.key for tree in trees),  # what is read, however often a graph was listed
            request.query,
            request.display_name,
            request.email,
        )
        versions = tuple(_version(t.retriever) for t in trees)
        hit = self._lookup(key, versions)
        if hit is not None:
            response = dict(hit.response)
            context = {
                **response["context"],
                "cache_hit": True,
                "source": "cache",
                "cache_age_seconds": round(time.time() - hit.created, 3),
                "cache_size": self._entries_of(user_id),
                "elapsed_seconds": round(time.perf_counter() - began, 6),
            }
            return {**response, "context": context, "elapsed_seconds": round(time.perf_counter() - began, 6)}
        response = self._fresh(request, user_id, trees, began)
        self._store(key, versions, response)
        response["context"]["cache_size"] = self._entries_of(user_id)
        return response

    def _entries_of(self, user_id: str | None) -> int:
        """The cache entries held for ``user_id``: ``cache_size`` counts the asker's own, since a count over
        every user would tell one how much the others ask (at most ``CACHE_ENTRIES`` keys to look at)."""
        with self._lock:
            return sum(key[0] == user_id for key in self._cache)

    def _lookup(self, key: tuple[Any, ...], versions: tuple[Any, ...]) -> _Cached | None:
        with self._lock:
            cached = self._cache.get(key)
            if cached is None or cached.versions != versions:
                return None  # a tree changed since: retrieve again
            self._cache.move_to_end(key)
            return cached

    def _store(self, key: tuple[Any, ...], versions: tuple[Any, ...], response: dict[str, Any]) -> None:
        """Cache ``response``; the least recently used go while over ``CACHE_ENTRIES`` or ``CACHE_BYTES``
        (an answer larger than ``CACHE_BYTES`` alone is not cached)."""
        size = _entry_size(key, response)
        with self._lock:
            old = self._cache.pop(key, None)
            self._cache_bytes -= old.size if old is not None else 0
            if size > CACHE_BYTES:
                return
            self._cache[key] = _Cached(time.time(), versions, response, size)
            self._cache_bytes += size
            while len(self._cache) > CACHE_ENTRIES or self._cache_bytes > CACHE_BYTES:
                self._cache_bytes -= self._cache.popitem(last=False)[1].size

    def _fresh(
        self, request: MemoriesRetrieveRequest, user_id: str | None, trees: list[Tree], began: float
    ) -> dict[str, Any]:
        answers = [(tree, tree.retriever.retrieve(request.query)) for tree in trees]
        low_info = all(r.run.skipped for _, r in answers) if answers else _small_talk(request.query)
        facts = sorted(((f, tree) for tree, r in answers for f in r.facts), key=lambda p: -p[0].relevance_score)
        facts = facts[: self.settings.top_k]
        results = [] if low_info else _section_results(facts) + _edge_results(answers)
        entities = [] if low_info else _entities(answers)
        statements = [f.statement for f, _ in facts] if not low_info else []
        prompt = None if low_info else render_prompt(request, statements, entities)
        elapsed = round(time.perf_counter() - began, 6)
        return {
            "query": request.query,
            "user_id": user_id or "anonymous",
            "agent_id": request.agent_id,
            "elapsed_seconds": elapsed,
            "prompt": prompt,
            "context": {
                "data": {"entities": entities, "facts": statements},
                "prompt": prompt,
                "elapsed_seconds": elapsed,
                "cache_hit": False,
                "cache_age_seconds": None,
                "source": "live",
                "prefetch_in_flight": False,
                "cache_size": 0,
            },
            "retrieval": {
                "low_info_skipped": low_info,
                "results": results,
                "prompt": prompt,
                "error": None,
                "elapsed_seconds": elapsed,
                "result_count": len(results),
            },
        }


def _small_talk(query: str) -> bool:
    """Whether triage skips ``query`` as small talk, asked of the query itself when no tree is read
    (``graph_ids: []`` and no tree of the user's own): an empty read is not chit-chat."""
    return triage(query).decision == "skip"


def _entry_size(key: tuple[Any, ...], response: dict[str, Any]) -> int:
    """What a cache entry holds, in bytes of UTF-8 JSON: its answer and its key (both echo the request)."""
    return len(json.dumps([key, response], ensure_ascii=False, default=str).encode("utf-8"))


def _version(retriever: Retriever) -> tuple[Any, ...]:
    """What changes whenever a refresh changes the tree's index."""
    try:
        memory = retriever.memory
    except MemoryNotFound:
        return ("missing",)
    return memory.version


def _times(tree: Tree, fact: Fact) -> tuple[str | None, str | None]:
    """(created_at, valid_at): git's first and last commit, else front-matter dates, else the file's time."""
    memory = tree.retriever.memory
    created, valid = fact.when.created_at, fact.when.valid_at
    if created and valid:
        return created, valid
    mtime = reader.modified_at(memory.root, fact.rel_path)
    stamp = datetime.fromtimestamp(mtime, UTC).isoformat() if mtime is not None else None
    return created or stamp, valid or stamp


def _section_results(facts: list[tuple[Fact, Tree]]) -> list[dict[str, Any]]:
    """One result per section, in the order of its best fact; content is its facts."""
    grouped: dict[tuple[str, str, str], list[tuple[Fact, Tree]]] = {}
    for fact, tree in facts:
        grouped.setdefault((tree.key, fact.rel_path, fact.tree_path), []).append((fact, tree))
    out = []
    for (tree_key, rel_path, tree_path), members in grouped.items():
        fact, tree = members[0]
        created, valid = _times(tree, fact)
        out.append(
            {
                "id": str(uuid.uuid5(_IDS, f"{tree_key}/{rel_path}#{tree_path}")),
                "name": tree_path.split(" > ")[-1],
                "content": " ".join(f.statement.rstrip(".") + "." for f, _ in members),
                "created_at": created,
                "valid_at": valid,
                "source_name": None,
                "target_name": None,
                "source_descriptions": [tree_path, f"{fact.source_path}:{fact.lines[0]}-{fact.lines[1]}"],
                "scope": tree.scope,
                "graph_id": tree.graph_id,
            }
        )
    return out


def _edge_results(answers: list[tuple[Tree, RetrievalResult]]) -> list[dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for tree, result in answers:
        for edge in result.run.retrieval.relationships if result.run.retrieval else ():
            out.setdefault(_edge_id(tree, edge), _edge(tree, edge))
    return list(out.values())


def _edge_id(tree: Tree, edge: Relationship) -> str:
    return str(uuid.uuid5(_IDS, f"{tree.key}/{edge.source}|{edge.type}|{edge.target}"))


def _edge(tree: Tree, edge: Relationship) -> dict[str, Any]:
    return {
        "id": _edge_id(tree, edge),
        "name": edge.type,
        "content": f"{edge.source} {edge.type.replace('_', ' ')} {edge.target}",
        "created_at": None,
        "valid_at": None,
        "source_name": edge.source,
        "target_name": edge.target,
        "source_descriptions": [
            f"front matter of {edge.source}" if edge.type != "links_to" else f"link in {edge.source}"
        ],
        "scope": tree.scope,
        "graph_id": tree.graph_id,
    }


def _entities(answers: list[tuple[Tree, RetrievalResult]]) -> list[dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for _, result in answers:
        for entity in result.run.retrieval.entities if result.run.retrieval else ():
            summary = entity.properties.get("summary")
            out.setdefault(entity.label, {"name": entity.label, "summary": str(summary) if summary else None})
    return list(out.values())


def render_prompt(request: MemoriesRetrieveRequest, facts: Sequence[str], entities: Sequence[Mapping[str, Any]]) -> str:
    """The context block an agent would inject into its system prompt (chat parity).  Every value in it is one
    line with its angle brackets made harmless (``_inert``): a page's summary written over several lines had closed
    the block and opened a ``<system>`` one of its own."""
    lines = ["<memory>"]
    if request.display_name or request.email:
        who = _inert(request.display_name or "")
        lines.append(f"User: {who} <{_inert(request.email)}>".strip() if request.email else f"User: {who}")
    if facts:
        lines += ["Relevant facts:", *[f"- {_inert(f)}" for f in facts]]
    if entities:
        lines += [
            "Entities:",
            *[f"- {_inert(e['name'])}" + (f": {_inert(e['summary'])}" if e["summary"] else "") for e in entities],
        ]
    lines.append("</memory>")
    return "\n".join(lines)


def _inert(value: str) -> str:
    """``value`` on one line, control characters escaped, and ``<``/``>`` as the look-alike ``‹``/``›``: nothing a
    memory or a caller writes can end the ``<memory>`` block, start a line, or open a tag of its own."""
    return single_line(value).replace("<", "‹").replace(">", "›")
