"""Static word embeddings: a text's meaning as one vector, from a table shipped with the package.

The table (``data/embeddings.npz``, see ``data/NOTICE``) holds one 256-dimensional vector per
WordPiece token, distilled from sentence-transformers/all-MiniLM-L6-v2 by model2vec (PCA, rare
tokens weighted up), as int8 rows with a float32 scale each, and the tokens (newline-separated
UTF-8).  ``scripts/build_embeddings.py`` rebuilds it.  Only numpy reads it: no model, no
download, the same vectors on every machine.

Contract: ``table()`` is the packaged table (loaded once; None, with a warning logged once, when the
file is missing or unreadable: callers then go without meaning).  ``Table.embed(texts, weight)``
returns one unit-length row per text (all zeros for a text with no known, weighted word): the
sum, over the text's words, of ``weight(word) · count`` times the word's piece vectors.  The caller's
``weight`` says how much a word counts (the memory's idf, 0 for words it ignores).
``bags(texts)`` counts each text's words into flat arrays, and
``Table.pool(bags(texts), weight)`` is ``Table.embed(texts, weight)``.
"""

from __future__ import annotations

import logging
import threading
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path

import numpy as np
import numpy.typing as npt

from retriever.text.wordpiece import WordPiece, words

log = logging.getLogger(__name__)

TABLE_PATH = Path(__file__).with_name("data") / "embeddings.npz"
_ENTRIES = 8_192  # (text, word) entries pooled at once (bounds the temporary piece array: ~10 MB)
_LEXICON_WORDS = 200_000  # words a table remembers the split and weight of
WORD_CHARS = 100_000  # characters of distinct words one ``bags`` call keeps
_MAX_COUNT = 65_535  # a word's count in one text, as a bag stores it
FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
Weight = Callable[[str], float]


@dataclass(frozen=True)
class Table:
    """Token vectors as int8 rows with per-row scales, and the WordPiece vocabulary they belong to."""

    vectors: npt.NDArray[np.int8]
    scales: FloatArray
    wordpiece: WordPiece
    lexicon: Lexicon = field(default_factory=lambda: Lexicon(), compare=False, repr=False)

    @property
    def dims(self) -> int:
        return int(self.vectors.shape[1])

    @classmethod
    def load(cls, path: Path) -> Table:
        """The table in ``path`` (``ValueError`` when its arrays do not fit together)."""
        with np.load(path, allow_pickle=False) as data:
            vectors, scales, vocab = data["vectors"], data["scales"].astype(np.float32), data["vocab"]
        tokens = vocab.tobytes().decode("utf-8").split("\n")
        if vectors.dtype != np.int8 or vectors.ndim != 2 or not len(vectors) == len(scales) == len(tokens):
            raise ValueError(f"{path} holds mismatched arrays")
        return cls(vectors, scales, WordPiece({token: i for i, token in enumerate(tokens)}))

    def rows(self, ids: npt.NDArray[np.int64]) -> FloatArray:
        """The float32 vectors of token ids."""
        out: FloatArray = self.vectors[ids].astype(np.float32) * self.scales[ids, None]
        return out

    def embed(self, texts: Sequence[str], weight: Weight) -> FloatArray:
        """One unit row per text (see the module contract)."""
        return self.pool(bags(texts), weight)

    def pool(self, counted: Bags, weight: Weight) -> FloatArray:
        """One unit row per bag of ``counted``: each distinct word is split and weighed once, and entries
        are pooled ``_ENTRIES`` at a time, so a 10,000-file build's temporaries stay a few MB."""
        lexicon = self.lexicon.lookup(counted.words, weight, self.wordpiece)
        ids = np.frombuffer(counted.ids, dtype=np.int32)
        rows = np.frombuffer(counted.rows, dtype=np.int32)
        counts = np.frombuffer(counted.counts, dtype=np.uint16)
        out = np.zeros((counted.texts, self.dims), dtype=np.float32)
        for start, stop in _chunks(rows):
            part = slice(start, stop)
            self._pool_into(out, rows[part], ids[part], counts[part], lexicon)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def _pool_into(
        self,
        out: FloatArray,
        rows: npt.NDArray[np.int32],
        word: npt.NDArray[np.int32],
        counts: npt.NDArray[np.uint16],
        lexicon: Spans,
    ) -> None:
        """Add some entries' weighted piece vectors to their rows of ``out`` (rows ascend among the entries)."""
        first, lengths, word_weights, piece_ids = lexicon
        coefs = counts * word_weights[word]
        keep = coefs > 0
        if not keep.any():
            return
        rows, word, coefs = rows[keep], word[keep], coefs[keep].astype(np.float32)
        spans = lengths[word]  # each entry becomes one per piece of its word
        starts = np.repeat(first[word] - np.cumsum(spans) + spans, spans)
        pieces = piece_ids[starts + np.arange(int(spans.sum()))]
        rows, coefs = np.repeat(rows, spans), np.repeat(coefs, spans)
        block = self.vectors[pieces].astype(np.float32) * (self.scales[pieces] * coefs)[:, None]
        firsts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
        out[rows[firsts]] += np.add.reduceat(block, firsts, axis=0)


def _chunks(rows: npt.NDArray[np.int32]) -> Iterator[tuple[int, int]]:
    """(start, stop) of runs of about ``_ENTRIES`` entries that end where a text's entries end, and split a
    text of more entries only every ``_ENTRIES`` of its own: so a text's sums are added in the same order
    whatever else is in the batch, and its vector is the same, bit for bit, alone or among others."""
    ends = np.flatnonzero(np.r_[rows[1:] != rows[:-1], True]) + 1  # one past each text's last entry
    start = 0
    while start < len(rows):
        last = int(np.searchsorted(ends, start + _ENTRIES, side="right")) - 1  # the last text that fits
        stop = int(ends[last]) if last >= 0 else start
        if stop <= start:  # the text from here has more than _ENTRIES entries: cut it at _ENTRIES
            stop = start + _ENTRIES
        yield start, stop
        start = stop


Spans = tuple[IntArray, IntArray, FloatArray, IntArray]  # per word: first piece, piece count, weight; piece ids


class Lexicon:
    """The words a table has split, for one weight function: each word's span in one flat array of piece
    ids and its weight, so a text's words cost a lookup each, not a split and a weighing (at most
    ``_LEXICON_WORDS`` words, then it starts over; thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._start(None)

    def _start(self, weight: Weight | None) -> None:
        self.weight: Weight | None = weight
        self.known: dict[str, int] = {}
        self.first, self.lengths = np.zeros(1024, dtype=np.int64), np.zeros(1024, dtype=np.int64)
        self.weights, self.pieces, self.used = np.zeros(1024, dtype=np.float32), np.zeros(4096, dtype=np.int64), 0

    def lookup(self, distinct: Sequence[str], weight: Weight, wordpiece: WordPiece) -> Spans:
        """The spans of ``distinct`` words, in their order (their piece ids: the last array)."""
        with self._lock:
            if weight is not self.weight or len(self.known) + len(distinct) > _LEXICON_WORDS:
                self._start(weight)
            rows = [self.known.get(word, -1) for word in distinct]
            for number, word in enumerate(distinct):
                if rows[number] < 0:
                    rows[number] = self._add(word, weight, wordpiece)
            at = np.asarray(rows, dtype=np.int64)
            return self.first[at], self.lengths[at], self.weights[at], self.pieces

    def _add(self, word: str, weight: Weight, wordpiece: WordPiece) -> int:
        pieces, row = wordpiece.pieces(word), len(self.known)
        if row == len(self.first):  # grow by copying: arrays handed out before stay valid
            self.first, self.lengths = np.resize(self.first, 2 * row), np.resize(self.lengths, 2 * row)
            self.weights = np.resize(self.weights, 2 * row)
        if self.used + len(pieces) > len(self.pieces):
            self.pieces = np.resize(self.pieces, 2 * (self.used + len(pieces)))
        self.pieces[self.used : self.used + len(pieces)] = pieces
        self.first[row], self.lengths[row] = self.used, len(pieces)
        self.weights[row] = weight(word) if pieces else 0.0
        self.used += len(pieces)
        self.known[word] = row
        return row


@dataclass(frozen=True, slots=True)
class Bags:
    """Texts as bags of words, in flat arrays that cross processes cheaply: entry i says that word
    ``words[ids[i]]`` occurs ``counts[i]`` times in text ``rows[i]``; rows ascend, ``texts`` in all."""

    words: tuple[str, ...]
    ids: bytes  # int32 per entry
    rows: bytes  # int32 per entry
    counts: bytes  # uint16 per entry (a count past 65,535 is kept at that)
    texts: int


def bags(texts: Sequence[str]) -> Bags:
    """The bags of words of ``texts`` (word ids local to them, in the words' sorted order; within a text,
    entries in word-id order).  Only the distinct words met first, up to ``WORD_CHARS`` characters in all, are
    kept: a real document's come to at most ~22,000, and it bounds what a file of random words costs
    to split (each character of a new word takes up to ~18 lookups)."""
    tokens: list[str] = []
    lengths = np.zeros(len(texts), dtype=np.int64)
    for number, text in enumerate(texts):
        found = words(text)
        tokens.extend(found)
        lengths[number] = len(found)
    distinct = list(dict.fromkeys(tokens))  # first seen first
    kept = int(np.searchsorted(np.cumsum([len(word) for word in distinct]), WORD_CHARS, side="right"))
    # Ids in sorted order: a text's entries, in id order, then follow its own words, not the batch's.
    vocabulary = {word: i for i, word in enumerate(sorted(distinct[:kept]))}
    word_ids = np.fromiter(map(vocabulary.get, tokens, repeat(-1)), dtype=np.int64, count=len(tokens))
    rows = np.repeat(np.arange(len(texts)), lengths)
    known = word_ids >= 0
    width = max(len(vocabulary), 1)
    # (text, word) pairs with their counts, in one vectorised pass: row-major, so rows ascend.
    pairs, counts = np.unique(rows[known] * width + word_ids[known], return_counts=True)
    return Bags(
        tuple(vocabulary),
        (pairs % width).astype(np.int32).tobytes(),
        (pairs // width).astype(np.int32).tobytes(),
        np.minimum(counts, _MAX_COUNT).astype(np.uint16).tobytes(),
        len(texts),
    )


_loaded: list[Table | None] = []
_lock = threading.Lock()


def table() -> Table | None:
    """The packaged table, loaded on first use; None when it cannot be read (logged once)."""
    if not _loaded:
        with _lock:
            if not _loaded:
                _loaded.append(_load_packaged())
    return _loaded[0]


def _load_packaged() -> Table | None:
    try:
        return Table.load(TABLE_PATH)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        log.warning("word embeddings unavailable (%s: %s); ranking goes by words alone", TABLE_PATH, exc)
        return None
