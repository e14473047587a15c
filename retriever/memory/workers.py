"""Work spread over worker processes: ``ordered(function, items, workers)`` is ``map(function, items)``.

Contract: ``ordered`` yields ``function(item)`` for every item, in the items' order, whatever the
number of workers.  With ``workers`` above 1 and at least ``PARALLEL_FROM`` items, batches of items
run in fresh interpreters (``python -m retriever.memory.workers``) fed over pipes, so nothing of
the caller runs again in them (multiprocessing's spawn re-imports a script's ``__main__``) and no
process with threads is forked (a server has several).  At most ``AHEAD`` batches per worker are in
flight, so memory stays bounded however slowly the caller consumes; the workers exit when the
iterator is exhausted or closed.  A worker that dies (killed, out of memory) or cannot start is not
an error: its batch and the rest run in this process.  ``function`` must be a module-level function of the
``retriever`` package; items and results must pickle.
"""

from __future__ import annotations

import os
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

PARALLEL_FROM = 200  # items; below this, starting interpreters (~0.3 s each) costs more than it saves
BATCH = 16  # items sent to a worker at once
AHEAD = 3  # batches in flight per worker
_EXIT_SECONDS = 5.0  # a worker asked to stop is killed after this
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])  # workers import this very copy of the package


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity where the platform says)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def jobs(setting: int) -> int:
    """Worker processes to use: ``setting`` (``RETRIEVER_INDEX_WORKERS``), else one per core."""
    return setting or available_cores()


def ordered(function: Callable[[T], R], items: Sequence[T], workers: int) -> Generator[R, None, None]:
    """``map(function, items)``, in worker processes when there are enough items (see the module's contract)."""
    if workers < 2 or len(items) < PARALLEL_FROM or not sys.executable:
        yield from map(function, items)
        return
    batches = [items[start : start + BATCH] for start in range(0, len(items), BATCH)]
    pool: list[_Worker] = []
    try:
        pool.extend(_Worker() for _ in range(min(workers, len(batches))))
    except OSError:  # no interpreter to start (an embedded Python): the work is done here, as with one worker
        for worker in pool:
            worker.stop()
        yield from map(function, items)
        return
    try:
        yield from _run(pool, function, batches)
    finally:
        for worker in pool:
            worker.stop()


def _run(pool: list[_Worker], function: Callable[[T], R], batches: list[Sequence[T]]) -> Iterator[R]:
    """Batch ``i`` goes to worker ``i % len(pool)``; each worker answers in order, so results come back in order."""
    sent = 0
    for index in range(len(batches)):
        while sent < len(batches) and sent < index + AHEAD * len(pool):
            if not pool[sent % len(pool)].send(function, batches[sent]):
                break
            sent += 1
        results = pool[index % len(pool)].receive() if index < sent else None
        if results is None:  # a worker died: do its batch and the rest here
            for rest in batches[index:]:
                yield from map(function, rest)
            return
        yield from results


class _Worker:
    """One interpreter running ``_serve``, and a thread draining its answers (so it never blocks writing)."""

    def __init__(self) -> None:
        path = os.pathsep.join(p for p in (_PACKAGE_PARENT, os.environ.get("PYTHONPATH")) if p)
        # -P: ``-m`` would put the working directory first on the worker's module path, and that is often
        # the memory tree itself (`retriever index --root .`, an MCP client started in a project): a
        # ``yaml.py`` or ``pickle.py`` committed there would run as code in every worker.
        self.process = subprocess.Popen(
            [sys.executable, "-P", "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": path},
        )
        self.answers: queue.Queue[list[Any] | None] = queue.Queue()
        threading.Thread(target=self._drain, name="index-worker-reader", daemon=True).start()

    def send(self, function: Callable[..., Any], batch: Sequence[Any]) -> bool:
        """Queue a batch; False when the worker is gone."""
        try:
            assert self.process.stdin is not None
            pickle.dump((function, list(batch)), self.process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self.process.stdin.flush()
            return True
        except (OSError, ValueError):  # a broken pipe, or a closed one
            return False

    def receive(self) -> list[Any] | None:
        """The next batch's results, in order; None when the worker died first."""
        return self.answers.get()

    def _drain(self) -> None:
        assert self.process.stdout is not None
        try:
            while True:
                self.answers.put(pickle.load(self.process.stdout))
        except Exception:  # noqa: BLE001 - top-level handler of the reader thread: EOF or garbage, the worker is gone
            self.answers.put(None)

    def stop(self) -> None:
        """Ask the worker to exit after its current batch; kill it if it does not."""
        try:
            assert self.process.stdin is not None
            pickle.dump(None, self.process.stdin)
            self.process.stdin.close()
        except (OSError, ValueError):
            pass
        try:
            self.process.wait(timeout=_EXIT_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _serve() -> None:
    """The worker's loop: (function, batch) in on stdin, the results out on stdout, until None or EOF."""
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must never corrupt the answers
    try:
        while (message := pickle.load(requests)) is not None:
            function, batch = message
            pickle.dump([function(item) for item in batch], answers, protocol=pickle.HIGHEST_PROTOCOL)
            answers.flush()
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        return  # the caller went away, or Ctrl-C reached the whole process group: exit quietly


if __name__ == "__main__":
    _serve()
