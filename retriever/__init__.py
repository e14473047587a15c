"""Company memory retriever: ranked, cited facts from a git-edited tree of markdown files.

from retriever import Retriever
result = Retriever("company_context").retrieve("Who owns the billing project?")
result.text          # the markdown report
result.structured    # seed 000's structuredContent (a dict)
"""

from retriever.config import Settings
from retriever.errors import (
    ConfigError,
    InvalidArguments,
    MemoryNotFound,
    RetrievalTimeout,
    RetrieverError,
)
from retriever.retriever import RetrievalResult, Retriever

__all__ = [
    "ConfigError",
    "InvalidArguments",
    "MemoryNotFound",
    "RetrievalResult",
    "RetrievalTimeout",
    "Retriever",
    "RetrieverError",
    "Settings",
]
__version__ = "0.1.0"
