"""Ukrainian names in Latin letters: how a Cyrillic word is written in an English page.

A Ukrainian question names people and places in Cyrillic ("Чим займається Олена Марченко?"), while an English
profile writes "Olena Marchenko".  ``latin(word)`` is the word's Latin spellings: the official transliteration
(Cabinet of Ministers of Ukraine resolution No. 55, 2010: "Андрій" → "andrii", "Київ" → "kyiv") and the common
spelling that writes й, є, ї, ю, я with "y" everywhere ("andriy", "yuliia" → "yuliya"), lower-case, without
apostrophes and soft signs.  A word that holds any letter but Ukrainian Cyrillic ones gives nothing.

Contract: pure and bounded: at most ``MAX_CHARS`` characters of a word are read; at most two spellings, the
official first, each once.
"""

from __future__ import annotations

MAX_CHARS = 40

# Each letter's official spelling inside a word, and (where it differs) at a word's start.
_INSIDE = {
    "а": "a", "б": "b", "в": "v", "г": "h", "ґ": "g", "д": "d", "е": "e", "є": "ie", "ж": "zh", "з": "z",
    "и": "y", "і": "i", "ї": "i", "й": "i", "к": "k", "л": "l", "м": "m", "н": "n", "о": "o", "п": "p",
    "р": "r", "с": "s", "т": "t", "у": "u", "ф": "f", "х": "kh", "ц": "ts", "ч": "ch", "ш": "sh", "щ": "shch",
    "ь": "", "ю": "iu", "я": "ia", "'": "", "’": "", "ʼ": "",
}  # fmt: skip
_FIRST = {"є": "ye", "ї": "yi", "й": "y", "ю": "yu", "я": "ya"}
# The common spelling: "y" for these letters wherever they stand ("Andriy", "Yuliya", "Mykolayiv").
_COMMON = {"є": "ye", "ї": "yi", "й": "y", "ю": "yu", "я": "ya"}


def latin(word: str) -> tuple[str, ...]:
    """The Latin spellings of a Ukrainian Cyrillic ``word``: official, then common where it differs; () when the
    word holds anything but Ukrainian letters and apostrophes."""
    word = word[:MAX_CHARS].casefold()
    if not word or any(ch not in _INSIDE for ch in word):
        return ()
    official = "".join(_official(word, i) for i in range(len(word)))
    common = "".join(_COMMON.get(ch, _INSIDE[ch]) if ch in _COMMON else _official(word, i) for i, ch in enumerate(word))
    return tuple(dict.fromkeys(s for s in (official, common) if s))


def _official(word: str, i: int) -> str:
    ch = word[i]
    if i == 0:
        return _FIRST.get(ch, _INSIDE[ch])
    return "gh" if ch == "г" and word[i - 1] == "з" else _INSIDE[ch]  # "зг" is "zgh": "Згорани" → "zghorany"
