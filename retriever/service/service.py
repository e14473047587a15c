"""The ``retrieve_memory`` tool as a service: what every MCP transport calls, minus the protocol.

Contract: ``MemoryService.call_tool(name, arguments, handshake_session=…)`` returns an MCP
``tools/call`` result as a plain dict (``content``, ``structuredContent``, ``isError``) and
never raises for bad arguments, timeouts or a missing or empty memory (``memory_not_found``,
``memory_empty``): those become ``isError`` results in seed 000's error shape, whatever the
arguments hold (lone surrogates, NaN, deep nesting, huge strings).
It raises ``UnknownTool`` only for a tool it does not have (a protocol error).
For every counted call it resolves the session (``session_id``, else the handshake's id),
gives triage that session's last 3 prompts, stores the prompt (last 5, 30-day TTL) and logs
the request and response.  Session history is scoped by memory (and user): the same
``session_id`` sent to two memories is two sessions, while replicas serving one memory (the same
``RETRIEVER_MEMORY_ID``, else the same git remote and folder, see ``identity``) share it through a
shared store; the log keeps the client's session id.  The request log is kept per memory too (the same
hash, ``memory_scope``): ``requests`` lists only this memory's calls, never those of another memory's
server sharing the store.
Logged arguments are a bounded, JSON-safe copy (``safe.bounded``), so the log always reads back.
Store I/O never holds up a call (``QueuedStore``): writes are queued, history waits at most
``RETRIEVER_STORE_TIMEOUT_SECONDS``, and a failing store is a warning in the response's
diagnostics while retrieval still answers.  The returned dict is the one logged: treat it as
read-only.  A background thread picks up edited files so that no query waits for a rescan.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from retriever.compat.graphs import GraphRetrieval
from retriever.config import Settings
from retriever.errors import (
    DocumentUnavailable,
    InvalidArguments,
    MemoryEmpty,
    MemoryNotFound,
    RetrievalTimeout,
    RetrieverError,
)
from retriever.pipeline.results import Request
from retriever.pipeline.triage import HISTORY_FOR_TRIAGE
from retriever.pipeline.validate import MAX_SESSION_ID_CHARS, session_id_value, validate_arguments
from retriever.retriever import RetrievalResult, Retriever
from retriever.service import memories, sources
from retriever.service.identity import memory_identity
from retriever.service.memories import USER_HEADER
from retriever.service.roots import UNLOADABLE, require_memory, usable_memory
from retriever.service.stores.base import RequestRecord, Store, StoreUnavailable
from retriever.service.stores.queue import QueuedStore, StoreSkipped
from retriever.service.tools import (
    GET_MEMORY,
    TOOL_NAME,
    UnknownTool,
    error_result,
    json_error,
    json_result,
)
from retriever.text.reader import is_folder
from retriever.text.safe import bounded, clean_text, cut, preview

log = logging.getLogger(__name__)



class MemoryService:
    """One retriever and one store, shared by every request of a server."""

    def __init__(self, retriever: Retriever, store: Store | QueuedStore, *, watch: bool = True) -> None:
        self.retriever = retriever
        settings = retriever.settings
        self.store = (
            store if isinstance(store, QueuedStore) else QueuedStore(store, read_timeout=settings.store_timeout_seconds)
        )
        self.graphs = GraphRetrieval(retriever, settings)
        self.identity = memory_identity(retriever.root, settings)
        self._scope = _scope(self.identity.value, None)  # the memory's sessions and its request log
        retriever.refresh_interval = float("inf")  # the watcher refreshes; queries never wait for a scan
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None
        if watch:
            self._watcher = threading.Thread(target=self._watch, name="memory-watcher", daemon=True)
            self._watcher.start()

    # -- the tool ------------------------------------------------------------------------------

    def call_tool(
        self,
        name: str,
        arguments: Any,
        *,
        handshake_session: str | None = None,
        transport: str = "mcp",
        user_id: str | None = None,
        logged_user: str | None = None,
    ) -> dict[str, Any]:
        """Run ``tools/call``; bad arguments, timeouts and a missing or empty memory (``memory_not_found``,
        ``memory_empty``) come back as ``isError`` results.

        ``user_id`` (optional, from the adapter) scopes session history to that user as well.  It is
        taken as given, an opaque name: adapters build it from canonical user ids (``canonical_user_id``;
        the HTTP adapter's names the key's scope too), so one user has one history whatever the spelling.
        ``logged_user`` is the canonical user the call was made for, where the transport names one: the
        request log's ``user_id`` (not the scope, which names a key).
        """
        if name in (GET_MEMORY, sources.READ_SOURCE):
            return self._json_tool(name, arguments, handshake_session, transport, _Started(logged_user))
        if name != TOOL_NAME:
            tools = f"{TOOL_NAME!r}, {GET_MEMORY!r} and {sources.READ_SOURCE!r}"
            raise UnknownTool(f"unknown tool {preview(str(name))}; this server has {tools}")
        started = _Started(logged_user)
        try:
            request = validate_arguments(arguments)  # the one validation: the pipeline's validate stage keeps it
        except InvalidArguments as exc:
            # Filed under the session_id argument when that alone is valid, as a valid call would be.
            session = _session(arguments) or _clean_session(handshake_session)
            return self._refused(started, exc, arguments, session, transport)
        session = request.session_id or _clean_session(handshake_session)
        try:
            result = self._retrieve(arguments, request, session, user_id)
            require_memory(result, self.retriever)
        except (RetrievalTimeout, MemoryNotFound, MemoryEmpty, DocumentUnavailable, *UNLOADABLE) as exc:
            return self._refused(started, exc, arguments, session, transport)
        return self._answered(started, result, arguments, session, user_id, transport)

    def _answered(
        self,
        started: _Started,
        result: RetrievalResult,
        arguments: Any,
        session: str | None,
        user_id: str | None,
        transport: str,
    ) -> dict[str, Any]:
        """The MCP result of a retrieval, once its prompt is remembered and the call logged."""
        response = result.to_mcp()
        # Two writes need the answer first; a full write queue is added to it afterwards (the log's warning
        # only when the record was dropped: then nothing else holds the response).
        warnings = response["structuredContent"]["diagnostics"]["warnings"]
        if not self._remember_prompt(session, user_id, arguments["prompt"]):
            warnings.append(_NOT_STORED)
        record = started.record(result.run.request_id, session, TOOL_NAME, transport, arguments, response, None)
        if not self._log(record):
            warnings.append(_NOT_LOGGED)
        return response

    def _refused(
        self,
        started: _Started,
        error: RetrieverError,
        arguments: Any,
        session: str | None,
        transport: str,
    ) -> dict[str, Any]:
        """An ``isError`` result for bad arguments, a timeout, a memory that is not there or a document it cannot read
        now, logged like any call."""
        response = error_result(error)
        record = started.record(str(uuid.uuid4()), session, TOOL_NAME, transport, arguments, response, error.code)
        self._log(record)
        return response

    def _retrieve(self, arguments: Any, request: Request, session: str | None, user_id: str | None) -> RetrievalResult:
        """The retrieval, given the session's history; store problems travel in the run as warnings."""
        warnings: list[str] = []
        history = self._history(session, user_id, warnings)
        warnings += self._store_warnings()
        return self.retriever.call(arguments, history=history, session_id=session, request=request, warnings=warnings)

    def _json_tool(
        self, name: str, arguments: Any, session: str | None, transport: str, started: _Started
    ) -> dict[str, Any]:
        """A tool answering JSON: seed 002's ``get_memory`` (the assistant memory, filtered by agent and query), or
        ``read_memory_source`` (the text a fact cites)."""
        try:
            answer = sources.answering(name, arguments)
            memory = usable_memory(self.retriever)
            with memory.reading():
                response, code = json_result(answer(memory)), None
        except (InvalidArguments, MemoryNotFound, MemoryEmpty, DocumentUnavailable) as exc:
            response, code = json_error(exc), exc.code
        rid, session = str(uuid.uuid4()), _clean_session(session)
        self._log(started.record(rid, session, name, transport, arguments, response, code))
        return response

    def memories_retrieve(
        self,
        body: Any,
        user_id: str | None,
        *,
        allowed_users: frozenset[str] | None = None,
        user_header: str = USER_HEADER,
    ) -> tuple[int, dict[str, Any]]:
        """Seed 003's ``POST /memories/retrieve``: (HTTP status, body).

        - 422 ``{"detail": [{type, loc, msg, input}]}`` for an invalid body, and for a user id that
          is not a plain name (``loc`` is ``["header", user_header]``); ``input`` is a bounded prefix.
        - 403 ``{"detail": "…"}`` when ``allowed_users`` is a set (the users the caller's key is
          bound to) and the user is not in it; ``None`` allows any user.
        """
        started = _Started()
        status, response, user = memories.answer(self.graphs, body, user_id, allowed_users, user_header)
        started.user = user
        code = {200: None, 403: "forbidden"}.get(status, response.get("error_code") or "validation_error")
        logged = bounded(response, items=1000, depth=12)  # the answer echoes the body, so it is bounded too
        rid = str(uuid.uuid4())
        self._log(started.record(rid, user, "memories/retrieve", "http", body, logged, code, "body"))
        return status, response

    def session_key(self, session: str, user_id: str | None = None) -> str:
        """The store's key for a session: the client's id, scoped by memory (and ``user_id``, compared as
        given: callers pass a name built from canonical user ids, see ``call_tool``)."""
        return f"{self._scope if user_id is None else _scope(self.identity.value, user_id)}:{session}"

    def _history(self, session: str | None, user_id: str | None, warnings: list[str]) -> list[str]:
        if session is None:
            return []
        try:
            return self.store.prompts(self.session_key(session, user_id))[-HISTORY_FOR_TRIAGE:]
        except StoreUnavailable as exc:
            # The failure itself was logged by the store's queue; a skip during the cool-down is routine.
            log.log(
                logging.DEBUG if isinstance(exc, StoreSkipped) else logging.WARNING,
                "session history unavailable: %s",
                exc.message,
            )
            warnings.append(f"session history unavailable: {exc.message}")
            return []

    def _remember_prompt(self, session: str | None, user_id: str | None, prompt: str) -> bool:
        """Queue the prompt into the session's history; False when the write queue was full."""
        return session is None or self.store.add_prompt(self.session_key(session, user_id), prompt)

    def _store_warnings(self) -> list[str]:
        status = self.store.status()
        if status.healthy:
            return []
        return [
            f"request may not be logged: the {status.kind} store is failing ({status.last_error}); "
            f"{status.pending} writes wait, {status.dropped} dropped"
        ]

    def _log(self, record: RequestRecord) -> bool:
        """Queue the record; False (and a log line) when the queue was full and it was dropped."""
        if self.store.log(record, scope=self._scope):
            return True
        log.debug("request %s not logged: the store's write queue is full", record.request_id)  # counted there
        return False

    def answers_quickly(self) -> bool:
        """True when a call is pure in-memory CPU work (no index to load first, no LLM to wait for)."""
        return self.retriever.loaded and self.retriever.llm is None

    # -- the rest of the server's surface -----------------------------------------------------------

    def requests(
        self, limit: int = 50, session_id: str | None = None, since: float | None = None
    ) -> list[dict[str, Any]]:
        """This memory's request log, newest first: never another memory's rows (raises ``StoreUnavailable``)."""
        return [r.to_dict() for r in self.store.requests(limit, session_id, since, scope=self._scope)]

    def health(self) -> dict[str, Any]:
        """Readiness for ``/healthz``, the same keys in every state (a probe or dashboard reads one shape):
        memory state, counts, skipped files, store kind, the root; ``error`` while the memory is missing or a
        failed first load is retried, ``refresh_error`` while the last good index answers (each None otherwise)."""
        if not self.retriever.loaded and is_folder(self.retriever.root):
            error = self.retriever.load_error
            return self._health(False, "error" if error else "loading", error=error)
        try:
            memory = self.retriever.memory
        except MemoryNotFound as exc:
            return self._health(False, "missing", error=exc.message)
        ready, state = memory.readiness()
        counts = (memory.documents_count, memory.sections_count, len(memory.skipped))
        return self._health(ready, state, counts, str(memory.root), refresh_error=memory.refresh_error)

    def _health(
        self,
        ready: bool,
        state: str,
        counts: tuple[int, int, int] = (0, 0, 0),
        root: str | None = None,
        error: str | None = None,
        refresh_error: str | None = None,
    ) -> dict[str, Any]:
        files, sections, skipped = counts
        return {
            "memory_ready": ready,
            "readiness_state": state,
            "files": files,
            "sections": sections,
            "skipped_files": skipped,
            "store": self.store.kind,
            "root": root or str(self.retriever.root),
            "error": error,
            "refresh_error": refresh_error or None,
        }

    def _watch(self) -> None:
        """Open the memory (so serving starts at once), then look for edited files periodically.

        Nothing ends this thread but ``close``: a first load that fails is retried every round (health
        says ``error`` meanwhile), and a failed refresh keeps the last good index (``Memory.refresh``).
        """
        seconds = self.retriever.settings.refresh_seconds
        reported: str | None = None  # each problem is logged once, not every round
        first = True
        while True:
            try:
                if self.retriever.loaded:
                    self.retriever.refresh()
                else:
                    _ = self.retriever.memory
                reported = None
            except MemoryNotFound as exc:  # the root may appear later; health says "missing" meanwhile
                if exc.message != reported:  # at start, the server's own warning has said it already (stderr)
                    log.log(logging.INFO if first else logging.WARNING, "%s", exc.message)
                reported = exc.message
            except Exception as exc:  # top-level handler of the watcher thread: it must never die
                problem = self.retriever.load_error or type(exc).__name__
                if problem != reported:
                    log.warning("loading the memory failed (%s); retrying every %.1f s", problem, seconds)
                    log.debug("load failure", exc_info=exc)
                reported = problem
            first = False
            if self._stop.wait(seconds):
                return

    def close(self) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join(timeout=5)
        self.store.close()


_NOT_LOGGED = "request not logged: the store's write queue is full"
_NOT_STORED = "session prompt not stored: the store's write queue is full"


class _Started:
    """When a counted call began, and the log record it makes when it ends."""

    def __init__(self, user: str | None = None) -> None:
        self.received, self.began = time.time(), time.perf_counter()
        self.user = user  # the canonical user the call was made for (the record's ``user_id``), where one is named

    def record(
        self,
        request_id: str,
        session: str | None,
        tool: str,
        transport: str,
        arguments: Any,
        response: dict[str, Any],
        code: str | None,
        wrap: str = "arguments",
    ) -> RequestRecord:
        """The call's record: ``status`` follows ``code``; arguments are logged as a bounded copy
        (non-object arguments as ``{wrap: value}``), so whatever a client sends reads back.  Its ``user_id``
        (``self.user``) tells apart two users' calls under the same ``session_id``."""
        logged = bounded(arguments) if isinstance(arguments, Mapping) else {wrap: bounded(arguments)}
        duration_ms = (time.perf_counter() - self.began) * 1000
        status = "ok" if code is None else "error"
        return RequestRecord(
            request_id, self.received, session, tool, transport, status, duration_ms, logged, response, code, self.user
        )


def _session(arguments: Any) -> str | None:
    """The ``session_id`` argument when it is valid (an invalid one is reported by validation)."""
    if not isinstance(arguments, Mapping):
        return None
    try:
        return session_id_value(arguments.get("session_id"))
    except InvalidArguments:
        return None


def _clean_session(session: str | None) -> str | None:
    """An adapter's session id, made storable: lone surrogates replaced, length capped."""
    if session is None:
        return None
    return cut(clean_text(session), MAX_SESSION_ID_CHARS).strip() or None


def memory_scope(root: Path, settings: Settings) -> str:
    """The scope the request log of the memory at ``root`` is kept under (``memory_identity``, hashed): what
    ``MemoryService`` writes with and what ``retriever requests --root`` reads with."""
    return _scope(memory_identity(root, settings).value, None)


def _scope(memory: str, user_id: str | None) -> str:
    """A short hash naming the memory (and user) that a session belongs to."""
    name = memory + ("" if user_id is None else "\0" + user_id)
    return hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:16]

