"""Section meaning vectors: what a section is about, as one vector beside its postings.

A section's vector is the packaged word-embedding table's (``text.embeddings``) pooling of its
document title, heading path and body, each word that is not a stop word counted once per
occurrence (``content_weight``: the table already weighs rare tokens up).  A query is embedded the
same way; its cosines' mean and spread over the memory come from each segment's vector sums
(``moments``), and only the sections that can matter are compared with it (``cosines_at``).

A vector depends on its section's text alone, never on the rest of the memory, so the parse
worker that reads a file computes its sections' vectors (``document_meaning``) beside their
postings, and a build or refresh only appends them.  Vectors are held as int8 rows with a scale
each (``Meaning``: a quarter of float32's memory, cosines within 0.003 of the exact ones), in the
segment that holds the sections' postings, so tombstones, refreshes and compaction keep them
aligned with section ids exactly as postings are; the cache stores the same bytes, so a fresh
build and a cached load rank alike.

A statement's vector (the score stage's meaning compares ~60 a question) is taken in the same worker
(``document_vectors``, from ``intake.prepare``) and kept, ``pack``ed the same way, in its document's
record (``Unit.vector``): embedding them at question time was an eighth of a question's first asking (12.9% of
its instructions on the Sourcegraph handbook), for a cold index ~15–40% longer and a cache ~50% larger.
"""

from __future__ import annotations

import functools
import itertools
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from retriever.text import analyzer, embeddings
from retriever.text.framing import framed
from retriever.text.models import Document, Section

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
Int8Array = npt.NDArray[np.int8]
_ROWS = 8_192  # section vectors widened to float64 at once when a segment's sums are taken (~16 MB)
_WORDS_KEPT = 1 << 17  # words whose weight is remembered
REMEMBERED = 8_192  # query-path texts whose vectors an index remembers (``Remembered``)
REMEMBERED_CHARS = 1_000  # longer texts are embedded each time (they bound what a remembered text costs)
_STATEMENT_BATCH = 2_048  # statements embedded at once when a file is indexed (~2 MB of float32 rows)
_BATCH_CHARS = 100_000  # characters of the texts embedded at once (their word pieces' rows: ~100 MB at most)


@dataclass(frozen=True, slots=True)
class Meaning:
    """Sections' vectors as int8 rows (``rows``, sections × ``dims``) and one float32 scale per row
    (``scales``): a row times its scale is the section's unit vector.  Bytes, so they cross processes
    and are appended cheaply; ``dims`` is 0 when there is no embedding table."""

    rows: bytes
    scales: bytes
    dims: int
    sections: int


def section_text(doc: Document, section: Section) -> str:
    """The text a section's vector is made of: its document's title, its heading path and its body."""
    return "\n".join([doc.title, *section.heading_path, section.text])


def document_texts(doc: Document) -> list[str]:
    """``section_text`` of each of a document's sections, in order."""
    return [section_text(doc, section) for section in doc.sections]


@functools.lru_cache(maxsize=_WORDS_KEPT)
def content_weight(word: str) -> float:
    """1 for a word the index keeps a term of, 0 for a stop word (it says nothing of a topic)."""
    return 1.0 if analyzer.terms(word) else 0.0


def embed(texts: Sequence[str]) -> FloatArray:
    """Unit vectors of ``texts`` (no columns without a table: then nothing carries meaning)."""
    table = embeddings.table()
    if table is None:
        return np.zeros((len(texts), 0), dtype=np.float32)
    return table.embed(texts, content_weight)


class Remembered:
    """``embed`` for the query path, remembering the vectors of the texts it was asked for lately.

    The questions asked of one memory read the same sections again and again (a chat's sessions, a
    handbook's popular pages); a question's own vector, and a statement's the index did not store (stop words
    alone, or a record written before it stored them), are computed here.
    A text's vector depends on the text alone, bit for bit (``embeddings.bags``), so a remembered
    row is exactly the one ``embed`` would return.  At most ``REMEMBERED`` texts of at most
    ``REMEMBERED_CHARS`` characters are kept, least recently used first out (~10 MB); thread-safe.
    """

    def __init__(self, limit: int = REMEMBERED) -> None:
        self._rows: OrderedDict[str, FloatArray] = OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> FloatArray:
        """``embed(texts)``, computing only the texts not remembered."""
        if not texts:
            return embed(texts)
        with self._lock:
            known = {t: row for t in dict.fromkeys(texts) if (row := self._touch(t)) is not None}
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        if missing:
            fresh = embed(missing)
            if not fresh.shape[1]:
                return np.zeros((len(texts), 0), dtype=np.float32)
            known.update(zip(missing, fresh, strict=True))
            with self._lock:
                for text, row in zip(missing, fresh, strict=True):
                    self._keep(text, row)
        return np.stack([known[t] for t in texts])

    def embed_stored(self, texts: Sequence[str], stored: Sequence[bytes]) -> FloatArray:
        """``embed(texts)``, each text's ``stored`` vector (``pack``, of the table's width) unpacked instead of
        its text embedded: a statement's vector as the index keeps it (``document_vectors``)."""
        table = embeddings.table()
        width = table.dims + 4 if table is not None else -1
        kept = [i for i, packed in enumerate(stored) if len(packed) == width]
        if table is None or not kept:
            return self.embed(texts)
        out = np.empty((len(texts), table.dims), dtype=np.float32)
        out[kept] = unpack([stored[i] for i in kept], table.dims)
        # A row a corrupt record made not finite is embedded again: one NaN would make every compared rank NaN.
        kept = [i for i in kept if np.isfinite(out[i]).all()]
        missing = sorted(set(range(len(texts))) - set(kept))
        if missing:
            out[missing] = self.embed([texts[i] for i in missing])
        return out

    def _touch(self, text: str) -> FloatArray | None:
        row = self._rows.get(text)
        if row is not None:
            self._rows.move_to_end(text)
        return row

    def _keep(self, text: str, row: FloatArray) -> None:
        if len(text) <= REMEMBERED_CHARS:
            self._rows[text] = row.copy()  # not a view: the batch it came from is not kept alive
            while len(self._rows) > self._limit:
                self._rows.popitem(last=False)


def quantize(vectors: FloatArray) -> Meaning:
    """Unit vectors as int8 rows scaled by their largest component (a zero row stays zero)."""
    peaks = np.abs(vectors).max(axis=1) if vectors.size else np.zeros(len(vectors), dtype=np.float32)
    scales = (peaks / 127.0).astype(np.float32)
    safe = np.where(scales > 0, scales, np.float32(1.0))
    rows = np.rint(vectors / safe[:, None]).astype(np.int8)
    return Meaning(rows.tobytes(), scales.tobytes(), int(vectors.shape[1]), len(vectors))


def pack(vectors: FloatArray) -> list[bytes]:
    """Each unit vector as one ``quantize``d row: its int8 components, then its float32 scale (``dims + 4`` bytes)."""
    meaning = quantize(vectors)
    width = meaning.dims
    return [
        meaning.rows[i * width : (i + 1) * width] + meaning.scales[i * 4 : (i + 1) * 4] for i in range(meaning.sections)
    ]


def unpack(packed: Sequence[bytes], dims: int) -> FloatArray:
    """The float32 rows of ``pack``ed vectors of ``dims`` components (each ``dims + 4`` bytes)."""
    record = np.dtype([("row", np.int8, (dims,)), ("scale", np.float32)])
    found = np.frombuffer(b"".join(packed), dtype=record)
    out: FloatArray = found["row"].astype(np.float32) * found["scale"][:, None]
    return out


def document_vectors(doc: Document) -> tuple[Meaning, list[list[bytes]]]:
    """``document_meaning(doc)``, and each statement's vector of each of ``doc``'s sections, packed (``Unit.vector``;
    ``embed`` of the statement as it is scored: ``text.framing``): the index stores them with the document, so a
    question reads them rather than embedding the statements it scores (all b"" without an embedding table).

    One pass over the sections' texts and then the statements, embedded a batch at a time (``_batches``; one call
    a section had cost ten times as much in calls as in arithmetic); a text's vector does not depend on what else is
    in its batch (``embeddings.Table.pool``), unless the batch's distinct words pass ``embeddings.WORD_CHARS``."""
    texts = document_texts(doc)
    if embeddings.table() is None:
        return meaning_of(texts), [[b""] * len(section.units) for section in doc.sections]
    statements = (framed(unit, section) for section in doc.sections for unit in section.units)
    sections, rows, done = [embed([])], [], 0  # statements' rows packed batch by batch: int8, not float32
    for batch in _batches(itertools.chain(texts, statements)):
        found = embed(batch)
        cut = max(0, min(len(batch), len(texts) - done))  # the section texts come first
        if cut:  # a copy: a view would keep the batch's float32 rows alive
            sections.append(found[:cut].copy())
        rows += _packed(found[cut:])
        done += len(batch)
    return quantize(np.concatenate(sections)), _by_section(doc, rows)


def _batches(texts: Iterable[str]) -> Iterator[list[str]]:
    """``texts`` in runs of at most ``_STATEMENT_BATCH`` texts and ``_BATCH_CHARS`` characters (a longer text
    alone), made as they are read: one embedding call splits and weighs a run's words once, and only one run's
    texts and rows are held at a time (a section of 48,000 items under a long heading framed each with it; 1.9 MB
    of random long words had made 400 MB of word pieces)."""
    batch: list[str] = []
    chars = 0
    for text in texts:
        if batch and (len(batch) == _STATEMENT_BATCH or chars + len(text) > _BATCH_CHARS):
            yield batch
            batch, chars = [], 0
        batch.append(text)
        chars += len(text)
    if batch:
        yield batch


def _packed(vectors: FloatArray) -> list[bytes]:
    """Statements' vectors packed; b"" for one without meaning (stop words alone: nothing to store, and nothing to
    compute when asked)."""
    return [row if any(row) else b"" for row in pack(vectors)]


def _by_section(doc: Document, rows: list[bytes]) -> list[list[bytes]]:
    """``rows``, one per statement of ``doc`` in order, as one list per section."""
    out, at = [], 0
    for section in doc.sections:
        out.append(rows[at : at + len(section.units)])
        at += len(section.units)
    return out


def meaning_of(texts: Sequence[str]) -> Meaning:
    """The stored meaning of sections with these texts."""
    return quantize(embed(texts))


def document_meaning(doc: Document) -> Meaning:
    """The stored meaning of a document's sections, in order."""
    return meaning_of(document_texts(doc))


def arrays(meaning: Meaning) -> tuple[Int8Array, FloatArray]:
    """The int8 rows (sections × dims) and scales of ``meaning``."""
    rows = np.frombuffer(meaning.rows, dtype=np.int8).reshape(meaning.sections, meaning.dims)
    return rows, np.frombuffer(meaning.scales, dtype=np.float32)


def no_rows() -> Int8Array:
    """The vectors of a segment built without texts."""
    return np.zeros((0, 0), dtype=np.int8)


def no_scales() -> FloatArray:
    return np.zeros(0, dtype=np.float32)


Moments = tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]
F64Array = npt.NDArray[np.float64]
Block = tuple[Int8Array, FloatArray, F64Array]  # a segment's rows, scales and ``segment_moments``


def no_moments() -> F64Array:
    return np.zeros((0, 0), dtype=np.float64)


def segment_moments(rows: Int8Array, scales: FloatArray) -> F64Array:
    """A segment's vectors summed (row 0) and their outer products summed (the rest), in float64: kept
    with the segment, so a memory's moments (``moments``) cost no pass over its vectors."""
    dims = rows.shape[1] if rows.ndim == 2 else 0
    out = np.zeros((dims + 1, dims), dtype=np.float64)
    for start in range(0, len(rows), _ROWS):
        chunk = (rows[start : start + _ROWS] * scales[start : start + _ROWS, None]).astype(np.float64)
        out[0] += chunk.sum(axis=0)
        out[1:] += chunk.T @ chunk
    return out


def moments(blocks: Sequence[Block], alive: npt.NDArray[np.bool_]) -> Moments | None:
    """The mean and the second moment (``E[v vᵀ]``) of the live sections' vectors, from each segment's
    sums less its dead sections', so every query's cosine mean and spread over the whole memory cost
    two small products (``spread``); None when some section has no vector."""
    if sum(len(rows) for rows, _, _ in blocks) != len(alive) or not blocks or not alive.any():
        return None
    total: F64Array | None = None
    first = 0
    for rows, scales, sums in blocks:
        dead = np.flatnonzero(~alive[first : first + len(rows)])
        first += len(rows)
        if not len(rows):
            continue
        sums = sums if sums.shape == (rows.shape[1] + 1, rows.shape[1]) else segment_moments(rows, scales)
        part = sums - segment_moments(rows[dead], scales[dead]) if len(dead) else sums
        total = part if total is None else total + part
    if total is None:
        return None
    count = float(alive.sum())
    return total[0] / count, total[1:] / count


def spread(found: Moments, query: FloatArray) -> tuple[float, float]:
    """The mean and standard deviation of ``query``'s cosine over the sections ``found`` describes."""
    mean_vector, second = found
    q = query.astype(np.float64)
    mean = float(q @ mean_vector)
    return mean, max(float(q @ second @ q) - mean * mean, 0.0) ** 0.5


def cosines_at(blocks: Sequence[tuple[Int8Array, FloatArray]], section_ids: IntArray, query: FloatArray) -> FloatArray:
    """The cosines of ``query`` with the sections ``section_ids`` (ascending) only."""
    out = np.empty(len(section_ids), dtype=np.float32)
    first = 0
    for rows, scales in blocks:
        if len(rows):  # a segment built from no text has (0, 0) rows, whatever the query's width
            lo, hi = np.searchsorted(section_ids, [first, first + len(rows)])
            local = section_ids[lo:hi] - first
            out[lo:hi] = np.einsum("ij,j->i", rows[local].astype(np.float32), query) * scales[local]
        first += len(rows)
    return out
