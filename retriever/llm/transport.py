"""The HTTP client the LLM seam calls its endpoint with: no wait on the network outlasts the call's deadline.

Contract:
- ``Http.of(client_class, endpoint)`` builds ``client_class`` (the ``openai`` package's
  ``DefaultHttpxClient``, with its defaults) on the HTTP library that class is built on (``httpx``, or
  ``httpx2`` in newer ``openai`` releases, each over its own ``httpcore``), and puts ``DeadlineBackend`` in
  every connection pool it holds: its default transport's and each proxy mount's (the library's
  transport takes no backend: the one its pool keeps is replaced; a pool kept elsewhere is logged as a
  warning, and calls through it are bounded per read only).  ``timeout_error`` and ``error`` are that
  library's ``TimeoutException`` and ``HTTPError``: a streamed body's read raises them, and the ``openai``
  package lets them through unwrapped while it reads an error's body before raising ``APIStatusError``.
  ``ConfigError`` (never ``ValueError``) when ``endpoint`` is not an http(s) URL with a host that the
  library can call, or when the library cannot build a client from the environment's proxy settings (a
  SOCKS proxy without ``socksio``, a proxy URL it cannot read); the message names the value (bounded,
  passwords masked) and the setting to fix.
- ``within(deadline)`` (a ``time.monotonic()`` instant): while it is open, every connect, TLS handshake,
  read and write of this thread waits at most until the deadline, within its own timeout, and one asked
  for after it fails at once, as ``ConnectTimeout``, ``ReadTimeout`` or ``WriteTimeout`` (the library's,
  by the time a caller sees it).  So a call made and read inside it is over by the deadline: connect,
  request, status line, headers and body, a success's or an error's, however slowly the endpoint sends
  them.  The deadline is a context variable: threads sharing one client each keep their own.  Outside
  ``within``, each operation has only its own timeout.
- Proxies are the library's own: the client reads ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and
  ``NO_PROXY`` (CIDR ranges, ``*.domain``, ``[::1]``, ``scheme://host``: whatever forms that library reads)
  as the ``openai`` package's own client does, and the deadline holds through a proxy too.
- Not bounded by it: resolving the endpoint's host name (the system resolver takes no timeout); and a
  host with several addresses is tried at each for up to the time left.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import time
import urllib.parse
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from retriever.errors import ConfigError
from retriever.redaction import mask_url, shown_value
from retriever.text.safe import cut, one_line

if TYPE_CHECKING:
    import ssl

log = logging.getLogger(__name__)

_DEADLINE: ContextVar[float | None] = ContextVar("llm_call_deadline", default=None)
WRITE_PIECE = 4096  # bytes a write sends at a time: each piece's wait is cut to the time left


@contextlib.contextmanager
def within(deadline: float) -> Iterator[None]:
    """Every network wait of this thread ends by ``deadline`` (``time.monotonic()``) while this is open."""
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _wait(timeout: float | None, expired: type[Exception]) -> float | None:
    """How long an operation may wait: its own ``timeout``, cut to the deadline; past it, ``expired``."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise expired("the call's time is up")
    return left if timeout is None else min(timeout, left)


class DeadlineStream:
    """An ``httpcore`` network stream whose every wait ends by the deadline of ``within``."""

    def __init__(self, stream: Any, core: ModuleType) -> None:
        self._stream, self._core = stream, core

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return bytes(self._stream.read(max_bytes, _wait(timeout, self._core.ReadTimeout)))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        for start in range(0, len(buffer), WRITE_PIECE):  # so that a slow reader cannot stretch one write
            self._stream.write(buffer[start : start + WRITE_PIECE], _wait(timeout, self._core.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> DeadlineStream:
        wait = _wait(timeout, self._core.ConnectTimeout)
        return DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, wait), self._core)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class DeadlineBackend:
    """An ``httpcore`` network backend (its ``SyncBackend``) whose connections are ``DeadlineStream``s."""

    def __init__(self, core: ModuleType) -> None:
        self._backend, self._core = core.SyncBackend(), core

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> DeadlineStream:
        wait = _wait(timeout, self._core.ConnectTimeout)
        return DeadlineStream(self._backend.connect_tcp(host, port, wait, local_address, socket_options), self._core)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> DeadlineStream:
        wait = _wait(timeout, self._core.ConnectTimeout)
        return DeadlineStream(self._backend.connect_unix_socket(path, wait, socket_options), self._core)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


@dataclass(frozen=True, slots=True)
class Http:
    """An HTTP client for the ``openai`` package, and the errors its library raises unwrapped."""

    client: Any
    timeout_error: type[Exception]
    error: type[Exception]

    @classmethod
    def of(cls, client_class: type[Any], endpoint: str) -> Http:
        library, core = _libraries(client_class)
        _check_endpoint(library, endpoint)
        try:  # the library reads the environment's proxies and NO_PROXY its own way, as openai's client does
            client = client_class()
        except (ImportError, ValueError, library.InvalidURL) as exc:
            raise ConfigError(
                f"the LLM client cannot be built from the environment's proxy settings ({_clipped(exc)}); "
                "fix or unset HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY (a SOCKS proxy needs socksio)"
            ) from None
        _install_deadline(client, library, core)
        return cls(client, library.TimeoutException, library.HTTPError)


def _install_deadline(client: Any, library: ModuleType, core: ModuleType) -> None:
    """Put a ``DeadlineBackend`` in the pool of the client's default transport and of each proxy it mounts.

    The library's transport takes no network backend; its connection pool does, and keeps it in
    ``_network_backend``.  A transport kept elsewhere, or one without such a pool, is logged as a warning:
    calls through it are still bounded per read and write by their own timeout."""
    mounts: dict[Any, Any] | None = getattr(client, "_mounts", None)
    transports = [getattr(client, "_transport", None), *(t for t in (mounts or {}).values() if t is not None)]
    missed = mounts is None
    for transport in transports:
        pool: Any = getattr(transport, "_pool", None)
        if hasattr(pool, "_network_backend"):
            pool._network_backend = DeadlineBackend(core)
        else:
            missed = True
    if missed:
        log.warning("%s keeps no network backend where expected: LLM calls are bounded per read", library.__name__)


def _check_endpoint(library: ModuleType, endpoint: str) -> None:
    """``ConfigError`` unless ``endpoint`` is an http(s) URL with a host that both ``urllib`` and ``library``
    read (``http://[::1:8080/v1`` raised ``ValueError`` from deep inside the client)."""
    try:
        url = urllib.parse.urlsplit(endpoint)
        url.port  # noqa: B018 - read for its ValueError: a port that is no number, or out of range
        library.URL(endpoint)
        problem = "" if url.scheme in ("http", "https") and url.hostname else "not an http(s) URL with a host"
    except (ValueError, library.InvalidURL) as exc:
        problem = _clipped(exc)
    if problem:
        raise ConfigError(
            f"the LLM endpoint {shown_value('llm_base_url', endpoint)} is not a valid URL ({problem}); set "
            "OPENAI_BASE_URL (llm_base_url in a config file) to one such as http://127.0.0.1:8080/v1, or unset it"
        )


def _clipped(exc: Exception) -> str:
    """An exception's text for a message: on one line, cut at 200 characters, URL passwords masked."""
    return cut(mask_url(one_line(str(exc))), 200) or type(exc).__name__


def _libraries(client_class: type[Any]) -> tuple[ModuleType, ModuleType]:
    """The HTTP library ``client_class`` is built on (``httpx`` or ``httpx2``) and the ``httpcore`` under it."""
    packages = (c.__module__.partition(".")[0] for c in client_class.__mro__)
    package = next((name for name in packages if name.startswith("httpx")), "")
    if not package:
        raise TypeError(f"{client_class.__name__} is not an httpx client")
    return importlib.import_module(package), importlib.import_module(package.replace("httpx", "httpcore", 1))
