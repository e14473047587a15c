#!/usr/bin/env python3
"""Measure how the summary grounding check (``retriever.llm.guided.summary_problem``) judges real summaries.

    python scripts/summary_grounding.py [--corpus ../shared/corpora] [--data scripts/summary_grounding.jsonl]

Each line of the data names a corpus (``company_context`` is the bundled memory; others live under
``--corpus``), a question and a summary, labelled ``faithful`` (a plain summary of the facts),
``loose`` (a faithful summary in freer words) or ``bad`` (an injected instruction or an invented
claim).  The summaries were written for this measurement, following ``prompts.summary_prompt``,
from the facts offline retrieval returned for each question when they were written; the script
retrieves those facts again (the first ``assemble.SUMMARY_FACTS``), so a ranking change can move
the figures.  It prints, per summary, the largest share of new content terms in any sentence and
the verdict, then the extremes per label: ``SUMMARY_NEW_SHARE`` must sit between them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from retriever import Retriever
from retriever.llm.grounding import SUMMARY_NEW_SHARE, summary_new_share, summary_problem
from retriever.pipeline.assemble import SUMMARY_FACTS

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpora")
    parser.add_argument("--data", type=Path, default=REPO / "scripts" / "summary_grounding.jsonl")
    args = parser.parse_args()
    retrievers: dict[str, Retriever] = {}
    shares: dict[str, list[float]] = defaultdict(list)
    for line in args.data.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        root = REPO / "company_context" if case["corpus"] == "company_context" else args.corpus / case["corpus"]
        retriever = retrievers.setdefault(case["corpus"], Retriever(root))
        facts = [f.statement for f in retriever.retrieve(case["question"]).facts[:SUMMARY_FACTS]]
        share = summary_new_share(case["summary"], facts, case["question"])
        problem = summary_problem(case["summary"], facts, case["question"])
        shares[case["label"]].append(share)
        verdict = "kept" if problem is None else f"rejected: {problem}"
        print(f"{case['label']:8} {share:4.2f}  {case['question'][:60]:60}  {verdict}")
    print(f"\nthreshold SUMMARY_NEW_SHARE = {SUMMARY_NEW_SHARE}")
    for label, values in shares.items():
        print(f"{label:8} n={len(values):2}  min {min(values):.2f}  max {max(values):.2f}")


if __name__ == "__main__":
    main()
