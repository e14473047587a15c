"""A memory root as a tool sees it: a root that is missing or empty is a set-up error (a typo in a client's
``--root``), raised as ``memory_not_found`` or ``memory_empty`` with the next step, never an empty answer.

Contract: ``require_memory(result, retriever)`` raises for a retrieval that found its root missing or empty, or
whose memory failed to load (what stopped it: ``Retriever.failed_load``);
``usable_memory(retriever)`` returns the loaded memory or raises the same errors.
"""

from __future__ import annotations

from retriever.errors import ConfigError, MemoryEmpty, MemoryNotFound, MemoryUnavailable
from retriever.memory.gitinfo import GitError
from retriever.memory.memory import Memory
from retriever.retriever import RetrievalResult, Retriever

# What loading a memory raises (a tree over max_files, a revision git cannot read): a tool answers it as an error,
# as it answers a missing root.
UNLOADABLE = (ConfigError, GitError, MemoryUnavailable)


def require_memory(result: RetrievalResult, retriever: Retriever) -> None:
    """Raise when the memory is missing, empty or failed to load: to a tool caller that is a set-up error (a typo in
    a client's ``--root``, a tree over ``max_files``), not an empty answer.  The library says ``memory_ready:
    false`` under a watcher."""
    state = result.structured.get("readiness_state")
    if state == "missing" or not retriever.root.is_dir():  # a root removed while serving had read as "empty"
        raise _not_found(retriever)
    if state == "empty":
        raise MemoryEmpty.at(str(retriever.root), len(result.structured["diagnostics"]["skipped_files"]))
    if state == "error":  # a load that failed, retried by the watcher: an agent had read "ok" and no facts
        raise retriever.failed_load()


def usable_memory(retriever: Retriever) -> Memory:
    """The memory a tool reads, or the error ``require_memory`` gives for a root that is missing or empty:
    ``get_memory`` had answered an empty root with nothing recorded, and a missing one with the command
    line's hint."""
    try:
        memory = retriever.memory
    except MemoryNotFound:
        raise _not_found(retriever) from None
    if not retriever.root.is_dir():  # removed while serving: the last index still answers, but of nothing there
        raise _not_found(retriever)
    if memory.readiness()[1] == "empty":
        raise MemoryEmpty.at(str(retriever.root), len(memory.skipped))
    return memory


def _not_found(retriever: Retriever) -> MemoryNotFound:
    return MemoryNotFound(
        f"memory root {str(retriever.root)!r} is not a folder; fix --root (or RETRIEVER_ROOT) in the client's "
        "configuration, or create the folder (the server picks it up without a restart)"
    )
