"""BERT's uncased WordPiece tokenisation in pure Python: the words and pieces the embedding table knows.

Contract (the same ids as Hugging Face's ``BertNormalizer(lowercase) + BertPreTokenizer + WordPiece``):
- ``words(text)``: control characters dropped, split on whitespace, CJK ideographs apart, lower-cased,
  accents stripped (NFD, combining marks dropped), every punctuation character a word of its own.
- ``WordPiece(vocab).pieces(word)``: greedy longest-match-first pieces, continuations prefixed ``##``;
  a word with a part no piece covers, or over 100 characters, is unknown (no pieces).

ASCII text, nearly all of a memory, takes a regular-expression path; only the whitespace-separated
tokens holding another character go through the exact rules, each distinct one analysed once (cached).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping
from functools import lru_cache

MAX_WORD_CHARS = 100  # BERT's max_input_chars_per_word: longer words are unknown
_CACHE_LIMIT = 500_000  # distinct words whose pieces are remembered (then the cache starts over)
# Cc characters other than tab, newline and carriage return: BERT drops them (they join what they split).
_ASCII_CONTROL = dict.fromkeys([*range(0, 9), 11, 12, *range(14, 32), 127])
_CONTROL = re.compile("[" + "".join(map(chr, _ASCII_CONTROL)) + "]")  # any character _ASCII_CONTROL drops
_ASCII_WORD = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")
# BERT's whitespace: space, tab, newline, carriage return and the Unicode space separators (Zs).
_SPACES = " \t\n\r\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000"
_WHITESPACE = re.compile(f"[{_SPACES}]+")
# A non-ASCII character that is no space: the whitespace-free token around it is what the exact rules must read.
_NON_ASCII = re.compile(f"[^\\x00-\\x7f{_SPACES}]")
_SPACE = re.compile(f"[{_SPACES}]")
# The characters of ``_SPACES`` one by one, for a test per character.
_SPACE_CHARS = frozenset(" \t\n\r\u00a0\u1680\u202f\u205f\u3000" + "".join(map(chr, range(0x2000, 0x200B))))
_SPACE_TO_ASCII = {
    **_ASCII_CONTROL,
    **dict.fromkeys([0xA0, 0x1680, *range(0x2000, 0x200B), 0x202F, 0x205F, 0x3000], " "),
}


def words(text: str) -> list[str]:
    """BERT's basic (uncased) tokenisation of ``text`` (see the module contract)."""
    if text.isascii():
        return _ascii_words(text)
    out: list[str] = []
    done = 0
    for start, end in _non_ascii_tokens(text):
        out.extend(_ascii_words(text[done:start]))  # ASCII and whitespace only
        out.extend(_token_words(text[start:end]))
        done = end
    out.extend(_ascii_words(text[done:]))
    return out


def _non_ascii_tokens(text: str) -> Iterator[tuple[int, int]]:
    """The (start, end) of each whitespace-free token of ``text`` that holds a non-ASCII character, in order.

    Linear time: each token is found from one of its non-ASCII characters, grown back to the space before
    it (never past the previous token) and on to the space after it.  A single pattern for the whole
    token (``[^ ]*[^\\x00-\\x7f ][^ ]*``) retried every start of a long ASCII run: "Café " + 40,000
    letters took 8.6 s."""
    done = 0
    while (found := _NON_ASCII.search(text, done)) is not None:
        start = found.start()
        while start > done and text[start - 1] not in _SPACE_CHARS:  # most such tokens start non-ASCII
            start -= 1
        after = _SPACE.search(text, found.end())
        done = after.start() if after is not None else len(text)
        yield start, done


def _ascii_words(text: str) -> list[str]:
    """``words`` of a text of ASCII characters and whitespace, by one regular expression (a control
    character is dropped first: it joins what it splits; other whitespace already splits words)."""
    if _CONTROL.search(text):
        text = text.translate(_SPACE_TO_ASCII)
    return _ASCII_WORD.findall(text.lower())


def _exact_words(text: str) -> list[str]:
    """``words`` by the character rules, for any text (the ASCII path must agree with it)."""
    out: list[str] = []
    for token in _WHITESPACE.split(text):
        if token:
            out.extend(_token_words(token))
    return out


@lru_cache(maxsize=_CACHE_LIMIT)
def _token_words(token: str) -> tuple[str, ...]:
    """The words of one whitespace-free token, by BERT's rules character by character."""
    spaced = "".join(f" {ch} " if _is_cjk(ord(ch)) else ch for ch in token if not _is_dropped(ch))
    out: list[str] = []
    for part in spaced.split(" "):
        part = "".join(c for c in unicodedata.normalize("NFD", part.lower()) if unicodedata.category(c) != "Mn")
        current = ""
        for ch in part:
            if _is_punctuation(ch):
                out.extend([current, ch] if current else [ch])
                current = ""
            else:
                current += ch
        if current:
            out.append(current)
    return tuple(out)


def _is_dropped(ch: str) -> bool:
    """NUL, the replacement character and control/format characters (Cc, Cf) are removed."""
    return ch in "\x00\ufffd" or (ch not in "\t\n\r" and unicodedata.category(ch) in ("Cc", "Cf"))


def _is_punctuation(ch: str) -> bool:
    """Every ASCII non-alphanumeric symbol, and anything Unicode calls punctuation (P*)."""
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp: int) -> bool:
    """CJK Unified Ideographs (and extensions, compatibility ideographs): each one a word."""
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


class WordPiece:
    """Greedy longest-match-first WordPiece over ``vocab`` (token → id); pieces cached per word."""

    def __init__(self, vocab: Mapping[str, int]) -> None:
        self.vocab = vocab
        self._cache: dict[str, tuple[int, ...]] = {}
        # Word-initial pieces and continuations ("##" dropped) apart, each with its longest piece: no
        # longer prefix can match, and trying them would make a long word cost quadratic time.
        self._first = {token: i for token, i in vocab.items() if not token.startswith("##")}
        self._rest = {token[2:]: i for token, i in vocab.items() if token.startswith("##")}
        self._first_longest = max(map(len, self._first), default=0)
        self._rest_longest = max(map(len, self._rest), default=0)

    def pieces(self, word: str) -> tuple[int, ...]:
        """The piece ids of one word from ``words``; ``()`` when the word is unknown."""
        found = self._cache.get(word)
        if found is None:
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()  # bounded: a memory of odd identifiers must not grow it forever
            found = self._cache[word] = self._split(word)
        return found

    def _split(self, word: str) -> tuple[int, ...]:
        if len(word) > MAX_WORD_CHARS:
            return ()
        ids: list[int] = []
        start, pieces, longest = 0, self._first, self._first_longest
        while start < len(word):
            for end in range(min(len(word), start + longest), start, -1):
                found = pieces.get(word[start:end])
                if found is not None:
                    ids.append(found)
                    start, pieces, longest = end, self._rest, self._rest_longest
                    break
            else:
                return ()
        return tuple(ids)

    def encode(self, text: str) -> list[int]:
        """The piece ids of a whole text (unknown words left out)."""
        return [i for word in words(text) for i in self.pieces(word)]
