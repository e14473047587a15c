"""The ``retrieve_memory`` tool as a service: what every MCP transport calls, minus the protocol.

Contract: ``MemoryService.call_tool(name, arguments, handshake_session=…)`` returns an MCP
``tools/call`` result as a plain dict (``content``, ``structuredContent``, ``isError``) and
never raises for bad arguments or timeouts: those become ``isError`` results in seed 000's
error shape.  It raises ``UnknownTool`` only for a tool it does not have (a protocol error).
For every counted call it resolves the session (``session_id``, else the handshake's id),
gives triage that session's last 3 prompts, stores the prompt (last 5, 30-day TTL) and logs
the full request and response.  A failing store is logged and named in the response's
diagnostics; retrieval still answers.  A background thread picks up edited files so that no
query waits for a rescan.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from retriever import assistant
from retriever.contracts import MemoriesRetrieveRequest
from retriever.errors import InvalidArguments, MemoryNotFound, RetrievalTimeout
from retriever.graphs import GraphRetrieval, UnknownGraph
from retriever.retriever import Retriever
from retriever.store import RequestRecord, Store, StoreUnavailable
from retriever.tools import (
    GET_MEMORY,
    TOOL_NAME,
    UnknownTool,
    error_result,
    json_error,
    json_result,
    validate_get_memory,
)
from retriever.triage import HISTORY_FOR_TRIAGE
from retriever.validate import validate_arguments

log = logging.getLogger(__name__)


class MemoryService:
    """One retriever and one store, shared by every request of a server."""

    def __init__(self, retriever: Retriever, store: Store, *, watch: bool = True) -> None:
        self.retriever = retriever
        self.store = store
        self.graphs = GraphRetrieval(retriever, retriever.settings)
        retriever.refresh_interval = float("inf")  # the watcher refreshes; queries never wait for a scan
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None
        if watch:
            self._watcher = threading.Thread(target=self._watch, name="memory-watcher", daemon=True)
            self._watcher.start()

    # -- the tool ------------------------------------------------------------------------------

    def call_tool(
        self, name: str, arguments: Any, *, handshake_session: str | None = None, transport: str = "mcp"
    ) -> dict[str, Any]:
        """Run ``tools/call``; bad arguments and timeouts come back as ``isError`` results."""
        if name == GET_MEMORY:
            return self._get_memory(arguments, handshake_session, transport)
        if name != TOOL_NAME:
            raise UnknownTool(f"unknown tool {name!r}; this server has {TOOL_NAME!r} and {GET_MEMORY!r}")
        started = _Started()
        session = _session(arguments) or handshake_session
        warnings: list[str] = []
        try:
            validate_arguments(arguments)
            history = self._history(session, warnings)
            result = self.retriever.call(arguments, history=history, session_id=session)
            response, code, request_id = result.to_mcp(), None, result.run.request_id
        except (InvalidArguments, RetrievalTimeout) as exc:
            response, code, request_id = error_result(exc), exc.code, str(uuid.uuid4())
        if code is None:
            self._remember_prompt(session, arguments["prompt"], warnings)
        self._log(started.record(request_id, session, name, transport, arguments, response, code), warnings)
        if warnings and code is None:
            response["structuredContent"]["diagnostics"]["warnings"].extend(warnings)
        return response

    def _get_memory(self, arguments: Any, session: str | None, transport: str) -> dict[str, Any]:
        """Seed 002's ``get_memory``: the assistant memory, filtered by agent and query."""
        started = _Started()
        try:
            agent, query = validate_get_memory(arguments)
            memory = self.retriever.memory
            with memory.reading():
                response, code = json_result(assistant.get_memory(memory, agent, query)), None
        except (InvalidArguments, MemoryNotFound) as exc:
            response, code = json_error(exc), exc.code
        self._log(started.record(str(uuid.uuid4()), session, GET_MEMORY, transport, arguments, response, code), [])
        return response

    def memories_retrieve(
        self, body: Any, user_id: str | None, *, allowed_users: frozenset[str] | None = None
    ) -> tuple[int, dict[str, Any]]:
        """Seed 003's ``POST /memories/retrieve``: (HTTP status, body); 422 with ``detail`` when invalid.

        ``allowed_users`` are the users the caller's API key may act for (None: any); another user,
        or none, answers 403.
        """
        if allowed_users is not None and user_id not in allowed_users:
            return 403, {"detail": "this API key may not read that user's memory; send a user id the key is bound to"}
        started = _Started()
        try:
            request = MemoriesRetrieveRequest.model_validate(body)
            status, response = 200, self.graphs.retrieve(request, user_id)
        except ValidationError as exc:
            detail = [{**e, "loc": ["body", *e["loc"]]} for e in json.loads(exc.json(include_url=False))]
            status, response = 422, {"detail": detail}
        except UnknownGraph as exc:
            detail = [
                {"type": "value_error", "loc": ["body", "graph_ids", exc.index], "msg": str(exc), "input": exc.graph_id}
            ]
            status, response = 422, {"detail": detail}
        except InvalidArguments as exc:  # a query the model accepts but retrieval cannot use (only spaces, say)
            detail = [{"type": "value_error", "loc": ["body", "query"], "msg": exc.message, "input": ""}]
            status, response = 422, {"detail": detail}
        code = None if status == 200 else "validation_error"
        record = started.record(str(uuid.uuid4()), user_id, "memories/retrieve", "http", body, response, code, "body")
        self._log(record, [])
        return status, response

    def _history(self, session: str | None, warnings: list[str]) -> list[str]:
        if session is None:
            return []
        try:
            return self.store.prompts(session)[-HISTORY_FOR_TRIAGE:]
        except StoreUnavailable as exc:
            log.warning("session history unavailable: %s", exc.message)
            warnings.append(f"session history unavailable: {exc.message}")
            return []

    def _remember_prompt(self, session: str | None, prompt: str, warnings: list[str]) -> None:
        if session is None:
            return
        try:
            self.store.add_prompt(session, prompt)
        except StoreUnavailable as exc:
            log.warning("session prompt not stored: %s", exc.message)
            warnings.append(f"session prompt not stored: {exc.message}")

    def _log(self, record: RequestRecord, warnings: list[str]) -> None:
        try:
            self.store.log(record)
        except StoreUnavailable as exc:
            log.warning("request %s not logged: %s", record.request_id, exc.message)
            warnings.append(f"request not logged: {exc.message}")

    def answers_quickly(self) -> bool:
        """True when a call is pure in-memory CPU work (no index to load first, no LLM to wait for)."""
        return self.retriever.loaded and self.retriever.llm is None

    # -- the rest of the server's surface -----------------------------------------------------------

    def requests(
        self, limit: int = 50, session_id: str | None = None, since: float | None = None
    ) -> list[dict[str, Any]]:
        """The request log, newest first (raises ``StoreUnavailable``)."""
        return [r.to_dict() for r in self.store.requests(limit, session_id, since)]

    def health(self) -> dict[str, Any]:
        """Readiness for ``/healthz``: memory state, counts, skipped files, store kind."""
        if not self.retriever.loaded and self.retriever.root.is_dir():
            return {
                "memory_ready": False,
                "readiness_state": "loading",
                "files": 0,
                "sections": 0,
                "skipped_files": 0,
                "store": self.store.kind,
            }
        try:
            memory = self.retriever.memory
        except MemoryNotFound as exc:
            return {
                "memory_ready": False,
                "readiness_state": "missing",
                "files": 0,
                "sections": 0,
                "skipped_files": 0,
                "store": self.store.kind,
                "error": exc.message,
            }
        ready, state = memory.readiness()
        return {
            "memory_ready": ready,
            "readiness_state": state,
            "files": memory.documents_count,
            "sections": memory.sections_count,
            "skipped_files": len(memory.skipped),
            "store": self.store.kind,
            "root": str(memory.root),
        }

    def _watch(self) -> None:
        """Open the memory (so serving starts at once), then look for edited files periodically."""
        try:
            _ = self.retriever.memory
        except MemoryNotFound as exc:
            log.warning("%s", exc.message)
        while not self._stop.wait(self.retriever.settings.refresh_seconds):
            try:
                self.retriever.refresh()
            except MemoryNotFound:
                continue  # the root may appear later; health says "missing" meanwhile
            except Exception:  # top-level handler of the watcher thread: it must never die
                log.exception(
                    "refreshing the memory failed; retrying in %.1f s", self.retriever.settings.refresh_seconds
                )

    def close(self) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join(timeout=5)
        self.store.close()


class _Started:
    """When a counted call began, and the log record it makes when it ends."""

    def __init__(self) -> None:
        self.received, self.began = time.time(), time.perf_counter()

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
        """The call's record: ``status`` follows ``code``; non-object arguments are logged as ``{wrap: value}``."""
        logged = dict(arguments) if isinstance(arguments, Mapping) else {wrap: arguments}
        duration_ms = (time.perf_counter() - self.began) * 1000
        status = "ok" if code is None else "error"
        return RequestRecord(
            request_id, self.received, session, tool, transport, status, duration_ms, logged, response, code
        )


def _session(arguments: Any) -> str | None:
    if isinstance(arguments, Mapping) and isinstance(arguments.get("session_id"), str):
        return arguments["session_id"].strip() or None
    return None
