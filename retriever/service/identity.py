"""Which memory a server answers from, as a name that is the same on every machine serving it.

Contract: ``memory_identity(root, settings)`` returns an ``Identity``: ``settings.memory_id`` when
set; else, for a tree inside a git repository with an ``origin`` remote, that remote's address
(scheme, user, password and ``.git`` left out, host in lower case) plus the tree's folder inside the
repository; else the tree's absolute path.  Session history is kept under it (``MemoryService``), so
replicas on different machines, each with its own clone at its own path, share a client's sessions,
while two different memories never do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from retriever.config import Settings
from retriever.memory import gitinfo
from retriever.text.reader import is_folder, resolved

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SCP = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>(?!//).+)$")  # git@github.com:acme/memory.git


@dataclass(frozen=True, slots=True)
class Identity:
    """The memory's name for session scoping, and where it came from."""

    kind: Literal["memory_id", "git remote", "path"]
    value: str


def memory_identity(root: Path, settings: Settings) -> Identity:
    """See the module's contract; never raises (git problems fall back to the path)."""
    if settings.memory_id:
        return Identity("memory_id", settings.memory_id)
    repo = gitinfo.find_repo(root) if is_folder(root) else None
    url = gitinfo.remote_url(repo) if repo is not None else None
    if repo is not None and url:
        prefix = gitinfo.prefix_of(repo, root)
        return Identity("git remote", normalized_remote(url) + (f"/{prefix}" if prefix else ""))
    return Identity("path", str(resolved(root)))


def normalized_remote(url: str) -> str:
    """``host/path`` of a git remote, whichever way it is written: ``https://user:pw@GitHub.com/acme/m.git``,
    ``ssh://git@github.com/acme/m``, ``git@github.com:acme/m.git`` all give ``github.com/acme/m``; a local
    repository (``/srv/git/m.git``, ``file:///srv/git/m``) gives its path (``/srv/git/m``)."""
    text = url.strip()
    if text.startswith(("/", "file://")):  # a repository on this machine (or a shared mount): its path
        return text.removeprefix("file://").rstrip("/").removesuffix(".git")
    scp = None if _SCHEME.match(text) else _SCP.match(text)
    if scp is not None:
        host, path = scp["host"], scp["path"]
    else:
        rest = _SCHEME.sub("", text)
        authority, _, path = rest.partition("/")
        host = authority.rpartition("@")[2]
    host = host.lower().rstrip(".")
    path = path.strip("/").removesuffix(".git").rstrip("/")
    return f"{host}/{path}" if host else path
