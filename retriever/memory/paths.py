"""How a section is named to readers: its source path and its tree path (pure functions of strings).

    source_path("company_context", "financials/mrr.md")  -> "company_context/financials/mrr.md"
    tree_path("company_context", "financials/mrr.md", "Active Accounts MRR", ("Headline numbers",))
        -> "Company Context > Financials > Active Accounts MRR > Headline numbers"

A folder's index file (``README.md``, ``index.md``…) titles its folder, so its own title is left out.
"""

from __future__ import annotations

from collections.abc import Sequence

from retriever.text.markup import INDEX_NAMES, humanize


def source_path(root_name: str, rel_path: str) -> str:
    """The path as the seed shows it: the root folder's name first."""
    return f"{root_name}/{rel_path}"


def folder_titles(rel_path: str) -> list[str]:
    """Folder names as titles."""
    return [humanize(folder) for folder in rel_path.split("/")[:-1]]


def tree_path(root_name: str, rel_path: str, title: str | None, headings: Sequence[str] = ()) -> str:
    """``Company Context > Relationships > Client Organizations > Tier 1``.

    ``title`` is the document's (None: its file name, humanised); ``headings`` the section's heading path.
    """
    parts = [humanize(root_name), *folder_titles(rel_path)]
    name = rel_path.rsplit("/", 1)[-1]
    if name.lower() not in INDEX_NAMES or "/" not in rel_path:
        parts.append(title if title is not None else humanize(name))
    parts.extend(headings)
    return " > ".join(parts)
