"""Section meaning vectors: what a section is about, as one unit vector beside its postings.

A section's vector is the packaged word-embedding table's (``text.embeddings``) pooling of its
document title, heading path and body, each word weighted by ``idf ** IDF_POWER`` from the index's
own document frequencies (through the word's index terms: stop words weigh 0), so what is common
in this memory says little about a section's topic.  A query is embedded the same way, and its
cosine with every section is one vectorised product per segment.

Vectors are computed when a segment is written (``SegmentBuilder.finish``, once the segment's
document frequencies count) and kept in the segment, so tombstones, refreshes and compaction keep
them aligned with section ids exactly as postings are.  A vector keeps the weights of the moment it
was computed, as field averages do between full builds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from retriever.text import analyzer, embeddings
from retriever.text.models import Document, Section

IDF_POWER = 0.5  # a square root: rare words count more, without one rare word deciding the topic
_WEIGHTS_KEPT = 200_000  # words whose weight a WordWeights remembers
FloatArray = npt.NDArray[np.float32]


def no_vectors() -> FloatArray:
    """The vectors of a segment built without texts."""
    return np.zeros((0, 0), dtype=np.float32)


def section_text(doc: Document, section: Section) -> str:
    """The text a section's vector is made of: its document's title, its heading path and its body."""
    return "\n".join([doc.title, *section.heading_path, section.text])


def document_texts(doc: Document) -> list[str]:
    """``section_text`` of each of a document's sections, in order."""
    return [section_text(doc, section) for section in doc.sections]


class WordWeights:
    """A word's weight: the mean ``idf ** IDF_POWER`` of its index terms; 0 for a word without any (stop
    words).  A query word the memory never uses weighs most (its idf is the unseen one): its meaning is
    exactly what the memory's words cannot match.  Remembered per word (at most ``_WEIGHTS_KEPT``) for
    as long as the document frequencies ``key`` names stay the same."""

    def __init__(self, idf: Callable[[str], float], key: tuple[int, ...] = ()) -> None:
        self.idf, self.key = idf, key
        self._known: dict[str, float] = {}

    @classmethod
    def current(cls, previous: WordWeights | None, idf: Callable[[str], float], key: tuple[int, ...]) -> WordWeights:
        """``previous`` while the document frequencies ``key`` names are the same, else new weights."""
        return previous if previous is not None and previous.key == key else cls(idf, key)

    def __call__(self, word: str) -> float:
        weight = self._known.get(word)
        if weight is None:
            if len(self._known) >= _WEIGHTS_KEPT:
                self._known.clear()
            terms = analyzer.terms(word)
            weight = sum(self.idf(t) ** IDF_POWER for t in terms) / len(terms) if terms else 0.0
            self._known[word] = weight
        return weight


def as_stored(vectors: FloatArray) -> FloatArray:
    """Section vectors rounded to float16, as the cache stores them: a fresh build and a cached load
    give the same cosines, so they rank alike."""
    out: FloatArray = vectors.astype(np.float16).astype(np.float32)
    return out


def embed(texts: Sequence[str], weight: embeddings.Weight) -> FloatArray:
    """Unit vectors of ``texts`` (rows of zeros without a table: then nothing carries meaning)."""
    table = embeddings.table()
    if table is None:
        return np.zeros((len(texts), 0), dtype=np.float32)
    return table.embed(texts, weight)


def cosines(blocks: Sequence[FloatArray], size: int, query: FloatArray) -> FloatArray | None:
    """Each section's cosine with ``query`` (blocks: the segments' vectors, in section-id order);
    None when some section has no vector (an index built without texts) or the dimensions differ."""
    # einsum's own loop, not BLAS: one thread, the same sums on every machine (a threaded BLAS stalls
    # when the cores are busy, and its summation order depends on the thread count).
    parts = [np.einsum("ij,j->i", block, query) for block in blocks if len(block)]
    if sum(len(block) for block in blocks) != size or any(b.shape[1] != len(query) for b in blocks if len(b)):
        return None
    out: FloatArray = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
    return out
