"""The users of a server: their ids, and where their own trees may lie.

A user id is a name, never a path (``canonical_user_id``): NFC-normalised, 1-128 characters that
are letters, marks, digits or ``_ . @ -``, at most 255 bytes of UTF-8, not starting with ``.``
(so never ``.`` or ``..``).  The users' trees (``RETRIEVER_USER_TREES``) never lie inside a shared tree
(``check_apart``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from pathlib import Path

from retriever.errors import ConfigError
from retriever.text.reader import resolved
from retriever.text.safe import preview

MAX_USER_ID_CHARS = 128
MAX_USER_ID_BYTES = 255  # one path component on common filesystems
USER_ID_PUNCTUATION = frozenset("_.@-")
USER_ID_RULE = "use 1-128 letters, digits, '_', '.', '@' or '-', not starting with '.'"  # what refusals ask for


class InvalidUserId(ValueError):
    """A user id that is not a plain name (see the module's contract); ``message`` says what to send."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def canonical_user_id(raw: str) -> str:
    """The user id as its folder is named: NFC, stripped, checked; ``InvalidUserId`` otherwise.

    The one form of a user id everywhere: the user's folder, the users a key is bound to
    (``service.access``), grant checks and MCP session scoping all use it, so two Unicode
    spellings of one name (NFD and NFC, say) are one user on every surface."""
    user = unicodedata.normalize("NFC", raw.strip())
    if not user:
        raise InvalidUserId(f"the user id is empty; {USER_ID_RULE}")
    if len(user) > MAX_USER_ID_CHARS:
        raise InvalidUserId(f"the user id {preview(user, 40)} is too long ({len(user):,} characters); {USER_ID_RULE}")
    if (size := len(user.encode("utf-8", "replace"))) > MAX_USER_ID_BYTES:
        raise InvalidUserId(
            f"the user id {preview(user, 40)} is too long ({size:,} bytes of UTF-8, over the {MAX_USER_ID_BYTES} "
            f"a folder name holds: a letter outside ASCII takes 2-4 bytes); {USER_ID_RULE}, "
            f"in at most {MAX_USER_ID_BYTES} bytes"
        )
    if user.startswith(".") or not all(_user_id_char(c) for c in user):
        raise InvalidUserId(f"the user id {preview(user, 40)} is not a plain name; {USER_ID_RULE}")
    return user


def _user_id_char(char: str) -> bool:
    return char in USER_ID_PUNCTUATION or unicodedata.category(char)[0] in "LMN"


def check_apart(users: Path | None, shared: Mapping[str, Path]) -> None:
    """Refuse users' trees and shared trees that hold one another.  Users' trees inside a shared tree: that tree
    would index every user's files, and any caller reading it (every user, by default) would be answered from
    all of them.  A shared tree inside the users' folder ("--root /srv/users/alice"): one user's own tree served
    to everyone."""
    if users is None:
        return
    folder = resolved(users)
    for graph, root in shared.items():
        tree = resolved(root)
        inside = folder.is_relative_to(tree)
        if inside or tree.is_relative_to(folder):
            raise ConfigError(
                f"the users' trees ({preview(str(users), 120)}) lie {'inside' if inside else 'around'} graph "
                f"{preview(graph, 60)} "
                f"({preview(str(root), 120)}), which would show users' own files to anyone: keep the users' folder "
                "(RETRIEVER_USER_TREES) and the served trees apart, e.g. /srv/memory/users beside /srv/memory/company"
            )

