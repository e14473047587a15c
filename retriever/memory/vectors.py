"""Section meaning vectors: what a section is about, as one unit vector beside its postings.

A section's vector is the packaged word-embedding table's (``text.embeddings``) pooling of its
document title, heading path and body, each word weighted by ``idf ** IDF_POWER`` from the index's
own document frequencies (through the word's index terms: stop words weigh 0), so what is common
in this memory says little about a section's topic.  A query is embedded the same way, and its
cosine with every section is one vectorised product per segment.

A parse worker counts each section's words (``document_bags``); the segment builder gathers them
(``Gathered``), and vectors are computed when the segment is written (``SegmentBuilder.finish``, once
the segment's document frequencies count) and kept in the segment, so tombstones, refreshes and compaction keep
them aligned with section ids exactly as postings are.  A vector keeps the weights of the moment it
was computed, as field averages do between full builds.
"""

from __future__ import annotations

from array import array
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


def document_bags(doc: Document) -> embeddings.Bags:
    """The bags of words of a document's sections (``section_text``), in order."""
    return embeddings.bags(document_texts(doc))


class Gathered:
    """Many documents' bags gathered into one as they come, their words mapped into one vocabulary: what
    a segment's vectors are pooled from once its document frequencies are complete (flat arrays, ~10
    bytes per distinct word of a section, so a 10,000-file build's stay small)."""

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}
        self.ids, self.rows, self.counts = array("i"), array("i"), array("H")
        self.texts = 0

    def add(self, more: embeddings.Bags) -> None:
        """Append ``more``'s bags after those gathered so far."""
        vocab = self.vocab
        ids = np.fromiter((vocab.setdefault(w, len(vocab)) for w in more.words), dtype=np.int32, count=len(more.words))
        self.ids.frombytes(ids[np.frombuffer(more.ids, dtype=np.int32)].tobytes())
        self.rows.frombytes((np.frombuffer(more.rows, dtype=np.int32) + np.int32(self.texts)).tobytes())
        self.counts.frombytes(more.counts)
        self.texts += more.texts

    def take(self) -> embeddings.Bags:
        """Everything gathered, as one ``Bags``; the gatherer is left empty."""
        arrays = (self.ids.tobytes(), self.rows.tobytes(), self.counts.tobytes())
        out = embeddings.Bags(tuple(self.vocab), *arrays, self.texts)
        self.vocab, self.texts = {}, 0
        self.ids, self.rows, self.counts = array("i"), array("i"), array("H")
        return out


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


def embed(texts: Sequence[str] | embeddings.Bags, weight: embeddings.Weight) -> FloatArray:
    """Unit vectors of ``texts``, or of bags of words (no columns without a table: then nothing carries
    meaning)."""
    counted = texts if isinstance(texts, embeddings.Bags) else embeddings.bags(texts)
    table = embeddings.table()
    if table is None:
        return np.zeros((counted.texts, 0), dtype=np.float32)
    return table.pool(counted, weight)


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
