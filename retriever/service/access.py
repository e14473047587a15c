"""API keys and the users each key may act for (``RETRIEVER_API_KEY``, ``RETRIEVER_API_KEYS``).

``RETRIEVER_API_KEYS`` binds keys to users, so that one tenant's key cannot read another
tenant's tree: inline ``key1=alice|bob,key2=*`` or, for a value without ``=``, the path of
a keys file holding one ``key=users`` per line (``#`` comments and blank lines are
ignored).  ``*`` means any user.  ``RETRIEVER_API_KEY`` is one more key, for any user.

Contract: no message this module produces contains a key; configuration errors name entries by
position.  A grant's ``name`` is a fingerprint of its key (``key_name``), never its position: MCP
sessions of a key bound to users are kept under it for 30 days, so a name that followed the list's
order would hand a key's sessions to another when keys are reordered or one is added.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from pathlib import Path

from retriever.config import Settings
from retriever.errors import ConfigError

ANY_USER = "*"
_FORMAT = "expected key=user1|user2 or key=* (a key, '=', then '|'-separated user ids or '*')"
_NAME_DOMAIN = b"company-memory-retriever api key name\0"  # keeps the fingerprint apart from any other hash of a key


@dataclass(frozen=True)
class KeyGrant:
    """What a request may do: act for ``users`` (None: any user).

    ``name`` (``key_name``: ``key-`` and 16 hex digits) names the key for session scoping; it is the
    same whatever the key's place in the list, and it is not the key."""

    name: str
    users: frozenset[str] | None

    @property
    def any_user(self) -> bool:
        return self.users is None

    def allows(self, user_id: str | None) -> bool:
        """True when this grant may act for ``user_id`` (a restricted grant needs a named user)."""
        return self.users is None or (user_id is not None and user_id in self.users)


OPEN = KeyGrant("open", None)  # the grant of every request when the server requires no key


@dataclass(frozen=True)
class ApiKeys:
    """The keys a server accepts; empty when it requires none."""

    entries: tuple[tuple[bytes, KeyGrant], ...] = ()

    @property
    def required(self) -> bool:
        return bool(self.entries)

    def check(self, token: str) -> KeyGrant | None:
        """The grant of ``token``, or None; compares against every key in constant time each."""
        offered = token.encode("utf-8", "surrogateescape")
        found: KeyGrant | None = None
        for key, grant in self.entries:
            if hmac.compare_digest(offered, key):  # no early exit: timing does not tell which key matched
                found = grant
        return found


def key_name(key: str) -> str:
    """``key-`` and the first 16 hex digits of a SHA-256 of ``key``: stable across restarts and list
    orders, distinct per key (64 bits), and not the key.  Not shown to clients: it keys sessions."""
    return "key-" + hashlib.sha256(_NAME_DOMAIN + key.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def load_api_keys(settings: Settings) -> ApiKeys:
    """The keys of ``RETRIEVER_API_KEY`` (any user) and ``RETRIEVER_API_KEYS``; raises ``ConfigError``."""
    entries: list[tuple[str, frozenset[str] | None]] = []
    if settings.api_key is not None and settings.api_key.get_secret_value().strip():
        entries.append((settings.api_key.get_secret_value().strip(), None))
    if settings.api_keys is not None:
        entries += _read_bindings(settings.api_keys.get_secret_value())
    return _build(entries)


def _read_bindings(value: str) -> list[tuple[str, frozenset[str] | None]]:
    if "=" in value:
        return _parse_entries(value.replace("\n", ","), "RETRIEVER_API_KEYS", "entry")
    path = Path(value.strip()).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8"
        # The value is not echoed: a key pasted without '=users' would land in the message.
        raise ConfigError(
            f"RETRIEVER_API_KEYS has no '=', so it is read as a keys file path, and that file cannot be read "
            f"({reason}); give key=user1|user2 pairs or the path of a readable keys file"
        ) from None
    lines = [line.split("#", 1)[0] for line in text.splitlines()]
    return _parse_entries("\n".join(lines), f"keys file {str(path)!r}", "line", separator="\n")


def _parse_entries(text: str, source: str, unit: str, separator: str = ",") -> list[tuple[str, frozenset[str] | None]]:
    entries: list[tuple[str, frozenset[str] | None]] = []
    for number, raw in enumerate(text.split(separator), start=1):
        if raw.strip():
            entries.append(_parse_entry(raw, f"{source} {unit} {number}"))
    if not entries:
        raise ConfigError(f"{source} holds no keys; {_FORMAT}")
    return entries


def _parse_entry(raw: str, where: str) -> tuple[str, frozenset[str] | None]:
    key, equals, users_text = raw.strip().partition("=")
    key = key.strip()
    if not equals or not key or any(c.isspace() for c in key):
        raise ConfigError(f"{where}: {_FORMAT}")
    users = [u.strip() for u in users_text.split("|")]
    if users == [ANY_USER]:
        return key, None
    if not all(users) or ANY_USER in users:
        raise ConfigError(f"{where}: the user list is empty, has an empty name or mixes '*' with names; {_FORMAT}")
    return key, frozenset(users)


def _build(entries: list[tuple[str, frozenset[str] | None]]) -> ApiKeys:
    seen: set[str] = set()
    names: set[str] = set()
    built: list[tuple[bytes, KeyGrant]] = []
    for number, (key, users) in enumerate(entries, start=1):
        if key in seen:
            raise ConfigError(f"API key number {number} repeats an earlier key; give each key once")
        name = key_name(key)
        if name in names:  # two keys whose fingerprints meet (about 2**-64 per pair) would share sessions
            raise ConfigError(f"API key number {number} has the same fingerprint as an earlier key; choose another key")
        seen.add(key)
        names.add(name)
        built.append((key.encode(), KeyGrant(name, users)))
    return ApiKeys(tuple(built))
