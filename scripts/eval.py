#!/usr/bin/env python3
"""Score the retriever on evaluation questions with gold source sections.

    python scripts/eval.py --corpus ../shared/corpora --queries ../shared/eval/dev_queries.jsonl
    python scripts/eval.py --corpus ../shared/corpora --queries … --baseline   # plain rank-bm25 too

``--corpus`` is either a folder of corpora (one sub-folder per ``corpus`` named in the questions)
or a single corpus folder (then only its questions run).  Scoring follows the questions'
README: the retriever's facts are taken in the order returned, nothing de-duplicated; a fact
hits a gold entry when its file matches and, for section scores, its heading matches after
normalisation.  Prints one table per system, overall and per question kind.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from retriever import Retriever, Settings
from retriever.index import Params
from retriever.markup import normalize_heading

ANSWERABLE = ("lookup", "paraphrase", "people", "multi")


@dataclass(frozen=True)
class Answer:
    """What a system returned for one question: (path, heading) per fact, in order."""

    hits: list[tuple[str, str | None]]
    skipped: bool
    coverage: str
    top_score: float
    ms: float
    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    fallbacks: tuple[str, ...] = ()


System = Callable[[dict], Answer]


def load_queries(path: Path, corpus: Path) -> list[dict]:
    queries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if (corpus / queries[0]["corpus"]).is_dir() or not any(q["corpus"] == corpus.name for q in queries):
        return [q for q in queries if (corpus / q["corpus"]).is_dir()]
    return [q for q in queries if q["corpus"] == corpus.name]


def corpus_root(corpus: Path, name: str) -> Path:
    return corpus / name if (corpus / name).is_dir() else corpus


def retriever_system(
    corpus: Path, state_dir: Path, top_k: int, params: Params | None = None, llm_model: str | None = None
) -> System:
    retrievers: dict[str, Retriever] = {}
    settings = Settings.from_env(state_dir=state_dir, top_k=top_k, llm_model=llm_model)
    if llm_model is None:
        settings = settings.model_copy(update={"llm_model": None})

    def answer(query: dict) -> Answer:
        name = query["corpus"]
        if name not in retrievers:
            retrievers[name] = Retriever(corpus_root(corpus, name), settings, params=params, refresh_interval=1e9)
            _ = retrievers[name].memory
        began = time.perf_counter()
        result = retrievers[name].retrieve(query["question"])
        ms = (time.perf_counter() - began) * 1000
        retrieval = result.structured["retrieval"]
        llm = result.structured["diagnostics"]["llm"] or {}
        facts = result.facts
        return Answer(
            hits=[(f.rel_path, f.section_heading) for f in facts],
            skipped=result.structured["triage"]["decision"] == "skip",
            coverage=retrieval["coverage_assessment"],
            top_score=facts[0].relevance_score if facts else 0.0,
            ms=ms,
            llm_calls=llm.get("calls", 0),
            tokens_in=llm.get("tokens_in", 0),
            tokens_out=llm.get("tokens_out", 0),
            fallbacks=tuple(f"{f['stage']}: {f['reason']}" for f in llm.get("fallbacks", [])),
        )

    return answer


def baseline_system(corpus: Path, state_dir: Path, top_k: int) -> System:
    """Plain rank-bm25 (library defaults) over heading sections: lower-case words minus stop words."""
    import re

    from rank_bm25 import BM25Okapi

    from retriever.memory import Memory
    from retriever.stopwords import ENGLISH

    indexes: dict[str, tuple[BM25Okapi, list[tuple[str, str | None]]]] = {}

    def words(text: str) -> list[str]:
        return [w for w in re.findall(r"\w+", text.lower()) if w not in ENGLISH]

    def answer(query: dict) -> Answer:
        name = query["corpus"]
        if name not in indexes:
            memory = Memory.open(corpus_root(corpus, name), Settings(state_dir=state_dir))
            keys, docs = [], []
            for path in sorted(memory.state.catalog):
                doc = memory.document(path)
                for section in doc.sections:
                    keys.append((path, section.heading))
                    docs.append(words(" ".join([*section.heading_path, section.text])) or ["_"])
            indexes[name] = (BM25Okapi(docs), keys)
        bm25, keys = indexes[name]
        began = time.perf_counter()
        scores = bm25.get_scores(words(query["question"]))
        order = sorted(range(len(keys)), key=lambda i: -scores[i])[:top_k]
        ms = (time.perf_counter() - began) * 1000
        return Answer([keys[i] for i in order], False, "comprehensive", 1.0, ms)

    return answer


def _same(hit: tuple[str, str | None], gold: dict) -> bool:
    return hit[0] == gold["path"] and normalize_heading(hit[1]) == normalize_heading(gold["heading"])


def score(queries: Sequence[dict], answers: Sequence[Answer]) -> dict[str, dict[str, float]]:
    """Metrics overall ("all") and per kind."""
    rows: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for query, answer in zip(queries, answers, strict=True):
        kind = query["kind"]
        for bucket in (rows[kind], rows["all"]):
            _score_one(query, answer, bucket)
    return {kind: {m: statistics.fmean(v) for m, v in metrics.items() if v} for kind, metrics in rows.items()}


def _score_one(query: dict, answer: Answer, out: dict[str, list[float]]) -> None:
    kind, gold = query["kind"], query["gold"]
    out["ms"].append(answer.ms)
    if kind == "absent":
        out["absent_not_comprehensive"].append(float(answer.coverage != "comprehensive"))
        out["absent_top_score"].append(answer.top_score)
        return
    if kind == "lowinfo":
        out["lowinfo_skipped"].append(float(answer.skipped))
        return
    out["wrongly_skipped"].append(float(answer.skipped))
    out["top_score"].append(answer.top_score)
    paths = {g["path"] for g in gold}
    files = [h[0] for h in answer.hits]
    out["file_hit@1"].append(float(bool(files[:1]) and files[0] in paths))
    out["file_hit@5"].append(float(any(f in paths for f in files[:5])))
    out["section_hit@5"].append(float(any(_same(h, g) for h in answer.hits[:5] for g in gold)))
    rank = next((i for i, f in enumerate(files, 1) if f in paths), None)
    out["mrr"].append(1.0 / rank if rank else 0.0)
    if kind == "multi":
        found = sum(any(_same(h, g) for h in answer.hits[:10]) for g in gold)
        out["multi_recall@10"].append(found / len(gold))


COLUMNS = (
    "file_hit@1",
    "file_hit@5",
    "section_hit@5",
    "mrr",
    "multi_recall@10",
    "absent_not_comprehensive",
    "lowinfo_skipped",
    "wrongly_skipped",
    "top_score",
    "absent_top_score",
    "ms",
)


def table(title: str, metrics: dict[str, dict[str, float]], counts: dict[str, int]) -> str:
    kinds = ["all", *[k for k in (*ANSWERABLE, "absent", "lowinfo") if k in metrics]]
    lines = [
        f"## {title}",
        "",
        "| metric | " + " | ".join(f"{k} ({counts[k]})" for k in kinds) + " |",
        "|---|" + "---|" * len(kinds),
    ]
    for column in COLUMNS:
        cells = [f"{metrics[k][column]:.3f}" if column in metrics[k] else "" for k in kinds]
        if any(cells):
            lines.append(f"| {column} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run(system: System, queries: Iterable[dict]) -> list[Answer]:
    return [system(q) for q in queries]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--top-k", type=int, default=12)
    parser.add_argument("--baseline", action="store_true", help="also score plain rank-bm25 over sections")
    parser.add_argument("--details", action="store_true", help="print each question's outcome")
    parser.add_argument(
        "--llm",
        nargs="?",
        const=os.environ.get("RETRIEVER_LLM_MODEL", ""),
        default=None,
        metavar="MODEL",
        help="guide retrieval with an LLM (default model: $RETRIEVER_LLM_MODEL; endpoint: $OPENAI_BASE_URL)",
    )
    args = parser.parse_args(argv)
    if args.llm == "":
        parser.error("--llm needs a model: pass --llm MODEL or set RETRIEVER_LLM_MODEL")
    queries = load_queries(args.queries, args.corpus)
    counts: dict[str, int] = defaultdict(int)
    for q in queries:
        counts[q["kind"]] += 1
        counts["all"] += 1
    with tempfile.TemporaryDirectory(prefix="retriever-eval-") as state:
        label = f"retriever (LLM-guided: {args.llm})" if args.llm else "retriever (offline)"
        systems = {label: retriever_system(args.corpus, Path(state), args.top_k, llm_model=args.llm)}
        if args.baseline:
            systems["plain rank-bm25 over sections"] = baseline_system(args.corpus, Path(state), args.top_k)
        for title, system in systems.items():
            answers = run(system, queries)
            print(table(title, score(queries, answers), counts), end="\n\n")
            if args.llm and title.startswith("retriever"):
                print(_llm_summary(answers), end="\n\n")
            if args.details:
                _details(queries, answers)
    return 0


def _llm_summary(answers: Sequence[Answer]) -> str:
    """LLM calls and tokens per question, and how often each stage fell back."""
    n = max(len(answers), 1)
    fallbacks: dict[str, int] = defaultdict(int)
    for a in answers:
        for f in a.fallbacks:
            fallbacks[f] += 1
    lines = ["| LLM cost per question | mean | max |", "|---|---|---|"]
    for label, values in (
        ("calls", [a.llm_calls for a in answers]),
        ("tokens in", [a.tokens_in for a in answers]),
        ("tokens out", [a.tokens_out for a in answers]),
    ):
        lines.append(f"| {label} | {sum(values) / n:.2f} | {max(values, default=0)} |")
    lines += ["", "Fallbacks:"] + [f"- {k}: {v}" for k, v in sorted(fallbacks.items(), key=lambda kv: -kv[1])]
    return "\n".join(lines if fallbacks else lines[:5])


def _details(queries: Sequence[dict], answers: Sequence[Answer]) -> None:
    for q, a in zip(queries, answers, strict=True):
        gold = q["gold"]
        rank = next((i for i, h in enumerate(a.hits, 1) if any(_same(h, g) for g in gold)), None)
        print(
            f"{q['id']:28} {q['kind']:10} sect_rank={rank!s:4} top={a.top_score:.2f} {a.coverage:13} "
            f"llm_calls={a.llm_calls} tokens={a.tokens_in}/{a.tokens_out} "
            f"{q['question'][:70]}"
        )


if __name__ == "__main__":
    raise SystemExit(main())
