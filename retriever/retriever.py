"""The library entry point: ``Retriever(root).retrieve(prompt)``.

Contract: ``retrieve`` returns a ``RetrievalResult`` whose ``structured`` dict is seed 000's
``structuredContent`` and whose ``text`` is the markdown report; it raises ``RetrieverError``
subclasses (``InvalidArguments``, ``RetrievalTimeout``) that adapters map to their protocols, and what a failed
load raised (``GitError``, ``ConfigError``) on every call until a retry, each ``refresh_interval``, loads.
A missing or empty tree is not an error: the result says ``memory_ready: false`` and, in its warnings, the path
and the next step.  Nor is a tree that failed to load while a watcher retries it (``refresh_interval`` infinite,
as in a server): the result says ``readiness_state: "error"`` and its warnings (and ``load_error``) say why.
``close()`` (or a ``with`` block) frees the index cache's database and lock and the LLM client's connections.
Loading the memory (building its index the first time) and refreshing it never count against a
retrieval's deadline, which starts once the memory is ready.  A call that waited a second or more
for the index to be built says so in ``diagnostics.warnings``; ``diagnostics.timings_ms["load"]``
is the time it waited for the memory (a load or a refresh; near zero otherwise).
``progress(phase, done, total)`` hears how loading, refreshing and reading a revision advance.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import logging
import math
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from retriever.config import Settings
from retriever.errors import MemoryNotFound, MemoryUnavailable, RetrieverError
from retriever.memory.index import Params
from retriever.memory.memory import Memory, MemoryChanged, Progress
from retriever.pipeline.context import Context, Run
from retriever.pipeline.pipeline import execute, new_run
from retriever.pipeline.results import Coverage, Fact, Request, Retrieval
from retriever.pipeline.validate import validate_history

log = logging.getLogger(__name__)

if TYPE_CHECKING:  # the LLM modules (and openai) load only when a model is configured
    from retriever.llm.client import LLMClient
    from retriever.llm.guided import LLMRun

DEFAULT_ROOT = "company_context"
_NOTE_WAITS_FROM = 1.0  # seconds: a call that waited this long for a first build says so


def default_root(environ: Mapping[str, str] | None = None) -> Path:
    """``$RETRIEVER_ROOT``, else ``./company_context``."""
    environ = os.environ if environ is None else environ
    return Path(environ.get("RETRIEVER_ROOT") or DEFAULT_ROOT)


@dataclass(frozen=True)
class RetrievalResult:
    """One retrieval: the report, structuredContent, and the typed data behind them."""

    text: str
    structured: Mapping[str, Any]
    run: Run

    @property
    def retrieval(self) -> Retrieval | None:
        """What was retrieved (facts, entities, relationships, excerpts, summary, coverage); a skipped small-talk
        prompt's is empty, with its reason as the summary."""
        return self.run.retrieval

    @property
    def facts(self) -> tuple[Fact, ...]:
        return self.run.retrieval.facts if self.run.retrieval else ()

    @property
    def summary(self) -> str:
        """The answer in a few sentences (``context_summary``): what to show first, where ``facts[0]`` is the best
        single statement."""
        return str(self.structured["retrieval"]["context_summary"])

    @property
    def coverage(self) -> Coverage:
        """How well the memory covers the question (``coverage_assessment``: comprehensive, partial, limited, none),
        from ``answerability``: the signal to compare across questions, where relevance scores rank one answer's
        facts."""
        return self.run.retrieval.coverage_assessment if self.run.retrieval else "none"

    @property
    def answerability(self) -> float | None:
        """The estimated probability (0..1) that the facts answer the question; None when nothing was retrieved."""
        return self.run.retrieval.answerability if self.run.retrieval else None

    def to_mcp(self) -> dict[str, Any]:
        """The MCP ``tools/call`` result: text content, structuredContent and ``isError``."""
        return {
            "content": [{"type": "text", "text": self.text}],
            "structuredContent": dict(self.structured),
            "isError": False,
        }


class Retriever:
    """Answers "what do we know about X?" from a markdown memory tree."""

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        settings: Settings | None = None,
        *,
        params: Params | None = None,
        progress: Progress | None = None,
        refresh_interval: float = 2.0,
        llm: LLMClient | None = None,
        at: str | None = None,
    ) -> None:
        self.root = Path(root) if root is not None else default_root()
        self.settings = settings or Settings.from_env()
        self.params = params
        self.refresh_interval = refresh_interval
        self._progress = progress
        self._memory: Memory | None = None
        self._refreshed = 0.0
        self._failed_at = 0.0
        self.load_error: str | None = None  # why the last attempt to load the memory failed; None once it loads
        self._load_failure: Exception | None = None  # what it raised: raised again until a retry loads
        self._lock = threading.Lock()
        self.at = at  # a git revision (commit, tag, branch or date): answer from the tree as it was then
        # The LLM, when a model is configured: guidance for the stages, offline fallback always.
        self.llm = llm if llm is not None else _client(self.settings)
        self._owns_llm = llm is None  # a client passed in is its caller's to close; one it made, ``close`` drops

    @property
    def loaded(self) -> bool:
        """Whether the memory has been opened (indexing a large tree takes a while the first time)."""
        return self._memory is not None

    @property
    def memory(self) -> Memory:
        """The loaded memory; raises ``MemoryNotFound`` when the root is not a folder, and whatever
        else loading raised (``load_error`` keeps a short account of it until a load succeeds)."""
        with self._lock:
            if self._memory is None:
                self._memory = self._load()
            return self._memory

    def failed_load(self) -> RetrieverError:
        """What stopped the last attempt to load the memory, to raise: a copy of the error it raised (without that
        raise's traceback), or, for an error of another kind, one naming ``load_error``."""
        failure = self._load_failure
        if isinstance(failure, RetrieverError):
            return copy.copy(failure).with_traceback(None)
        return MemoryUnavailable(f"the memory could not be loaded ({self.load_error}); it is retried")

    def _load(self) -> Memory:
        try:
            if self.at is not None:
                memory = Memory.at_revision(self.root, self.settings, self.at, self.params, self._progress)
            else:
                memory = Memory.open(self.root, self.settings, self.params, self._progress)
        except MemoryNotFound:
            self.load_error = None  # not a failure: "missing" says it
            raise
        except Exception as exc:
            detail = exc.message if isinstance(exc, RetrieverError) else f"{type(exc).__name__}: {exc}"
            self.load_error, self._failed_at, self._load_failure = detail[:300], time.monotonic(), exc
            raise
        self.load_error, self._load_failure = None, None
        self._refreshed = time.monotonic()
        return memory

    def close(self) -> None:
        """Close the index cache's database, its ``in-use`` lock (which ``retriever cache prune`` respects) and the
        LLM endpoint's connections (of a client it made), now rather than whenever the garbage collector finds
        them.  Call it when no retrieval is running; a later call opens the memory and the client again.
        ``with Retriever(root) as retriever:`` closes on leaving."""
        with self._lock:
            memory, self._memory = self._memory, None
            llm = self.llm if self._owns_llm else None
            if llm is not None:
                self.llm = None
        if memory is not None:
            memory.close()  # once the retrievals reading it have ended
        if llm is not None:
            llm.close()

    def _readiness(self, memory: Memory | None) -> tuple[bool, str]:
        readiness = memory.readiness() if memory else (False, "error" if self.load_error else "missing")
        if readiness[1] == "empty" and not self.root.is_dir():  # removed while open: the last index is of nothing
            return False, "missing"
        return readiness

    def _reopened_llm(self) -> None:
        """The LLM client made again after ``close`` dropped it (lazily: a closed retriever holds no client)."""
        with self._lock:
            if self.llm is None and self._owns_llm:  # without a model configured, ``_client`` is None again
                self.llm = _client(self.settings)

    def __enter__(self) -> Retriever:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def refresh(self) -> None:
        """Pick up added, changed and deleted files now (safe while other threads retrieve).  A root that now leads
        elsewhere (a release that swaps a symlink, ``current -> release-43``) is opened anew and swapped in: the old
        target had been served on, and once it was deleted, nothing."""
        memory = self.memory
        moved = self.at is None and _resolved(self.root) not in (None, memory.root)
        if not moved:
            memory.refresh(self._progress)
        else:
            fresh = Memory.open(self.root, self.settings, self.params, self._progress)
            with self._lock:
                old, self._memory = self._memory, fresh
            log.warning("memory root %s now leads to %s (was %s); opened it anew", self.root, fresh.root, memory.root)
            if old is not None:
                old.close()  # once the retrievals reading it have ended
        self._refreshed = time.monotonic()

    def _current_memory(self) -> tuple[Memory | None, bool]:
        """The memory a retrieval reads, and whether this call loaded it; None when the root is missing, or after a
        failed load while a watcher retries it (``refresh_interval`` infinite, as in a server).  Without one, what
        the failed load raised is raised again until ``refresh_interval`` has passed, then the load is retried: a
        library call raises while the cause stands (it had raised, then answered "not ready" for 2 s, then raised)."""
        retry = time.monotonic() - self._failed_at > self.refresh_interval
        loaded = False
        try:
            with self._lock:  # checked under the lock: a query waiting for a watcher's load sees how it ended
                failure = self._load_failure
                if self._memory is None and not retry and failure is not None and math.isfinite(self.refresh_interval):
                    # A copy without the last raise's traceback: raised again and again, one object had kept every
                    # caller's frames (47 MB after 5,000 calls).
                    raise copy.copy(failure).with_traceback(None) from None
                if self._memory is None and (retry or self.load_error is None):
                    self._memory, loaded = self._load(), True
                memory = self._memory
        except MemoryNotFound:
            return None, False
        if memory is not None and time.monotonic() - self._refreshed > self.refresh_interval:
            self.refresh()
            memory = self._memory or memory  # a root that now leads elsewhere was opened anew: answer from it
        return memory, loaded

    def retrieve(self, prompt: str, session_id: str | None = None, *, history: Sequence[str] = ()) -> RetrievalResult:
        """Retrieve ranked, cited facts for ``prompt``; ``history`` is the session's prior prompts."""
        arguments: dict[str, Any] = {"prompt": prompt}
        if session_id is not None:
            arguments["session_id"] = session_id
        return self.call(arguments, history=history)

    def call(
        self,
        arguments: Mapping[str, Any],
        *,
        history: Sequence[str] = (),
        session_id: str | None = None,
        request: Request | None = None,
        warnings: Sequence[str] = (),
    ) -> RetrievalResult:
        """Like ``retrieve`` but from raw tool arguments, validated as seed 000 says.

        A server passes what it resolved before the call: ``session_id`` (the argument, else the
        handshake's), ``request`` (``arguments`` already validated: they are not validated twice) and
        ``warnings`` of its own (a failing store), which the report lists after the memory's.
        """
        state = new_run(arguments, request=request)
        history = validate_history(history)
        self._reopened_llm()
        memory, loaded = self._current_memory()
        ready = time.monotonic()  # the deadline starts here: waiting for the index is not the question's time
        state = dataclasses.replace(state, timings_ms={"load": (ready - state.started) * 1000})
        deadline = ready + self.settings.deadline_seconds
        waited = ready - state.started
        built = loaded and memory is not None and memory.stats.rebuilt and waited >= _NOTE_WAITS_FROM
        notes = (_built_note(memory, waited),) if built and memory is not None else ()
        readiness = self._readiness(memory)
        with memory.reading() if memory else contextlib.nullcontext():
            ctx = Context(
                memory=memory,
                settings=self.settings,
                history=history,
                deadline=deadline,
                readiness=readiness,
                session_id=session_id,
                warnings=(*notes, *_not_ready(readiness[1], self.root, memory, self.load_error), *warnings),
                llm=_llm_run(self.llm, self.settings, deadline, memory),
            )
            state = _execute(state, ctx)
        return RetrievalResult(state.text, state.structured, state)


def _resolved(root: Path) -> Path | None:
    """Where ``root`` leads now (None: nowhere to be read)."""
    try:
        return root.resolve(strict=True)
    except (OSError, RuntimeError):  # missing, a loop
        return None


def _not_ready(state: str, root: Path, memory: Memory | None, load_error: str | None) -> tuple[str, ...]:
    """Why a memory answers nothing, with the next step (the result had said only "not ready (missing)"): a root
    that is no folder (a typo), one with no markdown, one that failed to load (a watcher retries it).  A server
    answers the first two with an error instead (``service.roots``)."""
    if state == "missing":
        return (f"the memory root {str(root)!r} is not a folder: pass the memory's folder (Retriever(root))",)
    if state == "empty":
        skipped = len(memory.skipped) if memory else 0
        return (f"the memory root {str(root)!r} holds no markdown file ({skipped} skipped: diagnostics.skipped_files)",)
    return (f"the memory could not be loaded ({load_error}); it is retried",) if state == "error" and load_error else ()


def _client(settings: Settings) -> LLMClient | None:
    """The LLM client when a model is configured; None (offline) without importing the LLM modules."""
    if not settings.llm_model:
        return None
    from retriever.llm.client import LLMClient

    return LLMClient(settings)


def _llm_run(client: LLMClient | None, settings: Settings, deadline: float, memory: Memory | None) -> LLMRun | None:
    """One retrieval's LLM budget (``LLMRun``), or None offline; imported here for the same reason."""
    if client is None:
        return None
    from retriever.llm.guided import LLMRun

    return LLMRun(client, settings, deadline, lock=memory)


def _execute(state: Run, ctx: Context) -> Run:
    """The stages run on ``state``; run again, offline, when a refresh changed the memory during an LLM call
    (``MemoryChanged``): what they had worked out refers to the index it replaced.  Once: no calls, no change."""
    try:
        return execute(state, ctx)
    except MemoryChanged as changed:
        assert ctx.llm is not None and ctx.memory is not None  # only an LLM call gives up the memory's lock
        again = dataclasses.replace(ctx, llm=ctx.llm.restarted(str(changed)), readiness=ctx.memory.readiness())
        return execute(state, again)


def _built_note(memory: Memory, waited: float) -> str:
    stats = memory.stats
    return (
        f"this call waited {waited:.1f} s while the index was built ({stats.files:,} files); "
        "later calls use it (and later runs load it from the cache)"
    )
