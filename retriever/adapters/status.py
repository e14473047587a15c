"""What ``retriever status`` reports: the memory, its index cache, the store, the LLM and every setting's source.

Contract: ``gather(loaded)`` returns a JSON-ready dict (the ``--json`` output) with ``root``,
``memory`` (state, files, sections, skipped files: a count and the first ``SKIPPED_SHOWN``),
``index_cache`` (folder, size, when the index was last saved), ``store`` (kind, the URL with its
password masked, whether it answers), ``llm`` (model, endpoint, whether a key is set and where from,
and whether ``GET <endpoint>/models`` answers within ``PROBE_SECONDS``, or why no client can be built
for it: an endpoint that is no URL is a problem, as ``query`` and ``serve`` stop on it), ``api_keys``
(how many keys ``retriever serve`` accepts and how many are bound to users, or why it would refuse them: the
``load_api_keys`` check ``serve`` makes at start), ``memory_identity`` (what
sessions are kept under), ``config_files`` and ``settings`` (each key's value and source), and
``problems`` (what needs fixing; empty when all is well).  Secrets are never included: a key is
reported as set or not, a URL with its password masked.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from retriever.adapters.cli_common import load_memory
from retriever.config import Settings, index_cache_dir
from retriever.config_files import VARIABLES, Loaded
from retriever.endpoints import OPENAI_URL, endpoint_and_key
from retriever.errors import ConfigError, RetrieverError
from retriever.memory import caches
from retriever.redaction import SECRET_KEYS, mask_url
from retriever.service.access import load_api_keys
from retriever.service.identity import memory_identity
from retriever.service.stores import sqlite_path
from retriever.service.stores.sqlite import unreadable
from retriever.text.reader import is_file, is_folder, resolved
from retriever.text.safe import preview

PROBE_SECONDS = 3.0
SKIPPED_SHOWN = 5


def gather(loaded: Loaded) -> dict[str, Any]:
    """Everything ``retriever status`` shows (see the module's contract)."""
    settings, root = loaded.settings, loaded.root
    problems: list[str] = []
    identity = memory_identity(root, settings)
    report = {
        "root": {"path": str(resolved(root)), "source": str(loaded.source("root"))},
        "memory": _memory(root, settings, problems),
        "index_cache": _index_cache(root, settings),
        "store": _store(settings, problems),
        "llm": _llm(loaded, problems),
        "api_keys": _api_keys(settings, problems),
        "memory_identity": {"kind": identity.kind, "value": mask_url(identity.value)},
        "config_files": {kind: str(path) if path else None for kind, path in loaded.files.items()},
        "settings": settings_report(loaded),
    }
    report["problems"] = problems
    return report


def _api_keys(settings: Settings, problems: list[str]) -> dict[str, Any]:
    """How many keys ``retriever serve`` would accept, checked as it checks them (``load_api_keys``):
    keys it would refuse to start with are a problem, named by position (the message never holds a key)."""
    try:
        keys = load_api_keys(settings)
    except ConfigError as exc:
        problems.append(f"API keys: {exc.message}; `retriever serve` refuses to start until this is fixed")
        return {"valid": False, "error": exc.message}
    bound = sum(not grant.any_user for _, grant in keys.entries)
    return {"valid": True, "keys": len(keys.entries), "bound_to_users": bound}


def _memory(root: Path, settings: Settings, problems: list[str]) -> dict[str, Any]:
    if not is_folder(root):
        shown = preview(str(root), 200)
        problems.append(f"memory root {shown} is not a folder: pass --root DIR or set root in a config file")
        return {"state": "missing"}
    opened = load_memory(root, settings)
    if isinstance(opened, RetrieverError):
        problems.append(f"the memory could not be loaded: {opened.message}")
        return {"state": "error", "error": opened.message}
    ready, state = opened.readiness()
    if not ready:
        problems.append(f"no markdown sections under {root}: check --root (`retriever tree` lists skipped files)")
    problems.extend(f"memory: {warning}" for warning in opened.warnings)
    skipped = [{"path": opened.source_path(s.rel_path), "reason": s.reason} for s in opened.skipped]
    return {
        "state": state,
        "files": opened.documents_count,
        "sections": opened.sections_count,
        "skipped_files": len(skipped),
        "skipped_first": skipped[:SKIPPED_SHOWN],
        "index": opened.stats.cache,  # hit, updated, built or disabled: what opening it took just now
    }


def _index_cache(root: Path, settings: Settings) -> dict[str, Any]:
    if not is_folder(root):  # no memory, no cache (a root that is a looping link cannot even be resolved)
        return {"folder": None, "exists": False}
    folder = index_cache_dir(settings, root)
    if not is_folder(folder):
        return {"folder": str(folder), "exists": False}
    entry = caches.describe(folder)
    state = folder / "index" / "state.pkl"
    saved = state.stat().st_mtime if state.is_file() else None
    return {
        "folder": str(folder),
        "exists": True,
        "size_bytes": entry.size,
        "index_saved_at": saved,
        "index_age_seconds": round(time.time() - saved, 1) if saved is not None else None,
    }


def _store(settings: Settings, problems: list[str]) -> dict[str, Any]:
    if not settings.redis_url:
        return _sqlite_store(sqlite_path(settings), problems)
    from retriever.service.stores.redis import RedisStore

    shown = mask_url(settings.redis_url)
    try:
        RedisStore(settings.redis_url, timeout=PROBE_SECONDS).close()
    except RetrieverError as exc:
        problems.append(exc.message)
        return {"kind": "redis", "url": shown, "reachable": False, "error": exc.message}
    return {"kind": "redis", "url": shown, "reachable": True}


def _sqlite_store(path: Path, problems: list[str]) -> dict[str, Any]:
    """The SQLite store's file and, when it exists, whether it reads as a database (checked read-only)."""
    if not is_file(path):
        return {"kind": "sqlite", "path": str(path), "exists": False, "size_bytes": None}
    problem = unreadable(path)
    if problem:
        problems.append(problem)
    report = {"kind": "sqlite", "path": str(path), "exists": True, "size_bytes": path.stat().st_size}
    return report | {"readable": problem is None}


def _llm(loaded: Loaded, problems: list[str]) -> dict[str, Any]:
    settings = loaded.settings
    base_url, key = endpoint_and_key(settings)
    endpoint = base_url or OPENAI_URL
    report: dict[str, Any] = {
        "model": settings.llm_model,
        "endpoint": mask_url(endpoint),
        "key": f"set ({loaded.source('llm_api_key')})" if key else "not set",
        "stages": list(settings.llm_stages),
    }
    if not settings.llm_model:
        report["probe"] = {"answers": None, "detail": "offline: no llm_model set (RETRIEVER_LLM_MODEL)"}
        return report
    try:
        report["probe"] = probe = probe_models(endpoint, key, settings.llm_model)
    except ConfigError as exc:  # an endpoint that is no URL, proxy settings the HTTP library cannot read
        problems.append(f"{exc.message}; `retriever query` and `serve` stop until this is fixed")
        report["probe"] = {"answers": False, "detail": exc.message}
        return report
    if not probe["answers"]:
        problems.append(f"the LLM endpoint {mask_url(endpoint)} does not answer: {probe['detail']}")
    return report


def probe_models(endpoint: str, key: str | None, model: str) -> dict[str, Any]:
    """``GET <endpoint>/models`` within ``PROBE_SECONDS`` in all: does it answer, and does it list ``model``?
    ``ConfigError`` when no client can be built for ``endpoint`` (``Http.of``: not a URL, bad proxy settings).

    Through the LLM seam's own HTTP client (``llm.transport``, on the HTTP library the ``openai`` package
    brings): ``httpx`` itself is a test dependency only, and a probe must not outlast its bound however
    slowly the endpoint answers."""
    from openai import DefaultHttpxClient

    from retriever.llm.transport import Http, within

    http = Http.of(DefaultHttpxClient, endpoint)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    started = time.perf_counter()
    try:
        with within(time.monotonic() + PROBE_SECONDS):
            response = http.client.get(endpoint.rstrip("/") + "/models", headers=headers, timeout=PROBE_SECONDS)
    except http.timeout_error:
        return {"answers": False, "detail": f"no answer within {PROBE_SECONDS:g} s"}
    except http.error as exc:
        return {"answers": False, "detail": mask_url(f"{type(exc).__name__}: {exc}")[:300]}
    ms = round((time.perf_counter() - started) * 1000, 1)
    if response.status_code != 200:
        code = response.status_code
        hint = " (the key was refused)" if code in (401, 403) else ""
        return {"answers": False, "status": code, "ms": ms, "detail": f"HTTP {code}{hint}"}
    return {"answers": True, "status": 200, "ms": ms, "detail": _listed(response, model)}


def _listed(response: Any, model: str) -> str:
    try:
        names = {str(m.get("id")) for m in response.json().get("data", []) if isinstance(m, dict)}
    except (ValueError, AttributeError):
        return "answers (its model list could not be read)"
    if not names:
        return "answers"
    return f"answers; lists {model}" if model in names else f"answers, but does not list {model}"


def settings_report(loaded: Loaded) -> dict[str, dict[str, Any]]:
    """Every setting's value (secrets as set / not set) and where it came from."""
    values = loaded.settings.model_dump()
    out: dict[str, dict[str, Any]] = {}
    for key in VARIABLES:
        value = str(loaded.root) if key == "root" else values.get(key)
        out[key] = {"value": _shown(key, value), "source": str(loaded.source(key)), "variable": VARIABLES[key]}
    return out


def _shown(key: str, value: Any) -> Any:
    if value is None:
        return None
    if key == "redis_url":
        return mask_url(str(value))
    if key in SECRET_KEYS:
        return "(set)"
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, dict):
        return {k: str(v) for k, v in value.items()}
    return value
