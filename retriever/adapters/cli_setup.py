"""What set-up commands need to know about this installation: how to run it, and whether a root is usable.

- ``retriever_command()``: the absolute command that runs this ``retriever``, for files that start it
  later from elsewhere (an MCP client's config, the "Next:" line of ``retriever init``);
- ``root_problem(root)``: ``MemoryNotFound`` or ``MemoryEmpty`` when a memory root cannot answer, found
  without indexing (a bounded look for one markdown file), so servers can say so as they start;
- ``install_source()``: where this copy was installed from, when that is a URL CI can install from too.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from importlib import metadata
from pathlib import Path

from retriever.errors import MemoryEmpty, MemoryNotFound, RetrieverError
from retriever.text.markup import MARKDOWN_SUFFIXES
from retriever.text.reader import not_a_folder
from retriever.text.safe import preview

DISTRIBUTION = "company-memory-retriever"
_LOOK_AT = 20_000  # entries looked at before a tree is taken to hold markdown (a huge tree is not empty)


def retriever_command() -> list[str]:
    """The absolute command running this process: the ``retriever`` script when that is what ran,
    else this interpreter with ``-P -m retriever`` (works in any venv, on PATH or not; ``-P`` keeps the
    folder a client starts it in, often a project or the memory tree, off the module path)."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.stem == "retriever" and script.is_file():
        return [os.path.abspath(script)]
    return [os.path.abspath(sys.executable), "-P", "-m", "retriever"]


def command_line(arguments: list[str]) -> str:
    """``retriever ARGS`` as a user types it: the bare name when PATH finds this very script, else absolute."""
    command = retriever_command()
    found = shutil.which("retriever")
    if len(command) == 1 and found is not None and os.path.samefile(found, command[0]):
        command = ["retriever"]
    return shlex.join([*command, *arguments])


def root_problem(root: Path) -> RetrieverError | None:
    """Why ``root`` cannot answer: not a folder (``MemoryNotFound``) or no markdown in it (``MemoryEmpty``)."""
    why = not_a_folder(root)
    if why is not None:
        return MemoryNotFound.at(preview(str(root), 200), why)
    return None if _holds_markdown(root) else MemoryEmpty.at(str(root))


def _holds_markdown(root: Path) -> bool:
    """True once one markdown file outside hidden folders is seen (or ``_LOOK_AT`` entries were looked at)."""
    pending, seen = [root], 0
    while pending:
        try:
            with os.scandir(pending.pop()) as listing:
                for entry in listing:
                    seen += 1
                    if seen > _LOOK_AT:
                        return True  # bounded: symlinked folders may loop, and a huge tree is not empty
                    if entry.name.startswith("."):
                        continue  # hidden files and folders are never read (as the scan does)
                    if entry.is_dir():
                        pending.append(Path(entry.path))
                    elif entry.name.lower().endswith(MARKDOWN_SUFFIXES):
                        return True
        except OSError:
            continue  # an unreadable folder holds nothing we could read
    return False


def install_source() -> str | None:
    """A pip requirement for this very version when it was installed from a remote VCS URL
    (``git+https://…@commit``, from PEP 610's ``direct_url.json``); None for an index, a local folder or
    a local repository, which a CI runner cannot reach."""
    try:
        raw = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
        data = json.loads(raw) if raw else None
    except (metadata.PackageNotFoundError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("vcs_info"), dict):
        return None
    url, vcs = str(data.get("url", "")), data["vcs_info"]
    if not url.startswith(("https://", "ssh://", "git@")):
        return None
    commit = vcs.get("commit_id")
    return f"{vcs.get('vcs', 'git')}+{url}" + (f"@{commit}" if isinstance(commit, str) and commit else "")
