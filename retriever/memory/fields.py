"""What each of a section's five indexed fields holds, and their term counts.

``FIELDS``: the document's title and aliases, the section's own heading, the folder and heading
path above it, the front matter's values, and the body.  ``analyze_document`` turns a parsed
document into per-section, per-field term counts for the segment builder (``memory.index``).
"""

from __future__ import annotations

from collections import Counter

from retriever.text import analyzer
from retriever.text.models import Document, Section
from retriever.text.vocabulary import SITE_FIELDS

FIELDS = ("title", "heading", "path", "meta", "body")
Analyzed = tuple[Counter[str], ...]  # one section's term counts, per field

# Front-matter keys that hold site machinery, not knowledge; every other value is indexed.
_NOT_META = SITE_FIELDS


def meta_text(doc: Document) -> str:
    """Front-matter values (summary, tags, owner, email…) as one text; title and aliases have their own field."""
    out: list[str] = []
    for key, value in doc.front_matter.items():
        if key.lower() in _NOT_META:
            continue
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            out.append(str(value))
        elif isinstance(value, list):
            out.extend(str(v) for v in value if isinstance(v, str | int | float))
    return " ".join(out)


def _path_text(doc: Document, section: Section) -> str:
    folders = doc.rel_path.rsplit("/", 1)[0] if "/" in doc.rel_path else ""
    stem = doc.rel_path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    words = " ".join([folders.replace("/", " "), stem, *section.heading_path[:-1]])
    return words.replace("_", " ").replace("-", " ")


def title_text(doc: Document) -> str:
    """The document's title and aliases: what it is called, by its author's own words."""
    return " ".join([doc.title, *doc.aliases])


def _heading(section: Section) -> str:
    return section.heading_path[-1] if section.heading_path else section.title


def analyze_document(doc: Document) -> list[Analyzed]:
    """Per section, per field (in ``FIELDS`` order), the term counts of a document.

    The title and meta fields are the document's, so they are analysed once and shared by its sections.
    """
    counts = analyzer.term_counts
    title, meta = counts(title_text(doc)), counts(meta_text(doc))
    out: list[Analyzed] = []
    for section in doc.sections:
        out.append((title, counts(_heading(section)), counts(_path_text(doc, section)), meta, counts(section.text)))
    return out
