"""What ``retriever serve`` decides before it serves: exposure, the socket, its URL, and logging.

Kept apart from the click command so that each decision is a small function with a contract.
"""

from __future__ import annotations

import signal
import socket
import sys
from typing import Any

import click

from retriever.adapters import logs
from retriever.endpoints import is_loopback_name

EXIT_USAGE = 2
_WILDCARDS = frozenset({"", "0.0.0.0", "::"})


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1): the strict set, as the host is bound."""
    return is_loopback_name(host, subdomains=False)


def exposure_refusal(host: str, has_keys: bool, insecure: bool) -> str | None:
    """Why serving on ``host`` is refused (None: allowed): a non-loopback host needs a key or ``--insecure``."""
    if is_loopback(host) or has_keys or insecure:
        return None
    return (
        f"Error: refusing to serve on {host} without an API key: anyone who can reach it could read the whole "
        "memory and the request log. Set RETRIEVER_API_KEY (or RETRIEVER_API_KEYS), bind 127.0.0.1, or pass "
        "--insecure if the network is trusted."
    )


def all_interfaces_notice(host: str, allowed_hosts: tuple[str, ...]) -> str | None:
    """What to say at start when the server listens on every interface while only loopback names may reach it (None:
    nothing): every other client, a load balancer's health check among them, gets 421 until the operator names the
    host the clients use (DNS rebinding protection, ``http_guard``)."""
    if host not in _WILDCARDS or allowed_hosts:
        return None
    return (
        f"Warning: listening on all interfaces ({host or '*'}), but requests are answered only when they name this "
        "server by a loopback name; any other Host gets 421. Set RETRIEVER_ALLOWED_HOSTS to the names and addresses "
        "clients use (e.g. memory.example.com,10.0.0.5), or '*' behind a proxy that checks Host."
    )


def bound_host_names(host: str) -> tuple[str, ...]:
    """Host names to allow besides loopback ones: the address bound, unless it is a wildcard."""
    return () if host in _WILDCARDS or is_loopback(host) else (host,)


def listening_socket(host: str, port: int) -> socket.socket:
    """A bound TCP socket (uvicorn listens on it); exits 2 with a clear message when the address is taken."""
    host = host.strip("[]")  # "[::1]", as a URL writes it (``serve`` strips it too)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio only sets TCP_NODELAY on such sockets; without it every reply waits ~40 ms.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        click.echo(f"Error: cannot listen on {host}:{port}: {exc.strerror}; choose another --host or --port", err=True)
        sys.exit(EXIT_USAGE)
    return sock


def mcp_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/v1/mcp/memory"


def configure_logging(level: str = "warning") -> None:
    """Records from ``level`` up to stderr (``logs.to_stderr``), uvicorn's included, each naming its level and logger,
    credentials masked."""
    logs.to_stderr(logs.NAMED, level)


def reload_keys_on_hangup(app: Any) -> None:
    """SIGHUP makes the server look at its keys file on the next request (``http_keys``), where it had ended the
    server (exit 129); the file is also looked at every second."""
    keys = getattr(app, "keys", None)
    while keys is None and hasattr(app, "app"):  # the guard holds them, under the access log's wrapper
        app = app.app
        keys = getattr(app, "keys", None)
    if keys is not None and hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, lambda *_: keys.request_check())
