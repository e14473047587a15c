#!/usr/bin/env python3
"""Write ``retriever/text/data/lexicon_uk_en.terms.json`` and ``thesaurus_en.terms.json``: the Ukrainian–English
lexicon and the English thesaurus as the analyzer's terms.

    python scripts/build_lexicon.py

Run it after editing either table (``lexicon_uk_en.tsv``, ``thesaurus_en.tsv``) or the analyzer: loading
the parsed terms takes a few ms where parsing the tables takes ~120 and ~110 ms.  Each file carries its
table's SHA-256, so a stale one is never used (the table is parsed instead), and ``tests/text/test_lexicon.py``
and ``tests/text/test_thesaurus.py`` fail until it is rebuilt.
"""

from __future__ import annotations

from retriever.text import lexicon, thesaurus


def main() -> int:
    for table in (lexicon, thesaurus):  # each module: TABLE_PATH, TERMS_PATH, parse, to_json
        source = table.TABLE_PATH.read_bytes()
        table.TERMS_PATH.write_text(table.to_json(table.parse(source.decode("utf-8")), source), encoding="utf-8")
        print(f"wrote {table.TERMS_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
