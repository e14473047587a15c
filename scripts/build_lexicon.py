#!/usr/bin/env python3
"""Write ``retriever/text/data/lexicon_uk_en.terms.json``: the Ukrainian–English lexicon as the analyzer's terms.

    python scripts/build_lexicon.py

Run it after editing ``lexicon_uk_en.tsv`` or the analyzer: loading the parsed terms takes ~3 ms where parsing
the table takes ~120 ms (about 6,000 word forms stemmed).  The file carries the table's SHA-256, so a stale one
is never used (the table is parsed instead), and ``tests/text/test_lexicon.py`` fails until it is rebuilt.
"""

from __future__ import annotations

from retriever.text import lexicon


def main() -> int:
    source = lexicon.TABLE_PATH.read_bytes()
    lexicon.TERMS_PATH.write_text(lexicon.to_json(lexicon.parse(source.decode("utf-8")), source), encoding="utf-8")
    print(f"wrote {lexicon.TERMS_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
