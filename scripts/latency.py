#!/usr/bin/env python3
"""Time single questions on one real corpus: the first asking of each question, then repeats.

    python scripts/latency.py --corpus ../shared/corpora/sourcegraph-handbook    # the issue's target
    python scripts/latency.py [--corpus DIR] [--queries FILE ...] [--rounds 3] [--json]

The issue's latency target is a p50 per question of at most 10 ms on the 883-file Sourcegraph handbook.
``--corpus`` defaults to the bundled ``company_context/`` (so it works from a fresh clone).
This script measures it in process (``Retriever.retrieve``, offline), on a memory loaded from its cache
before timing starts. The questions are the evaluation files' questions about that corpus (every
question whose ``corpus`` names the folder; with ``--queries``, those files), or, when none name it, the
corpus's own headings asked as questions ("What about <heading>?"), so the script works on any tree.

Two figures, because per-statement work is cached across questions:
- **first asking**: each question asked once, in order, in a fresh process, the way a session meets
  new questions;
- **repeated**: the same questions asked again, ``--rounds`` times, the way recurring questions land.
Timing on a shared machine varies by up to 1.5× between runs, so compare two versions run in turn.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import percentile, time_queries  # the same timing as the 10,000-file benchmark's

from retriever import Retriever, Settings

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO / "company_context"
QUESTION_FILES = (  # each question counts for the corpus its "corpus" field names
    REPO.parent / "shared" / "eval" / "dev_queries.jsonl",
    REPO / "eval" / "handbook_heldout_queries.jsonl",
    REPO / "eval" / "company_context_queries.jsonl",
)


def questions_for(corpus: Path, files: list[Path]) -> list[str]:
    """The questions whose ``corpus`` field names ``corpus``'s folder (or that have none), in file order."""
    found: list[str] = []
    for path in files:
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else {}
            if row.get("corpus") in (corpus.name, None) and row.get("question"):
                found.append(row["question"])
    return found


def heading_questions(corpus: Path, limit: int = 50) -> list[str]:
    """Fallback questions for a corpus no question file names: its files' first headings, asked about."""
    found = []
    for path in sorted(corpus.rglob("*.md"))[:limit]:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        heading = next((line.lstrip("#").strip() for line in lines if line.startswith("#")), "")
        if heading:
            found.append(f"What about {heading}?")
    return found


def summary(times: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(percentile(times, 0.95), 2),
        "mean_ms": round(statistics.fmean(times), 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="default: company_context")
    parser.add_argument("--queries", type=Path, action="append", help="question file (repeatable)")
    parser.add_argument("--rounds", type=int, default=3, help="passes of repeated questions")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"error: no corpus folder at {args.corpus}; pass --corpus DIR", file=sys.stderr)
        return 2
    retriever = Retriever(args.corpus, Settings.from_env(), refresh_interval=1e9)
    retriever.refresh()  # load (or index) before timing: the figures are per question
    questions = questions_for(args.corpus, args.queries or list(QUESTION_FILES)) or heading_questions(args.corpus)
    if not questions:
        print(f"error: no questions for {args.corpus} and no headings to ask about", file=sys.stderr)
        return 2
    first = time_queries(retriever, 1, questions)
    repeated = time_queries(retriever, args.rounds, questions)
    report = {
        "corpus": args.corpus.name,
        "questions": len(questions),
        "first_asking": summary(first),
        "repeated": summary(repeated),
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{report['corpus']}: {len(questions)} questions")
        for name, row in (("first asking", summary(first)), ("repeated", summary(repeated))):
            figures = "   ".join(f"{key[:-3]} {value:6.2f} ms" for key, value in row.items())
            print(f"  {name:13} {figures}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
