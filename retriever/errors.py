"""The retriever's exception tree.

Every error carries the machine-readable ``code`` of seed 000's error shape
(``{"status": "error", "error_code": ..., "error_message": ...}``).  Adapters map
the class to an exit code, a JSON-RPC error, an MCP ``isError`` result or an HTTP
status; the core only raises.  Messages name the bad value and the next step.
"""

from __future__ import annotations

import shlex
from typing import Any


class RetrieverError(Exception):
    """Base of every error the retriever raises on purpose."""

    code = "internal_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_dict(self) -> dict[str, Any]:
        """The seed's error object (structuredContent on failure)."""
        return {"status": "error", "error_code": self.code, "error_message": self.message}


class InvalidArguments(RetrieverError):
    """Tool arguments are missing, unknown, of the wrong type or out of bounds."""

    code = "invalid_arguments"


class RetrievalTimeout(RetrieverError):
    """Retrieval did not finish within the configured deadline (120 s by default)."""

    code = "retrieval_timeout"


class MemoryNotFound(RetrieverError):
    """The memory root does not exist or is not a folder."""

    code = "memory_not_found"

    @classmethod
    def at(cls, shown: str, why: str | None = None) -> MemoryNotFound:
        """The error for the root ``shown`` (as given, quoted and cut short: ``safe.preview``), with why it is no
        folder (``reader.not_a_folder``)."""
        because = f" ({why})" if why else ""
        return cls(f"memory root {shown} is not a folder{because}; pass --root DIR or set RETRIEVER_ROOT")


class ConfigError(RetrieverError):
    """A setting (environment variable, option or config value) is invalid."""

    code = "invalid_config"


class DocumentUnavailable(RetrieverError, KeyError):
    """A document the index holds cannot be read now: its cache record is damaged and its file changed since the
    index was built (the next refresh reads the new version).  A ``KeyError`` too, as for a path with no document."""

    code = "document_unavailable"

    def __str__(self) -> str:  # KeyError's would quote the message
        return self.message


class MemoryUnavailable(RetrieverError):
    """The memory could not be loaded for a reason no other error names (a cache or a file system failing); a server
    retries the load, and answers this until it succeeds."""

    code = "memory_unavailable"


class MemoryEmpty(RetrieverError):
    """The memory root is a folder but holds no markdown the retriever could read (no sections)."""

    code = "memory_empty"

    @classmethod
    def at(cls, root: str, skipped: int = 0) -> MemoryEmpty:
        """The error for ``root``, with the next step (and where skipped files are listed, if any)."""
        plain = len(root) <= 200 and root.isprintable()  # else only quoted: no control character reaches a terminal
        command = f"retriever tree --root {shlex.quote(root) if plain else 'DIR'}"
        reason = f"; {skipped} file(s) were skipped, `{command}` says why" if skipped else ""
        return cls(
            f"memory root {root!r} holds no markdown files with text{reason}; add .md files "
            "(`retriever init DIR` writes examples) or pass --root DIR naming the memory folder"
        )
