"""Progress of long operations on stderr: a rich bar on a terminal, a line every few seconds otherwise.

Contract: a ``Reporter`` is the core's progress callback, ``(phase, done, total)`` (phases:
``retriever.memory.refresh.PHASES``), and writes to stderr only, never stdout.  Short operations
stay silent: nothing shows before an operation has run ``SHOW_AFTER`` seconds.  On a terminal a
transient bar follows; elsewhere (a pipe, a log, a server's stderr) a line such as
``indexing: 4,000/10,000 files, 12 s`` every ``LINE_EVERY`` seconds, and one when the phase ends.
A first build says so once it shows: ``building the index for the first time (10,000 files)…``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

SHOW_AFTER = 0.5  # seconds: a warm start (a cache hit, a few changed files) shows nothing
LINE_EVERY = 5.0  # seconds between lines when stderr is not a terminal
_UNITS = {"indexing": "files", "refreshing": "changed files", "compacting": "documents", "reading": "files"}
_TITLES = {
    "indexing": "Indexing",
    "refreshing": "Re-indexing changed files",
    "compacting": "Compacting the index",
    "saving": "Saving the index",
    "reading": "Reading the revision",
}


class Reporter:
    """A progress callback that shows itself only for long operations (see the module's contract)."""

    def __init__(
        self, stream: TextIO | None = None, *, bar: bool | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.bar = bar if bar is not None else self.stream.isatty()
        self.clock = clock
        self._phase: str | None = None
        self._began = self._last = 0.0
        self._shown = False  # this phase has shown something (a bar or a line)
        self._progress: Any = None  # rich's Progress while a bar is up
        self._task: Any = None

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = self.clock()
        if phase != self._phase:
            self._start(phase, now)
        if not self._shown and now - self._began >= SHOW_AFTER:
            self._show(phase, total)
        if self._shown and self.bar:
            self._progress.update(self._task, completed=done, total=total)
        elif self._shown and (now - self._last >= LINE_EVERY or done >= total):
            self._line(phase, done, total, now)
        if done >= total:
            self._end()

    def close(self) -> None:
        """Take a bar down (an operation that failed half-way leaves none behind)."""
        self._end()

    def _start(self, phase: str, now: float) -> None:
        self._end()
        self._phase, self._began, self._last = phase, now, now

    def _show(self, phase: str, total: int) -> None:
        self._shown = True
        if phase == "indexing":
            self._say(f"building the index for the first time ({total:,} {'file' if total == 1 else 'files'})…")
        if self.bar:
            from rich.console import Console
            from rich.progress import Progress

            self._progress = Progress(console=Console(file=self.stream), transient=True)
            self._progress.start()
            self._task = self._progress.add_task(_TITLES.get(phase, phase), total=total)

    def _line(self, phase: str, done: int, total: int, now: float) -> None:
        self._last = now
        unit = _UNITS.get(phase)
        amount = f"{done:,}/{total:,} {unit}" if unit else ("done" if done >= total else "…")
        self._say(f"{phase}: {amount}, {now - self._began:.0f} s")

    def _say(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def _end(self) -> None:
        if self._progress is not None:
            self._progress.stop()
        self._progress = self._task = None
        self._phase, self._shown = None, False
