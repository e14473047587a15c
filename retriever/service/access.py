"""API keys and the users each key may act for (``RETRIEVER_API_KEY``, ``RETRIEVER_API_KEYS``).

``RETRIEVER_API_KEYS`` binds keys to users, so that one tenant's key cannot read another
tenant's tree: inline ``key1=alice|bob,key2=*`` or, for a value without ``=``, the path of
a keys file holding one ``key=users`` per line (``#`` comments and blank lines are
ignored).  ``*`` means any user.  ``RETRIEVER_API_KEY`` is one more key, for any user.

User ids are kept in their canonical form (``compat.users.canonical_user_id``: NFC, stripped), the
form ``/memories/retrieve`` and the MCP routes compare, so a key bound to ``José`` acts for ``José``
in either Unicode spelling.  A bound user id that is not a valid user id (``../etc``, ``bad name``)
could never be named by a request: ``load_api_keys`` refuses it (``ConfigError`` naming the entry by
position and the id, bounded; an id that may hold a key, one with '=', white space or 16 characters of a
key in a row, by its length only), as it refuses an empty one, rather than start a key that silently
acts for fewer users than written, or for none.

A keys file is read as UTF-8, a leading byte-order mark dropped; it must be a regular file of at most
``MAX_KEYS_FILE_BYTES`` (opened non-blocking: a FIFO or ``/dev/zero`` is refused, never waited on or read
to the end).  A key is printable ASCII (``!`` to ``~``), as a client's ``Authorization`` header carries
it: one holding an invisible character (a format character such as U+FEFF, or white space), a control
character or a non-ASCII one is refused, naming its entry and what is wrong, never the key.

Contract: no message this module produces contains a key; configuration errors name entries by
position.  A grant's ``name`` is a fingerprint of its key (``key_name``), never its position: MCP
sessions of a key bound to users are kept under it for 30 days, so a name that followed the list's
order would hand a key's sessions to another when keys are reordered or one is added.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from retriever.compat.users import USER_ID_RULE, InvalidUserId, canonical_user_id
from retriever.config import Settings
from retriever.errors import ConfigError
from retriever.text.reader import expanded
from retriever.text.regular import NotRegular, TooLarge, read_regular
from retriever.text.safe import preview

ANY_USER = "*"
_FORMAT = "expected key=user1|user2 or key=* (a key, '=', then '|'-separated user ids or '*')"
_NAME_DOMAIN = b"company-memory-retriever api key name\0"  # keeps the fingerprint apart from any other hash of a key
MAX_KEYS_FILE_BYTES = 1 << 20  # a keys file larger than this (1 MiB) is refused, never read whole


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
        """True when this grant may act for ``user_id`` (a restricted grant needs a named user).

        ``users`` holds canonical ids and ``user_id`` is compared in its canonical form, so any
        Unicode spelling of a bound name is allowed; an invalid id is never allowed by a restricted grant."""
        if self.users is None:
            return True
        try:
            return user_id is not None and canonical_user_id(user_id) in self.users
        except InvalidUserId:
            return False


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


@dataclass(frozen=True)
class _Binding:
    """One key as written: its user ids as written (None: any user), and where, for messages."""

    key: str
    users: tuple[str, ...] | None
    where: str  # "RETRIEVER_API_KEYS entry 2", "keys file '/etc/keys' line 4": a position, never the key


def load_api_keys(settings: Settings) -> ApiKeys:
    """The keys of ``RETRIEVER_API_KEY`` (any user) and ``RETRIEVER_API_KEYS``, users in canonical form.

    Raises ``ConfigError`` for a malformed entry, bound user ids that are not valid user ids (named
    with their entry's position: at most 5 ids per entry and 10 entries, each cut to 40 characters),
    a key holding a space or an invisible character (``_check_visible``), and a repeated key; no
    message holds a key."""
    bindings: list[_Binding] = []
    if settings.api_key is not None and settings.api_key.get_secret_value().strip():
        single = settings.api_key.get_secret_value().strip()
        _check_visible(single, "RETRIEVER_API_KEY")
        bindings.append(_Binding(single, None, "RETRIEVER_API_KEY"))
    if settings.api_keys is not None:
        bindings += _read_bindings(settings.api_keys.get_secret_value())
    return _build(bindings, _canonical_users(bindings))


def keys_file(settings: Settings) -> Path | None:
    """The keys file ``RETRIEVER_API_KEYS`` names (None: inline keys, or none): what a server re-reads when it
    changes."""
    value = settings.api_keys.get_secret_value() if settings.api_keys is not None else ""
    return expanded(Path(value.strip())) if value.strip() and "=" not in value else None


def _read_bindings(value: str) -> list[_Binding]:
    if "=" in value:
        return _parse_entries(value.replace("\n", ","), "RETRIEVER_API_KEYS", "entry")
    path = expanded(Path(value.strip()))
    text = _keys_file_text(path)
    lines = [line.split("#", 1)[0] for line in text.splitlines()]
    return _parse_entries("\n".join(lines), f"keys file {str(path)!r}", "line", separator="\n")


def _keys_file_text(path: Path) -> str:
    """The keys file's text; ``ConfigError`` unless it is a readable regular file of UTF-8 within
    ``MAX_KEYS_FILE_BYTES``.  Opened non-blocking and checked before it is read: a FIFO would hang the
    start, a device such as ``/dev/zero`` fill the memory.  A path that cannot be opened is not echoed (it
    may be a key pasted without '=users'); one that opens is named, bounded."""
    why = "RETRIEVER_API_KEYS has no '=', so it is read as a keys file path"
    fix = "give key=user1|user2 pairs or the path of a readable keys file"
    shown = preview(str(path), 200)
    try:
        data = read_regular(path, MAX_KEYS_FILE_BYTES)
    except NotRegular:
        raise ConfigError(f"{why}, and {shown} is not a regular file (a FIFO, a device or a folder); {fix}") from None
    except TooLarge:
        raise ConfigError(f"keys file {shown} is over 1 MiB, far more than any list of keys; {fix}") from None
    except OSError as exc:
        raise ConfigError(f"{why}, and that file cannot be read ({exc.strerror}); {fix}") from None
    try:
        return data.decode("utf-8-sig")  # a byte-order mark (Notepad's "UTF-8 with BOM") is dropped
    except UnicodeDecodeError:
        raise ConfigError(f"{why}, and that file cannot be read (not UTF-8); {fix}") from None


def _parse_entries(text: str, source: str, unit: str, separator: str = ",") -> list[_Binding]:
    entries: list[_Binding] = []
    for number, raw in enumerate(text.split(separator), start=1):
        if raw.strip():
            entries.append(_parse_entry(raw, f"{source} {unit} {number}"))
    if not entries:
        raise ConfigError(f"{source} holds no keys; {_FORMAT}")
    return entries


def _parse_entry(raw: str, where: str) -> _Binding:
    key, equals, users_text = raw.strip().partition("=")
    key = key.strip()
    if not equals or not key or any(c.isspace() and c.isascii() for c in key):  # two entries run together?
        raise ConfigError(f"{where}: {_FORMAT}")
    _check_visible(key, where)
    users = [u.strip() for u in users_text.split("|")]
    if users == [ANY_USER]:
        return _Binding(key, None, where)
    if not all(users) or ANY_USER in users:
        raise ConfigError(f"{where}: the user list is empty, has an empty name or mixes '*' with names; {_FORMAT}")
    return _Binding(key, tuple(users), where)


def _check_visible(key: str, where: str) -> None:
    """``ConfigError`` unless ``key`` is printable ASCII (``!`` to ``~``), the only bytes a client's header
    carries that could match it: an invisible character (a format character such as U+FEFF, the byte-order
    mark, or U+200B, or white space) no client sends; a control character (U+0001) the HTTP server refuses
    in a header (400); a non-ASCII one the server reads as Latin-1 bytes, never as the UTF-8 compared here.
    The message names the entry and what is wrong (an invisible or control character by its code point),
    never the key nor a character of it that is visible."""
    if _KEY_CHARACTERS.fullmatch(key):
        return
    hidden = next((c for c in key if c.isspace() or unicodedata.category(c) == "Cf"), None)
    if hidden is not None:
        name = unicodedata.name(hidden, "unnamed")
        bom = " (a byte-order mark: save the file as plain UTF-8, not 'UTF-8 with BOM')" if hidden == "\ufeff" else ""
        raise ConfigError(
            f"{where}: the key holds U+{ord(hidden):04X} ({name}), a space or invisible character no client sends "
            f"in its header, so the key could never match; remove it{bom}"
        )
    control = next((c for c in key if unicodedata.category(c) == "Cc"), None)
    what = (
        f"a control character U+{ord(control):04X}, which the server refuses in a header"
        if control is not None
        else "a non-ASCII character, which a header does not carry as written"
    )
    raise ConfigError(
        f"{where}: the key holds {what}, so the key could never match; use only printable ASCII "
        "(letters, digits and punctuation, as `openssl rand -hex 32` writes)"
    )


_KEY_CHARACTERS = re.compile(r"[\x21-\x7e]+")

_SHOWN_IDS, _SHOWN_ENTRIES = 5, 10  # a message names at most this many invalid ids per entry, and entries


def _canonical_users(bindings: list[_Binding]) -> list[frozenset[str] | None]:
    """Each binding's users in canonical form (None: any user); ``ConfigError`` naming the invalid ids.

    A bound id that is not a valid user id can never match a request (requests are refused or
    canonicalised before any grant check), so it is a mistake in the configuration, like an empty one."""
    keys = [binding.key for binding in bindings]
    canonical: list[frozenset[str] | None] = []
    problems: list[str] = []
    withheld = False
    for binding in bindings:
        valid: set[str] = set()
        invalid: list[str] = []
        for user in binding.users or ():
            try:
                valid.add(canonical_user_id(user))
            except InvalidUserId:
                invalid.append(_shown(user, keys))
                withheld = withheld or _withheld(user, keys)
        if invalid:
            problems.append(_invalid_users(binding.where, invalid, acts_for_none=not valid))
        canonical.append(None if binding.users is None else frozenset(valid))
    if problems:
        more = f"; and {len(problems) - _SHOWN_ENTRIES} more entries" if len(problems) > _SHOWN_ENTRIES else ""
        listed = "; ".join(problems[:_SHOWN_ENTRIES]) + more
        note = _WITHHELD_NOTE if withheld else ""
        raise ConfigError(f"{listed}; a user id is a plain name, as its folder is named: {USER_ID_RULE}{note}")
    return canonical


def _invalid_users(where: str, shown: list[str], *, acts_for_none: bool) -> str:
    """One entry's problem: which of its user ids are invalid, and what that does to its key."""
    names = ", ".join(shown[:_SHOWN_IDS]) + (f" and {len(shown) - _SHOWN_IDS} more" if len(shown) > _SHOWN_IDS else "")
    if acts_for_none:
        return f"{where} binds its key to no valid user id, so the key would act for no one: {names}"
    invalid, them = ("not a valid user id", "it") if len(shown) == 1 else ("not valid user ids", "them")
    return f"{where} binds its key to {names}, {invalid}: no request can name {them}"


def _shown(user: str, keys: list[str]) -> str:
    """An invalid user id as a message may show it: quoted and bounded, or withheld (``_withheld``)."""
    return f"a {len(user):,}-character id not shown" if _withheld(user, keys) else preview(user, 40)


def _withheld(user: str, keys: list[str]) -> bool:
    """True when an invalid user id may hold a key, so that no message may show it.

    ``k1=alice k2=bob`` runs two entries together: the 'user' ``alice k2=bob`` holds the second key, and
    ``k1=alice sk-live-...`` one with no '=' after it.  So an id holding '=', white space, a configured key,
    or 16 characters in a row of those keys are written with (``_MAY_HOLD_A_KEY``) is withheld."""
    return "=" in user or any(key in user for key in keys) or _MAY_HOLD_A_KEY.search(user) is not None


_MAY_HOLD_A_KEY = re.compile(r"\s|[A-Za-z0-9_-]{16}")  # white space, or 16 characters a key is written with
_WITHHELD_NOTE = (
    "; an id holding '=', white space or 16 letters, digits, '_' or '-' in a row is not shown, as it may hold a "
    "key (two entries run together? separate entries with ',' or a new line)"
)


def _build(bindings: list[_Binding], users: list[frozenset[str] | None]) -> ApiKeys:
    seen: set[str] = set()
    names: set[str] = set()
    built: list[tuple[bytes, KeyGrant]] = []
    for number, (binding, bound) in enumerate(zip(bindings, users, strict=True), start=1):
        key = binding.key
        if key in seen:
            raise ConfigError(f"API key number {number} repeats an earlier key; give each key once")
        name = key_name(key)
        if name in names:  # two keys whose fingerprints meet (about 2**-64 per pair) would share sessions
            raise ConfigError(f"API key number {number} has the same fingerprint as an earlier key; choose another key")
        seen.add(key)
        names.add(name)
        built.append((key.encode(), KeyGrant(name, bound)))
    return ApiKeys(tuple(built))
