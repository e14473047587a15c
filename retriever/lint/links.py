"""The link rules: ``broken-link`` (relative and wiki links that lead nowhere) and ``absolute-link``.

Contract:
- Links are read from the prose of each body (``lint.prose``: not in code, nor in HTML comments): inline
  links and images, ``](target)`` or ``](<target>)``, and link reference definitions, ``[label]: target`` or
  ``[label]: <target>``.  A destination in angle brackets may hold spaces (CommonMark): ``<../a b.md>`` is
  ``../a b.md``.  A footnote definition (``[^1]: text``) is not a link.  The patterns are the ones the
  retriever follows links with (``text.markup.LINK_TARGET``, ``LINK_DEFINITION``).
- A wiki link (``[[Target]]``, ``[[Target#Heading|shown]]``, ``![[embed]]``) is broken when its target names no
  document (title, alias, file stem or path, with or without ``.md``), nor does what follows its ``|`` when it is
  a page name without spaces (a GitHub wiki writes ``[[shown|Page-Name]]``), and it is no file other than markdown
  in the tree (Obsidian finds an attachment, ``![[chart.png]]``, by its name anywhere in the vault; a target with a
  ``/`` is a path from the root or the file).  The tree's other files are listed once, on the first such link,
  and at most ``max_files`` × ``ENTRIES_PER_FILE`` entries are looked at (hidden folders are not).
- A target is percent-decoded before it is normalised, so ``%2e%2e`` is ``..``.  A relative target that
  leaves the root is reported as such and never looked up.  A site-absolute target is read as a browser
  reads it against the root (``..`` never climbs above it); a segment that decodes to a ``/`` or a NUL names
  no file.  Every lookup is of a path under the root.
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator
from urllib.parse import unquote

from retriever.lint.prose import prose_lines
from retriever.lint.tree import Problem, Tree
from retriever.text.markup import LINK_DEFINITION, LINK_TARGET, MARKDOWN_SUFFIXES, WIKI_LINK_PARTS
from retriever.text.reader import ENTRIES_PER_FILE, is_memory_file

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_PATH_AND_REST = re.compile(r"([^#?]*)(.*)", re.S)  # a link target's path, then its "?query" and "#anchor"


def broken_links(tree: Tree) -> Iterator[Problem]:
    """Relative links to nothing in the tree (or out of it), and wiki links that name no document or file."""
    attached = _attachments(tree)
    for rel_path, line, text in _prose(tree):
        yield from _problems(rel_path, line, (_link_problem(tree, rel_path, t) for t in link_targets(text)))
        found = WIKI_LINK_PARTS.findall(text)  # one line of prose: no link runs over a line break
        wiki = (_wiki_problem(tree, rel_path, name, shown, attached) for name, shown in found)
        yield from _problems(rel_path, line, wiki)


def absolute_links(tree: Tree) -> Iterator[Problem]:
    """Site-absolute links, with the relative form to write when the target is under the root."""
    for rel_path, line, text in _prose(tree):
        yield from _problems(rel_path, line, (_absolute_link_problem(tree, rel_path, t) for t in link_targets(text)))


def _problems(rel_path: str, line: int, messages: Iterable[str | None]) -> Iterator[Problem]:
    return (Problem(rel_path, line, message) for message in messages if message)


def _wiki_problem(tree: Tree, rel_path: str, name: str, shown: str, attached: _Attached) -> str | None:
    """What is wrong with ``[[name|shown]]`` written in ``rel_path``: nothing when ``name`` is a document or an
    attachment (``_attachments``), or ``shown`` a document's page name, with no spaces (a GitHub wiki's
    ``[[shown|Page-Name]]``; Obsidian's shown text is often a page's title, which does not make the link good)."""
    name, shown = name.strip(), shown.strip()
    if not name or tree.resolve(name) is not None or attached(rel_path, name):
        return None
    if shown and " " not in shown and tree.resolve(shown) is not None:  # a GitHub wiki's page name: no spaces
        return None
    written = f"[[{name}|{shown}]]: no side of its | matches a" if shown else f"[[{name}]] matches no"
    return (
        f"{written} document title, alias or file name; fix the name, or add it to the aliases of the document it means"
    )


_Attached = Callable[[str, str], bool]  # (file, wiki link target) -> the target is a file of the tree, not markdown


def _attachments(tree: Tree) -> _Attached:
    """Whether a wiki link's target, written in a file, is a file of the tree other than markdown: by its name
    anywhere in the tree (as Obsidian finds attachments), or, written with a ``/``, by its path from the root or
    the file.  The tree is listed on the first target asked of (``_other_files``), never again."""
    listed = functools.cache(lambda: _other_files(tree))

    def attached(rel_path: str, target: str) -> bool:
        name = unquote(target).casefold()
        if not name or name.endswith(MARKDOWN_SUFFIXES) or "\x00" in name:
            return False
        names, paths = listed()
        if "/" not in name:
            return name in names
        from_file = posixpath.normpath(posixpath.join(posixpath.dirname(rel_path.casefold()), name))
        return posixpath.normpath(name.lstrip("/")) in paths or from_file in paths

    return attached


def _other_files(tree: Tree) -> tuple[frozenset[str], frozenset[str]]:
    """The names and the paths from the root (case-folded) of the tree's files that are not markdown, hidden
    folders and files left out, symlinked folders not entered; at most ``max_files`` × ``ENTRIES_PER_FILE``
    entries are looked at, as the scan looks at no more."""
    budget = tree.memory.settings.max_files * ENTRIES_PER_FILE
    names: set[str] = set()
    paths: set[str] = set()
    for folder, folders, files in os.walk(tree.memory.root):
        budget -= len(folders) + len(files)
        if budget < 0:
            break
        folders[:] = [f for f in folders if not f.startswith(".")]
        here = os.path.relpath(folder, tree.memory.root).replace(os.sep, "/")
        for name in files:
            if not name.startswith(".") and not name.lower().endswith(MARKDOWN_SUFFIXES):
                names.add(name.casefold())
                paths.add(posixpath.normpath(f"{here}/{name}").casefold())
    return frozenset(names), frozenset(paths)


def _prose(tree: Tree) -> Iterator[tuple[str, int, str]]:
    """Each prose line of the tree's files (``lint.prose``), with its file and line number."""
    for file in tree.files:
        for line, text in prose_lines(file):
            yield file.rel_path, line, text


def link_targets(text: str) -> list[str]:
    """The targets of a prose line's inline links and images, and of a link reference definition (not of a
    footnote), as written; an angle-bracket destination without its brackets."""
    found = [*LINK_TARGET.findall(text), *LINK_DEFINITION.findall(text)]
    return [angled or bare for angled, bare in found if angled or bare]


def _link_problem(tree: Tree, rel_path: str, target: str) -> str | None:
    path = unquote(target.split("#", 1)[0].split("?", 1)[0])
    if not path or path.startswith("/") or _SCHEME.match(path):
        return None
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(rel_path), path))
    if resolved == ".." or resolved.startswith("../"):
        return f"link `{target}` leads outside the memory root; copy the file into the tree or link by URL"
    if _exists(tree, resolved):
        return None
    return f"link `{target}` points to {resolved}, which is not in the tree; fix the path or remove the link"


def _exists(tree: Tree, resolved: str) -> bool:
    """A markdown target must be a file of the tree, unless the memory leaves its name out (a wiki's
    ``_Sidebar.md``, a hidden file: ``walk.is_memory_file``); anything else (an image, a folder) must exist."""
    if resolved.lower().endswith(MARKDOWN_SUFFIXES) and is_memory_file(resolved):
        return resolved in tree.paths
    return "\x00" not in resolved and (tree.memory.root / resolved).exists()


def _absolute_link_problem(tree: Tree, rel_path: str, target: str) -> str | None:
    """A site-absolute link (``/handbook/pto.md``) read against the memory root: the relative form to write
    when the target is there, else that it is not.  ``//host/…`` (protocol-relative) is a URL, not a path."""
    match = _PATH_AND_REST.match(target)
    path, rest = (match.group(1), match.group(2)) if match else (target, "")
    if not path.startswith("/") or path.startswith("//"):
        return None
    segments = _site_segments(path)
    where = unquote(path).lstrip("/") if segments is None else "/".join(name for name, _ in segments) or "."
    if segments is None or not _exists(tree, where):
        return (
            f"link `{target}` is site-absolute, and {where} is not under the memory root; the retriever follows "
            "relative links only: link a file of the tree by its relative path, or a web page by its full URL"
        )
    relative = _relative(posixpath.dirname(rel_path), segments)
    if path.endswith("/") and not relative.endswith("/"):
        relative += "/"
    written = f"{relative}{rest}"
    if any(c.isspace() for c in written):
        written = f"<{written}>"
    return (
        f"link `{target}` is site-absolute: the retriever follows relative links only, and it breaks wherever "
        f"the tree is not served from its root; write it as `{written}`"
    )


def _site_segments(path: str) -> list[tuple[str, str]] | None:
    """A site-absolute path's segments as (file name, as written), decoded before dot segments are applied
    the way a browser applies them (``/../x`` is ``/x``); None if a segment decodes to a name no file has."""
    segments: list[tuple[str, str]] = []
    for written in path.split("/"):
        name = unquote(written)
        if "/" in name or "\x00" in name:
            return None
        if name == "..":
            del segments[-1:]
        elif name not in ("", "."):
            segments.append((name, written))
    return segments


def _relative(folder: str, segments: list[tuple[str, str]]) -> str:
    """The relative path from ``folder`` (of the tree) to the target ``segments``, in the target's own spelling."""
    here = [part for part in folder.split("/") if part]
    common = 0
    while common < min(len(here), len(segments)) and here[common] == segments[common][0]:
        common += 1
    parts = [".."] * (len(here) - common) + [written for _, written in segments[common:]]
    return "/".join(parts) or "."
