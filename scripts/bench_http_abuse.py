#!/usr/bin/env python3
"""Measure how ``retriever serve`` holds up against abusive clients: huge bodies and slowloris.

    python scripts/bench_http_abuse.py [--root company_context] [--bodies 4] [--body-mb 200]
                                       [--slow 2000] [--hold 15] [--server-fd-limit 1024] [--json]

Starts ``retriever serve --port 0`` (with ``--pythonpath DIR`` first on the server's path, to
measure another checkout) with its soft fd limit set to ``--server-fd-limit``, waits for
``/healthz``, then:

1. bodies: ``--bodies`` clients at once each declare and stream ``--body-mb`` MB to the MCP
   endpoint; reports the server's peak RSS growth, each answer's status and time;
2. slowloris: ``--slow`` connections each send half a request's headers; reports whether
   ``/healthz`` answers (and how fast) while they are held, and how many are still open after
   ``--hold`` seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parent.parent
HALF_SENT = b"POST /memories/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl"
CHUNK = b" " * (1024 * 1024)


def start(root: Path, pythonpath: str | None, fd_limit: int) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "RETRIEVER_STATE_DIR": tempfile.mkdtemp(prefix="retriever-abuse-")}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    command = [sys.executable, "-m", "retriever", "serve", "--port", "0", "--root", str(root)]

    def limit_fds() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (fd_limit, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    # `python -m` puts the working folder first on the path: run from the checkout being measured.
    cwd = pythonpath or str(REPO)
    process = subprocess.Popen(command, env=env, cwd=cwd, stderr=subprocess.PIPE, text=True, preexec_fn=limit_fds)
    assert process.stderr is not None
    line = process.stderr.readline()
    match = re.search(r"Serving MCP at http://([\d.]+:\d+)/", line)
    if match is None:
        process.kill()
        raise SystemExit(f"the server did not start: {line}")
    base = f"http://{match.group(1)}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return process, base
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    process.kill()
    raise SystemExit("the server never became ready")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def address(base: str) -> tuple[str, int]:
    host, port = base.removeprefix("http://").split(":")
    return host, int(port)


def send_body(base: str, megabytes: int) -> dict[str, Any]:
    """Declare and stream ``megabytes`` MB; the answer's status line and how long it took."""
    began = time.monotonic()
    sock = socket.create_connection(address(base), timeout=120)
    head = (
        f"POST /v1/mcp/memory HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {megabytes * len(CHUNK)}\r\n\r\n"
    )
    sent = 0
    try:
        sock.sendall(head.encode())
        for _ in range(megabytes):
            sock.sendall(CHUNK)
            sent += 1
        status = sock.recv(64).split(b"\r\n")[0].decode(errors="replace")
    except OSError as exc:
        status = f"{type(exc).__name__} after {sent} MB sent"
        with contextlib.suppress(OSError):  # the answer may have arrived before the reset
            status = sock.recv(64).split(b"\r\n")[0].decode(errors="replace") or status
    finally:
        sock.close()
    return {"status": status, "seconds": round(time.monotonic() - began, 2), "mb_sent": sent}


def bodies(base: str, pid: int, clients: int, megabytes: int) -> dict[str, Any]:
    baseline, peak, done = rss_mb(pid), 0.0, threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, rss_mb(pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    with ThreadPoolExecutor(clients) as pool:
        answers = list(pool.map(lambda _: send_body(base, megabytes), range(clients)))
    done.set()
    sampler.join()
    return {"rss_before_mb": round(baseline, 1), "rss_peak_mb": round(peak, 1), "answers": answers}


def is_open(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        while sock.recv(65536):
            pass
        return False
    except BlockingIOError:
        return True
    except OSError:
        return False


def slowloris(base: str, connections: int, hold: float) -> dict[str, Any]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, connections + 256)), hard))
    held: list[socket.socket] = []
    refused = 0
    for _ in range(connections):
        try:
            sock = socket.create_connection(address(base), timeout=5)
            sock.sendall(HALF_SENT)
            held.append(sock)
        except OSError:
            refused += 1
    health: dict[str, Any] = {}
    began = time.monotonic()
    try:
        health = {"status": httpx.get(f"{base}/healthz", timeout=10).status_code}
    except httpx.TransportError as exc:
        health = {"status": type(exc).__name__}
    health["seconds"] = round(time.monotonic() - began, 2)
    time.sleep(hold)  # the measurement: what the server still holds after this long
    still_open = sum(is_open(s) for s in held)
    for sock in held:
        sock.close()
    return {"opened": len(held), "refused": refused, "healthz": health, f"open_after_{hold:g}s": still_open}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=REPO / "company_context")
    parser.add_argument("--pythonpath", default=None, help="put this first on the server's path (another checkout)")
    parser.add_argument("--bodies", type=int, default=4)
    parser.add_argument("--body-mb", type=int, default=200)
    parser.add_argument("--slow", type=int, default=2000)
    parser.add_argument("--hold", type=float, default=15.0)
    parser.add_argument("--server-fd-limit", type=int, default=1024)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    process, base = start(args.root.resolve(), args.pythonpath, args.server_fd_limit)
    try:
        results = {"bodies": bodies(base, process.pid, args.bodies, args.body_mb)}
        results["slowloris"] = slowloris(base, args.slow, args.hold)
    finally:
        process.terminate()
        process.wait(timeout=30)
    print(json.dumps(results, indent=2) if args.json else results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
