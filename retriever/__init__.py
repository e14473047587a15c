"""Company memory retriever: ranked, cited facts from a git-edited tree of markdown files.

from retriever import Retriever
result = Retriever("company_context").retrieve("Who owns the billing project?")
result.text          # the markdown report
result.structured    # seed 000's structuredContent (a dict)
result.facts         # the ranked facts, as ``Fact``s
result.summary, result.coverage, result.answerability  # the answer, and whether the memory holds one

These names are the public API; everything else is internal and may change.  They load on first
use (PEP 562), so ``import retriever`` (and ``retriever --help``) stays cheap: no numpy, no pydantic.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from retriever.config import Settings
    from retriever.errors import (
        ConfigError,
        DocumentUnavailable,
        InvalidArguments,
        MemoryNotFound,
        MemoryUnavailable,
        RetrievalTimeout,
        RetrieverError,
    )
    from retriever.memory.gitinfo import GitError
    from retriever.memory.provenance import When
    from retriever.pipeline.results import Entity, Excerpt, Fact, Relationship, Retrieval
    from retriever.retriever import RetrievalResult, Retriever

__version__ = "0.1.0"

# A library says nothing unless its host asks: without this, Python's last-resort handler printed the
# ``retriever.*`` warnings (already in ``diagnostics.warnings``) on the host's stderr.
logging.getLogger(__name__).addHandler(logging.NullHandler())

# Each public name and the module that defines it.
_EXPORTS = {
    "Retriever": "retriever.retriever",
    "RetrievalResult": "retriever.retriever",
    "Settings": "retriever.config",
    # What a result holds.
    "Retrieval": "retriever.pipeline.results",
    "Fact": "retriever.pipeline.results",
    "Entity": "retriever.pipeline.results",
    "Relationship": "retriever.pipeline.results",
    "Excerpt": "retriever.pipeline.results",
    "When": "retriever.memory.provenance",
    # What ``retrieve`` and ``Retriever(at=...)`` raise; each has ``.code`` and ``.to_dict()``.
    "RetrieverError": "retriever.errors",
    "InvalidArguments": "retriever.errors",
    "RetrievalTimeout": "retriever.errors",
    "MemoryNotFound": "retriever.errors",
    "MemoryUnavailable": "retriever.errors",
    "ConfigError": "retriever.errors",
    "DocumentUnavailable": "retriever.errors",
    "GitError": "retriever.memory.gitinfo",
}

__all__ = [
    "ConfigError",
    "DocumentUnavailable",
    "Entity",
    "Excerpt",
    "Fact",
    "GitError",
    "InvalidArguments",
    "MemoryNotFound",
    "MemoryUnavailable",
    "Relationship",
    "Retrieval",
    "RetrievalResult",
    "RetrievalTimeout",
    "Retriever",
    "RetrieverError",
    "Settings",
    "When",
    "__version__",
]


def __getattr__(name: str) -> Any:
    """Load a public name on first use (PEP 562); later lookups find it in the module's globals."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'retriever' has no attribute {name!r}; the public names are in retriever.__all__")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
