"""What messages and logs may show of a value: URL passwords masked, secrets named by their type only.

Contract: ``mask_url(text)`` masks every URL password and secret query parameter in ``text``;
``shown_value(key, value)`` is how an invalid value of setting ``key`` appears in a message (never a secret's value:
``SECRET_KEYS``); ``type_name(value)`` names a value's type as a config file's reader would.  Pure functions, at the
bottom of the house with ``errors``: settings, stores, the LLM client and the adapters all word their messages so.
"""

from __future__ import annotations

import re
import sys
from typing import Any

SECRET_KEYS = frozenset({"api_key", "api_keys", "llm_api_key", "redis_url"})  # redis_url may hold a password


_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:@/\s]*)(?P<password>:[^/\s]*)?@")


# A secret passed as a URL's query parameter: redis-py reads ``?password=`` as the password.
_SECRET_PARAMETER = re.compile(
    r"(?P<key>[?&](?:password|passwd|pass|pwd|secret|token|access_token|api_key|key)=)[^&#\s]*", re.I
)


def mask_url(text: str) -> str:
    """``text`` with the password of every URL in it masked: ``redis://user:***@host``, ``…?password=***``.

    For messages and logs that name a store's URL: the user name stays (it helps to
    diagnose) when a password follows it; a password, or a bare token with no user, becomes ``***``.
    """
    return _SECRET_PARAMETER.sub(r"\g<key>***", _CREDENTIALS.sub(_masked, text))


def shown_value(key: str, value: Any) -> str:
    """How an invalid ``value`` of setting ``key`` is shown in a message: its ``repr`` (cut at 200
    characters, URL passwords masked), or for a secret (``SECRET_KEYS``) only its type, never the value:
    ``<a list, not shown: api_keys is a secret>``.  An integer Python will not write out (over 4,300 digits,
    which a TOML file may hold in hex) is shown by its size."""
    if key in SECRET_KEYS:
        return f"<{type_name(value)}, not shown: {key} is a secret>"
    try:
        return mask_url(repr(value)[:200])
    except ValueError:  # int's repr refuses past sys.get_int_max_str_digits()
        what = "an integer" if isinstance(value, int) else f"{type_name(value)} holding an integer"
        return f"<{what} of over {sys.get_int_max_str_digits():,} digits>"


def type_name(value: Any) -> str:
    """A value's type in a config file's words: a string, a list, a table, …"""
    names = {bool: "a boolean", str: "a string", int: "an integer", float: "a number", list: "a list", dict: "a table"}
    return next((name for kind, name in names.items() if isinstance(value, kind)), f"a {type(value).__name__}")


def _masked(match: re.Match[str]) -> str:
    user = f"{match['user']}:" if match["user"] and match["password"] else ""
    return f"{match['scheme']}{user}***@"
