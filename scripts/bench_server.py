#!/usr/bin/env python3
"""Benchmark the HTTP server under concurrent MCP ``tools/call`` requests.

    python scripts/bench_server.py [--root company_context] [--clients 8] [--requests 800] [--json]
    python scripts/bench_server.py --url http://127.0.0.1:8765/v1/mcp/memory

Starts ``retriever serve --port 0`` on ``--root`` with a fresh ``RETRIEVER_STATE_DIR`` (or uses
the server at ``--url``), waits for ``/healthz``, sends a short unmeasured warm-up, then drives
``--clients`` threads, each with its own keep-alive ``httpx.Client``, through ``--requests``
``retrieve_memory`` calls cycling over questions about the bundled company memory.  Reports
errors (non-200 status, JSON-RPC error or ``isError`` result), wall time, throughput,
client-side latency p50/p95/p99/max and the server's median ``diagnostics.duration_ms``.
Exits 1 if any call failed.  Target: p50 ≤ 30 ms with 8 concurrent clients on
``company_context``, no errors.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import queue
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx

REPO = Path(__file__).resolve().parent.parent
START_TIMEOUT_S = 30.0
HEALTH_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0
REQUEST_TIMEOUT_S = 30.0
_SERVING = re.compile(r"Serving MCP at (http://\S+)")
QUESTIONS = [
    "Who are our main enterprise clients and which accounts have the highest recurring revenue?",
    "What do we know about our current project priorities, and who follows up on each?",
    "Who owns the Helix EU data residency project?",
    "How does the on-call rotation work and who is on the night shift?",
    "DEC-0054",
    "How do we release a new version of Pulse?",
    "Які правила київського офісу?",
    "What can I expense and how do I get reimbursed?",
    "What happened in the INC-2026-031 postmortem and what are the action items?",
    "Where does the Northwind Media Group renewal stand?",
    "Why did we choose SOC 2 Type II before ISO 27001?",
    "What is the Q1 2027 hiring plan?",
    "How is the Attention Score calculated?",
    "What are the prices of our plans after the Starter price increase?",
    "What is our net revenue retention in 2026?",
    "Who leads the Platform & Reliability team?",
    "How many PTO days do employees get?",
    "Хто відповідає за київський офіс?",
    "Why did Riverbed move from Kafka Streams to Apache Flink?",
    "What are the 2027 company goals?",
]


@dataclass
class Sample:
    """One measured call: client-side latency, the server's own duration, and any error."""

    latency_ms: float
    server_ms: float | None = None
    error: str | None = None


@dataclass
class Server:
    """A server subprocess started by the benchmark, and its MCP URL."""

    process: subprocess.Popen[str]
    url: str
    state_dir: Path
    stderr_tail: list[str] = field(default_factory=list)


# -- the server ------------------------------------------------------------------------------


def _pump(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    """Forward the server's stderr lines to a queue (None at EOF), so reads can time out."""
    for line in stream:
        lines.put(line.rstrip("\n"))
    lines.put(None)


def _await_url(lines: queue.Queue[str | None], seen: list[str], timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            break
        if line is None:
            raise RuntimeError("the server exited before serving:\n" + "\n".join(seen[-20:]))
        seen.append(line)
        if match := _SERVING.search(line):
            return match.group(1)
    raise RuntimeError(f"the server printed no 'Serving MCP at' line within {timeout:.0f} s:\n" + "\n".join(seen[-20:]))


def start_server(root: Path) -> Server:
    """``retriever serve --port 0 --root ROOT`` with a fresh state folder; returns once it prints its URL."""
    state_dir = Path(tempfile.mkdtemp(prefix="retriever-bench-server-"))
    env = {**os.environ, "RETRIEVER_STATE_DIR": str(state_dir)}
    command = [sys.executable, "-m", "retriever", "serve", "--port", "0", "--root", str(root)]
    try:
        process = subprocess.Popen(
            command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
    except OSError:
        shutil.rmtree(state_dir, ignore_errors=True)
        raise
    server = Server(process, "", state_dir)
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_pump, args=(process.stderr, lines), daemon=True).start()
    try:
        server.url = _await_url(lines, server.stderr_tail, START_TIMEOUT_S)
    except BaseException:
        stop_server(server)
        raise
    return server


def stop_server(server: Server) -> None:
    """Terminate, kill after a bounded wait, and remove the state folder."""
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(timeout=STOP_TIMEOUT_S)
    shutil.rmtree(server.state_dir, ignore_errors=True)


def health_url(mcp_url: str) -> str:
    parts = httpx.URL(mcp_url)
    return str(parts.copy_with(path="/healthz", query=None))


def _health_once(client: httpx.Client, url: str) -> tuple[dict[str, Any] | None, str]:
    """(health body if 200, else None; a description); raises if the memory will never be ready."""
    try:
        response = client.get(url)
        body = response.json()
    except (httpx.HTTPError, ValueError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
    if response.status_code == 200 and isinstance(body, dict):
        return body, "ready"
    last = f"HTTP {response.status_code}: {response.text[:200]}"
    if response.status_code == 503 and isinstance(body, dict) and body.get("readiness_state") != "loading":
        raise RuntimeError(f"the memory is not ready and will not be ({last})")
    return None, last


def wait_healthy(mcp_url: str, timeout: float, server: Server | None = None) -> dict[str, Any]:
    """Poll ``GET /healthz`` until 200; fail if the server exits, the memory is missing or the wait runs out."""
    deadline, last = time.monotonic() + timeout, "no answer"
    with httpx.Client(timeout=5.0) as client:
        while time.monotonic() < deadline:
            if server is not None and server.process.poll() is not None:
                raise RuntimeError(f"the server exited with status {server.process.returncode} while loading")
            health, last = _health_once(client, health_url(mcp_url))
            if health is not None:
                return health
            time.sleep(0.1)
    raise RuntimeError(f"/healthz did not answer 200 within {timeout:.0f} s (last: {last})")


@contextmanager
def target(url: str | None, root: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """The MCP URL to benchmark and its health, starting (and always stopping) a server unless ``url``."""
    if url is not None:
        yield url, wait_healthy(url, HEALTH_TIMEOUT_S)
        return
    server = start_server(root)
    try:
        yield server.url, wait_healthy(server.url, HEALTH_TIMEOUT_S, server)
    finally:
        stop_server(server)


# -- the load ----------------------------------------------------------------------------------


def call_body(request_id: int, prompt: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "retrieve_memory", "arguments": {"prompt": prompt}},
    }


def check(response: httpx.Response) -> tuple[float | None, str | None]:
    """(server duration_ms, error) of one answer; any non-200, JSON-RPC error or isError is an error."""
    if response.status_code != 200:
        return None, f"HTTP {response.status_code}"
    body = response.json()
    if not isinstance(body, dict):
        return None, f"not a JSON-RPC response: {response.text[:200]}"
    if "error" in body:
        return None, f"JSON-RPC {body['error'].get('code')}: {body['error'].get('message')}"
    result = body.get("result")
    if not isinstance(result, dict) or result.get("isError") is not False:
        return None, f"isError result: {response.text[:200]}"
    duration = (result.get("structuredContent") or {}).get("diagnostics", {}).get("duration_ms")
    return (float(duration) if isinstance(duration, int | float) else None), None


def one_call(client: httpx.Client, url: str, request_id: int, prompt: str) -> Sample:
    began = time.perf_counter()
    try:
        response = client.post(url, json=call_body(request_id, prompt))
        server_ms, error = check(response)
    except (httpx.HTTPError, ValueError) as exc:
        server_ms, error = None, f"{type(exc).__name__}: {exc}"
    return Sample((time.perf_counter() - began) * 1000, server_ms, error)


def worker(url: str, jobs: list[tuple[int, str]]) -> list[Sample]:
    """One client: its own keep-alive connection, its share of the calls in order."""
    with httpx.Client(timeout=REQUEST_TIMEOUT_S) as client:
        return [one_call(client, url, request_id, prompt) for request_id, prompt in jobs]


def run_load(url: str, clients: int, requests: int, first_id: int = 1) -> tuple[list[Sample], float]:
    """``requests`` calls spread over ``clients`` threads; returns the samples and wall seconds."""
    prompts = itertools.islice(itertools.cycle(QUESTIONS), requests)
    jobs = list(enumerate(prompts, start=first_id))
    shares = [jobs[i::clients] for i in range(clients)]
    began = time.perf_counter()
    with ThreadPoolExecutor(max_workers=clients) as pool:
        results = list(pool.map(lambda share: worker(url, share), shares))
    wall = time.perf_counter() - began
    return [sample for share in results for sample in share], wall


# -- the report --------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")


def summarise(samples: list[Sample], wall: float, clients: int) -> dict[str, Any]:
    latencies = [s.latency_ms for s in samples]
    server = [s.server_ms for s in samples if s.server_ms is not None]
    errors = [s.error for s in samples if s.error is not None]
    return {
        "requests": len(samples),
        "clients": clients,
        "errors": len(errors),
        "wall_s": round(wall, 3),
        "throughput_rps": round(len(samples) / wall, 1) if wall > 0 else 0.0,
        "latency_p50_ms": round(percentile(latencies, 0.50), 2),
        "latency_p95_ms": round(percentile(latencies, 0.95), 2),
        "latency_p99_ms": round(percentile(latencies, 0.99), 2),
        "latency_max_ms": round(max(latencies, default=float("nan")), 2),
        "server_duration_p50_ms": round(statistics.median(server), 2) if server else None,
        "first_errors": sorted(set(errors))[:5],
    }


def print_table(results: dict[str, Any]) -> None:
    print("| measure | value |\n|---|---|")
    for key, value in results.items():
        if key != "first_errors":
            print(f"| {key} | {value} |")
    for error in results["first_errors"]:
        print(f"\nerror: {error}", file=sys.stderr)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=REPO / "company_context", help="memory tree to serve")
    parser.add_argument("--url", default=None, help="benchmark this running MCP endpoint instead (ignores --root)")
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients")
    parser.add_argument("--requests", type=int, default=800, help="measured calls in total")
    parser.add_argument("--warmup", type=int, default=20, help="unmeasured calls first")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    if args.clients < 1 or args.requests < 1 or args.warmup < 0:
        parser.error("--clients and --requests must be at least 1, --warmup at least 0")
    return args


def main() -> int:
    args = parse_args()
    try:
        with target(args.url, args.root.resolve()) as (url, health):
            if args.warmup:
                run_load(url, min(args.clients, args.warmup), args.warmup, first_id=1_000_000)
            samples, wall = run_load(url, args.clients, args.requests)
    except RuntimeError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    results = summarise(samples, wall, args.clients)
    results = {"url": url, "sections": health.get("sections"), **results}
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=2))
    else:
        print_table(results)
    return 1 if results["errors"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
