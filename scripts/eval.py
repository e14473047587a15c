#!/usr/bin/env python3
"""Score the retriever on evaluation questions with gold source sections, beside plain baselines.

    python scripts/eval.py                                   # the bundled company_context, its 24 questions
    python scripts/eval.py --corpus ../shared/corpora        # ../shared: dev and QMSum questions
    python scripts/eval.py --corpus ../shared/corpora --queries ../shared/eval/dev_queries.jsonl

Without ``--corpus`` the bundled ``company_context/`` answers ``eval/company_context_queries.jsonl``
(it works from a fresh clone).  With ``--corpus`` and without ``--queries``, both question files
next to the corpora (``CORPUS/../eval/dev_queries.jsonl`` and ``qmsum_queries.jsonl``) run, each
reported side by side with two plain rank-bm25 baselines answered in the same run (over heading
sections, and over whole files): a ranking change counts only if it holds on both files.
The repository's own held-out handbook questions (``eval/handbook_heldout_queries.jsonl``) run too when
the handbooks are under ``--corpus``, and so do its 102 questions over three multi-session chats
(``eval/conversation_queries.jsonl``, corpus bundled in ``eval/conversations/``), 36 of them unanswerable.
Every file also reports ``answerable_auc``: how well each system's confidence separates answerable
questions from unanswerable ones.
``--corpus`` is either a folder of corpora (one sub-folder per ``corpus`` named in the questions)
or a single corpus folder (then only its questions run).
Scoring follows the questions' README: facts are taken in the order returned, nothing
de-duplicated; a fact hits a gold entry when its file matches and, for section scores, its
heading matches after normalisation.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

try:
    from rank_bm25 import BM25Okapi  # the plain baseline; a test dependency, not the package's
except ImportError:
    sys.exit("scripts/eval.py compares against rank-bm25; install it with: .venv/bin/pip install -e '.[test]'")

from retriever import Retriever, Settings
from retriever.memory.index import Params
from retriever.text.markup import normalize_heading

ANSWERABLE = ("lookup", "paraphrase", "people", "multi", "temporal")
REPO = Path(__file__).resolve().parent.parent
BUNDLED_CORPUS = REPO / "company_context"
BUNDLED_QUERIES = REPO / "eval" / "company_context_queries.jsonl"
QUESTION_FILES = ("dev_queries.jsonl", "qmsum_queries.jsonl")
# 90 further handbook questions written for this repository by reading the handbooks, never by running
# the retriever (eval/README.md): kept out of tuning, so they say how the ranking generalises.
HELDOUT_QUERIES = REPO / "eval" / "handbook_heldout_queries.jsonl"
# Multi-session chats between two people, with unanswerable questions among the rest (eval/conversations/):
# a stand-in, written the same way, for the long-conversation benchmark the project is judged on.
CONVERSATIONS = REPO / "eval" / "conversations"
CONVERSATION_QUERIES = REPO / "eval" / "conversation_queries.jsonl"


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
    answerability: float | None = None
    sections: bool = True  # False for a system that returns whole files (no section scores)


System = Callable[[dict], Answer]


def load_queries(path: Path, corpus: Path) -> list[dict]:
    """The questions of ``path`` whose corpus is under ``corpus`` (or is ``corpus`` itself)."""
    queries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if not queries:
        return []
    if _found(corpus, queries[0]["corpus"]) or not any(q["corpus"] == corpus.name for q in queries):
        return [q for q in queries if _found(corpus, q["corpus"])]
    return [q for q in queries if q["corpus"] == corpus.name]


def _found(corpus: Path, name: str) -> Path | None:
    """Corpus ``name``: a folder of ``corpus``, else one bundled with the repository's own questions."""
    return next((d for d in (corpus / name, CONVERSATIONS / name) if d.is_dir()), None)


def corpus_root(corpus: Path, name: str) -> Path:
    return _found(corpus, name) or corpus


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
            answerability=result.structured["diagnostics"].get("answerability"),
        )

    return answer


def _bm25_words(text: str) -> list[str]:
    from retriever.text.stopwords import ENGLISH

    return [w for w in re.findall(r"\w+", text.lower()) if w not in ENGLISH]


def _bm25_index(root: Path, state_dir: Path, unit: str) -> tuple[BM25Okapi, list[tuple[str, str | None]]]:
    """rank-bm25 over a corpus's heading sections, or over its whole files (keys without a heading)."""
    from retriever.memory.memory import Memory

    memory = Memory.open(root, Settings(state_dir=state_dir))
    keys: list[tuple[str, str | None]] = []
    docs: list[list[str]] = []
    for path in sorted(memory.state.catalog):
        sections = memory.document(path).sections
        texts = [" ".join([*s.heading_path, s.text]) for s in sections]
        if unit == "file":
            keys.append((path, None))
            docs.append(_bm25_words(" ".join(texts)) or ["_"])
            continue
        keys.extend((path, s.heading) for s in sections)
        docs.extend(_bm25_words(t) or ["_"] for t in texts)
    return BM25Okapi(docs), keys


def baseline_system(corpus: Path, state_dir: Path, top_k: int, unit: str = "section") -> System:
    """Plain rank-bm25 (library defaults) over heading sections or whole files: lower-case words
    minus stop words.  Whole-file hits carry no heading, so they get no section scores."""
    indexes: dict[str, tuple[BM25Okapi, list[tuple[str, str | None]]]] = {}

    def answer(query: dict) -> Answer:
        name = query["corpus"]
        if name not in indexes:
            indexes[name] = _bm25_index(corpus_root(corpus, name), state_dir, unit)
        bm25, keys = indexes[name]
        began = time.perf_counter()
        scores = bm25.get_scores(_bm25_words(query["question"]))
        order = sorted(range(len(keys)), key=lambda i: -scores[i])[:top_k]
        ms = (time.perf_counter() - began) * 1000
        top = float(scores[order[0]]) if order else 0.0  # its only confidence, for answerable_auc
        return Answer([keys[i] for i in order], False, "comprehensive", top, ms, sections=unit != "file")

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
    out = {kind: {m: statistics.fmean(v) for m, v in metrics.items() if v} for kind, metrics in rows.items()}
    auc = answerable_auc(queries, answers)
    if auc is not None:
        out["all"]["answerable_auc"] = auc
    return out


def answerable_auc(queries: Sequence[dict], answers: Sequence[Answer]) -> float | None:
    """How well a system's confidence (``answerability``, else its top score) ranks answerable questions above
    unanswerable ones: the chance a random answerable question scores higher (ties count half); None
    without both kinds."""
    yes, no = [], []
    for query, answer in zip(queries, answers, strict=True):
        value = answer.answerability if answer.answerability is not None else answer.top_score
        if query["kind"] in ANSWERABLE:
            yes.append(value)
        elif query["kind"] == "absent":
            no.append(value)
    if not yes or not no:
        return None
    wins = sum((y > n) + 0.5 * (y == n) for y in yes for n in no)
    return wins / (len(yes) * len(no))


def _score_one(query: dict, answer: Answer, out: dict[str, list[float]]) -> None:
    kind, gold = query["kind"], query["gold"]
    out["ms"].append(answer.ms)
    if kind == "absent":
        out["absent_not_comprehensive"].append(float(answer.coverage != "comprehensive"))
        out["absent_top_score"].append(answer.top_score)
        if answer.answerability is not None:
            out["absent_answerability"].append(answer.answerability)
        return
    if kind == "lowinfo":
        out["lowinfo_skipped"].append(float(answer.skipped))
        return
    out["wrongly_skipped"].append(float(answer.skipped))
    out["top_score"].append(answer.top_score)
    if answer.answerability is not None:
        out["answerability"].append(answer.answerability)
    paths = {g["path"] for g in gold}
    files = [h[0] for h in answer.hits]
    out["file_hit@1"].append(float(bool(files[:1]) and files[0] in paths))
    out["file_hit@5"].append(float(any(f in paths for f in files[:5])))
    rank = next((i for i, f in enumerate(files, 1) if f in paths), None)
    out["mrr"].append(1.0 / rank if rank else 0.0)
    if not answer.sections:
        return
    out["section_hit@5"].append(float(any(_same(h, g) for h in answer.hits[:5] for g in gold)))
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
    "answerability",
    "absent_answerability",
    "answerable_auc",
    "ms",
)
# What the baselines can be compared on (they neither skip nor assess coverage meaningfully).
SIDE_BY_SIDE = (
    "file_hit@1",
    "file_hit@5",
    "section_hit@5",
    "mrr",
    "multi_recall@10",
    "absent_not_comprehensive",
    "lowinfo_skipped",
    "wrongly_skipped",
    "answerable_auc",
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


def side_by_side(title: str, results: dict[str, dict[str, float]]) -> str:
    """One table, one column per system, over every question of one file."""
    names = list(results)
    lines = [f"## {title}", "", "| metric | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for column in SIDE_BY_SIDE:
        cells = [f"{results[n][column]:.3f}" if column in results[n] else "n/a" for n in names]
        if any(c != "n/a" for c in cells):
            lines.append(f"| {column} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run(system: System, queries: Iterable[dict]) -> list[Answer]:
    return [system(q) for q in queries]


def systems(args: argparse.Namespace, state: Path) -> dict[str, System]:
    label = f"retriever (LLM-guided: {args.llm})" if args.llm else "retriever (offline)"
    return {
        label: retriever_system(args.corpus, state, args.top_k, llm_model=args.llm),
        "rank-bm25 over sections": baseline_system(args.corpus, state, args.top_k, "section"),
        "rank-bm25 over files": baseline_system(args.corpus, state, args.top_k, "file"),
    }


def evaluate(path: Path, args: argparse.Namespace, state: Path) -> dict[str, dict[str, float]]:
    """Answer one question file with every system; print its tables; return the overall metrics."""
    queries = load_queries(path, args.corpus)
    if not queries:
        print(f"## {path.name}: no questions for the corpora under {args.corpus}\n")
        return {}
    counts: dict[str, int] = defaultdict(int)
    for q in queries:
        counts[q["kind"]] += 1
        counts["all"] += 1
    overall: dict[str, dict[str, float]] = {}
    for title, system in systems(args, state).items():
        answers = run(system, queries)
        metrics = score(queries, answers)
        overall[title] = metrics.get("all", {})
        if title.startswith("retriever"):
            print(table(f"{path.name}: {title}, per kind", metrics, counts), end="\n\n")
            if args.llm:
                print(_llm_summary(answers), end="\n\n")
            if args.details:
                _details(queries, answers)
    print(side_by_side(f"{path.name}: {counts['all']} questions, same run", overall), end="\n\n")
    return overall


def _problem(args: argparse.Namespace) -> str | None:
    """Why the run cannot start (missing corpora or question files), with the next step."""
    if not args.corpus.is_dir():
        return (
            f"error: no corpora at {args.corpus}. Run without --corpus for the bundled company_context, or pass "
            "--corpus DIR (and --queries FILE): the larger evaluation data lives beside the repository in "
            "../shared/corpora and ../shared/eval."
        )
    missing = [str(q) for q in args.queries if not q.is_file()]
    if missing:
        return f"error: question file not found: {', '.join(missing)}; pass --queries FILE (one per file to run)."
    return None


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus", type=Path, default=None, help="a folder of corpora, or one corpus (default: company_context)"
    )
    parser.add_argument(
        "--queries",
        type=Path,
        action="append",
        help="a question file (repeatable); default: dev, QMSum and held-out handbook files",
    )
    parser.add_argument("--top-k", type=int, default=12)
    parser.add_argument("--baseline", action="store_true", help="(kept for old scripts: baselines always run)")
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
    if args.corpus is None:  # the bundled memory and its labelled questions: no ../shared needed
        args.corpus, args.queries = BUNDLED_CORPUS, args.queries or [BUNDLED_QUERIES]
    if not args.queries:
        # ``../shared/eval`` beside a folder of corpora, or beside the folder holding one corpus
        shared = next((d for d in (args.corpus.parent / "eval", args.corpus.parent.parent / "eval") if d.is_dir()),
                      args.corpus.parent / "eval")
        args.queries = [shared / name for name in QUESTION_FILES]
        if args.corpus.is_dir() and load_queries(HELDOUT_QUERIES, args.corpus):  # its handbooks are here
            args.queries.append(HELDOUT_QUERIES)
        if CONVERSATION_QUERIES.is_file():
            args.queries.append(CONVERSATION_QUERIES)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(argv)
    problem = _problem(args)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    summary: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="retriever-eval-") as state:
        for path in args.queries:
            try:
                summary[path.name] = evaluate(path, args, Path(state))
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                print(f"error: {path} is not a question file of the README's format ({exc!r:.120}); fix or drop it.",
                      file=sys.stderr)
                return 2
    if len(summary) > 1:
        print(_holds_on_both(summary))
    return 0


def _holds_on_both(summary: dict[str, dict[str, dict[str, float]]]) -> str:
    """Every file's headline numbers in one table, so a change is judged on all of them at once."""
    lines = ["## All question files", "", "| file | system | file hit@1 | file hit@5 | section hit@5 | MRR |"]
    lines.append("|---|---|---|---|---|---|")
    for name, systems_ in summary.items():
        for system, m in systems_.items():
            cells = [f"{m[k]:.3f}" if k in m else "n/a" for k in ("file_hit@1", "file_hit@5", "section_hit@5", "mrr")]
            lines.append(f"| {name} | {system} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


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
