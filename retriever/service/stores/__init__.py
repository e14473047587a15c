"""The stores behind sessions and the request log, and the factory that picks one.

``base`` holds the contract (``Store``, ``RequestRecord``, ``StoreUnavailable``); ``sqlite`` and
``redis`` meet it; ``queue`` keeps a stalled store from holding up a call.
"""

from __future__ import annotations

import time
from pathlib import Path

from retriever.config import Settings, state_home
from retriever.service.stores.base import Clock, Store

STORE_FILE = "store.sqlite"  # the SQLite store's file in the state folder


def open_store(settings: Settings, clock: Clock = time.time) -> Store:
    """Redis when ``settings.redis_url`` is set, else SQLite under the state folder.

    Raises ``StoreUnavailable`` with a message naming the address when it cannot be used.
    """
    if settings.redis_url:
        # Imported only when chosen: a SQLite user never loads the redis client.
        from retriever.service.stores.redis import RedisStore

        return RedisStore(settings.redis_url, settings.request_log_limit, clock)
    from retriever.service.stores.sqlite import SQLiteStore

    path = sqlite_path(settings)
    return SQLiteStore(path, settings.request_log_limit, clock, session_limit=settings.session_limit)


def sqlite_path(settings: Settings) -> Path:
    """Where the SQLite store lives (or would), in the state folder."""
    return state_home(settings) / STORE_FILE


def store_path(settings: Settings) -> Path | None:
    """Where ``open_store`` keeps the SQLite store; None when the store is Redis."""
    return None if settings.redis_url else sqlite_path(settings)
