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
"""

from __future__ import annotations

import logging
import threading
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from retriever.text.wordpiece import WordPiece, words

log = logging.getLogger(__name__)

TABLE_PATH = Path(__file__).with_name("data") / "embeddings.npz"
_CHUNK = 16_384  # piece vectors gathered at once while pooling (bounds the temporary array: ~16 MB)
_BATCH = 2_048  # texts pooled together (bounds the word and piece lists of a large build)
FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
Weight = Callable[[str], float]


@dataclass(frozen=True)
class Table:
    """Token vectors as int8 rows with per-row scales, and the WordPiece vocabulary they belong to."""

    vectors: npt.NDArray[np.int8]
    scales: FloatArray
    wordpiece: WordPiece

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
        """One unit row per text (see the module contract), ``_BATCH`` texts at a time so that a
        10,000-file build's word lists stay small; each distinct word is split and weighed once a batch."""
        if len(texts) <= _BATCH:
            return self._embed(texts, weight)
        return np.concatenate([self._embed(texts[i : i + _BATCH], weight) for i in range(0, len(texts), _BATCH)])

    def _embed(self, texts: Sequence[str], weight: Weight) -> FloatArray:
        tokens: list[str] = []
        lengths = np.zeros(len(texts), dtype=np.int64)
        for number, text in enumerate(texts):
            found = words(text)
            tokens.extend(found)
            lengths[number] = len(found)
        vocabulary = dict.fromkeys(tokens)  # distinct words, in first-seen order
        for i, word in enumerate(vocabulary):
            vocabulary[word] = i
        word_ids = np.fromiter(map(vocabulary.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        rows = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
        # (row, word) pairs with their counts: row-major, so each row's pairs are contiguous.
        pairs, counts = np.unique(rows * max(len(vocabulary), 1) + word_ids, return_counts=True)
        return self._pool(len(texts), pairs, counts, self._words(list(vocabulary), weight))

    def _words(self, distinct: list[str], weight: Weight) -> tuple[IntArray, IntArray, FloatArray]:
        """CSR of the words' piece ids (offsets, ids) and each word's weight (0 for unknown words)."""
        pieces = [self.wordpiece.pieces(word) for word in distinct]
        offsets = np.zeros(len(distinct) + 1, dtype=np.int64)
        np.cumsum([len(p) for p in pieces], out=offsets[1:])
        ids = np.fromiter((i for p in pieces for i in p), dtype=np.int64, count=int(offsets[-1]))
        weights = np.fromiter((weight(w) if p else 0.0 for w, p in zip(distinct, pieces, strict=True)), np.float32)
        return offsets, ids, weights

    def _pool(
        self, n: int, pairs: IntArray, counts: IntArray, lexicon: tuple[IntArray, IntArray, FloatArray]
    ) -> FloatArray:
        """Sum each row's weighted piece vectors, then scale rows to unit length."""
        offsets, piece_ids, word_weights = lexicon
        width = max(len(word_weights), 1)
        rows, word = pairs // width, pairs % width
        coefs = counts * word_weights[word]
        keep = coefs > 0
        rows, word, coefs = rows[keep], word[keep], coefs[keep].astype(np.float32)
        spans = offsets[word + 1] - offsets[word]  # each pair becomes one entry per piece of its word
        starts = np.repeat(offsets[word] - np.cumsum(spans) + spans, spans)
        pieces = piece_ids[starts + np.arange(int(spans.sum()))]
        rows, coefs = np.repeat(rows, spans), np.repeat(coefs, spans)
        out = np.zeros((n, self.dims), dtype=np.float32)
        for start in range(0, len(pieces), _CHUNK):
            r, p = rows[start : start + _CHUNK], pieces[start : start + _CHUNK]
            block = self.vectors[p].astype(np.float32) * (self.scales[p] * coefs[start : start + _CHUNK])[:, None]
            firsts = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
            out[r[firsts]] += np.add.reduceat(block, firsts, axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


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
