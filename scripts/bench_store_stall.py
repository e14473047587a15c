#!/usr/bin/env python3
"""In-process ``MemoryService.call_tool``: time per call with a healthy store, and while it stalls.

    python scripts/bench_store_stall.py [--root company_context] [--calls 400] [--rounds 5] [--stall 8]

Runs ``retrieve_memory`` calls (with session ids, so history is read and prompts are stored) on
``--root`` against SQLite and a real ``redis-server`` started on a free loopback port.  Reports
wall and process-CPU milliseconds per call (the median of ``--rounds`` rounds; queued writes are
flushed inside each round, so their cost counts), then SIGSTOPs Redis for ``--stall`` seconds and
holds SQLite's write lock from another process as long, reporting calls per second and the
slowest call meanwhile.  Needs ``redis-server`` on PATH.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from retriever import Retriever, Settings
from retriever.service.service import MemoryService
from retriever.service.stores.base import StoreUnavailable
from retriever.service.stores.redis import RedisStore
from retriever.service.stores.sqlite import SQLiteStore

PROMPTS = [
    "Who are our main enterprise clients and which accounts have the highest recurring revenue?",
    "What do we know about our current project priorities, and who follows up on each?",
    "Who owns the Helix EU data residency project?",
    "and who owns it?",
]
HOLD_LOCK = "import sqlite3,sys\ndb=sqlite3.connect(sys.argv[1],isolation_level=None)\n" + (
    "db.execute('BEGIN EXCLUSIVE')\nprint('locked',flush=True)\nsys.stdin.read()\n"
)


def _call(service: MemoryService, number: int) -> None:
    service.call_tool("retrieve_memory", {"prompt": PROMPTS[number % 4], "session_id": f"bench-{number % 7}"})


def healthy(service: MemoryService, calls: int, rounds: int) -> str:
    """Median wall and CPU ms per call over ``rounds`` rounds of ``calls`` calls."""
    results = []
    for _ in range(rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        for number in range(calls):
            _call(service, number)
        flush = getattr(service.store, "flush", None)  # absent before writes were queued: then nothing waits
        if flush is not None:
            flush()
        results.append(((time.perf_counter() - wall) / calls, (time.process_time() - cpu) / calls))
    walls, cpus = [w * 1000 for w, _ in results], [c * 1000 for _, c in results]
    return f"{statistics.median(walls):.2f} ms wall (best {min(walls):.2f}), {statistics.median(cpus):.2f} ms CPU"


def stalled(service: MemoryService, seconds: float, stall: Callable[[], Any]) -> str:
    """Calls per second and the slowest call while ``stall`` holds the store."""
    times = []
    with stall():
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            began = time.perf_counter()
            _call(service, len(times))
            times.append(time.perf_counter() - began)
    slowest, p50 = max(times) * 1000, statistics.median(times) * 1000
    return f"{len(times) / seconds:.1f} calls/s, slowest {slowest:.0f} ms, p50 {p50:.2f} ms"


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def redis_server(folder: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    port = _port()
    binary = shutil.which("redis-server") or "redis-server"
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    process = subprocess.Popen([*command, "--dir", str(folder)], stdout=subprocess.DEVNULL)
    try:
        yield process, f"redis://127.0.0.1:{port}/0"
    finally:
        process.send_signal(signal.SIGCONT)
        process.terminate()
        process.wait(timeout=10)


def _connect(url: str) -> RedisStore:
    deadline = time.monotonic() + 10
    while True:
        try:
            return RedisStore(url)
        except StoreUnavailable:  # not up yet; bounded by the deadline
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent / "company_context")
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--stall", type=float, default=8.0)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    retriever = Retriever(args.root, Settings.from_env(state_dir=folder))
    _ = retriever.memory
    path = folder / "s.sqlite"
    service = MemoryService(retriever, SQLiteStore(path), watch=False)
    print(f"sqlite healthy: {healthy(service, args.calls, args.rounds)}")

    @contextmanager
    def sqlite_lock() -> Iterator[None]:
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD_LOCK, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"locked"
        try:
            yield
        finally:
            holder.communicate(b"", timeout=10)

    print(f"sqlite locked by another process {args.stall:.0f} s: {stalled(service, args.stall, sqlite_lock)}")
    service.close()
    with redis_server(folder) as (process, url):
        service = MemoryService(retriever, _connect(url), watch=False)
        print(f"redis healthy: {healthy(service, args.calls, args.rounds)}")

        @contextmanager
        def sigstop() -> Iterator[None]:
            process.send_signal(signal.SIGSTOP)
            try:
                yield
            finally:
                process.send_signal(signal.SIGCONT)

        print(f"redis SIGSTOPped {args.stall:.0f} s: {stalled(service, args.stall, sigstop)}")
        began = time.perf_counter()
        service.close()
        print(f"close() after resuming: {(time.perf_counter() - began) * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
