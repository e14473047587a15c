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
(``eval/conversation_queries.jsonl``, corpus bundled in ``eval/conversations/``), 36 of them unanswerable,
and the questions over two chats of 28 sessions (``eval/long_conversation_queries.jsonl``); both files
run again with each chat as a memory of its own (one file, as a long-conversation benchmark converts each
conversation), where reading is not shared among files.
Every file also reports ``answerable_auc``: how well each system's confidence separates answerable
questions from unanswerable ones; where some unanswerable questions are speaker swaps (one person's event
asked of the other), ``answerable_auc_swapped`` rates the system on those alone.
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
import shutil
import statistics
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # eval_systems, when this file is loaded by path

import numpy as np
from eval_systems import Answer, System, baseline_system, corpus_root, load_queries, retriever_system
from fit_confidence import auc  # the labelled set's AUC, the same measure

from retriever.text.markup import normalize_heading

__all__ = ["Answer", "System", "answerable_auc", "load_queries", "main", "score"]

ANSWERABLE = ("lookup", "paraphrase", "people", "multi", "temporal")
REPO = Path(__file__).resolve().parent.parent
BUNDLED_CORPUS = REPO / "company_context"
BUNDLED_QUERIES = REPO / "eval" / "company_context_queries.jsonl"
QUESTION_FILES = ("dev_queries.jsonl", "qmsum_queries.jsonl")
SWAPPED = "speaker swapped"  # the note on an unanswerable chat question that asks one person about the other's event
# 90 further handbook questions written for this repository by reading the handbooks, never by running
# the retriever (eval/README.md): kept out of tuning, so they say how the ranking generalises.
HELDOUT_QUERIES = REPO / "eval" / "handbook_heldout_queries.jsonl"
# 12 "What is X?" questions over the handbooks' glossaries (eval/README.md), written before the ranking for them.
DEFINITION_QUERIES = REPO / "eval" / "definition_queries.jsonl"
# Chats between two people (eval/conversations/): twelve sessions each, and 28 (the long-conversation
# benchmark's length) in the long ones.
CONVERSATION_FILES = (REPO / "eval" / "conversation_queries.jsonl", REPO / "eval" / "long_conversation_queries.jsonl")
ONE_CHAT = ", one chat a memory"  # the suffix of a chat file's name in the view that asks each chat alone


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
    for name, wanted in (("answerable_auc", None), ("answerable_auc_swapped", SWAPPED)):
        auc = answerable_auc(queries, answers, wanted)
        if auc is not None:
            out["all"][name] = auc
    return out


def answerable_auc(queries: Sequence[dict], answers: Sequence[Answer], note: str | None = None) -> float | None:
    """How well a system's confidence (``answerability``, else its top score) ranks answerable questions above
    unanswerable ones: the chance a random answerable question scores higher (ties count half); None
    without both kinds.  With ``note``, only the unanswerable questions that carry it count (``SWAPPED``:
    one person's event asked of the other, the long-conversation benchmark's adversarial kind)."""
    rated = [
        (answer.answerability if answer.answerability is not None else answer.top_score, query["kind"] in ANSWERABLE)
        for query, answer in zip(queries, answers, strict=True)
        if query["kind"] in ANSWERABLE or (query["kind"] == "absent" and note in (None, query.get("note")))
    ]
    if len({answerable for _, answerable in rated}) < 2:
        return None
    return auc(np.array([value for value, _ in rated]), np.array([float(answerable) for _, answerable in rated]))


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
    if answer.turns is not None and "relevant_text_span" in query:
        spans = [(int(a), int(b)) for a, b in query.get("relevant_text_span", ())]
        inside = [t is not None and any(a <= t <= b for a, b in spans) for t in answer.turns]
        out["turn_hit@1"].append(float(any(inside[:1])))
        out["turn_hit@3"].append(float(any(inside[:3])))
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
    "turn_hit@1",
    "turn_hit@3",
    "absent_not_comprehensive",
    "lowinfo_skipped",
    "wrongly_skipped",
    "top_score",
    "absent_top_score",
    "answerability",
    "absent_answerability",
    "answerable_auc",
    "answerable_auc_swapped",
    "ms",
)
# What the baselines can be compared on (they neither skip nor assess coverage meaningfully).
SIDE_BY_SIDE = (
    "file_hit@1",
    "file_hit@5",
    "section_hit@5",
    "mrr",
    "multi_recall@10",
    "turn_hit@1",
    "turn_hit@3",
    "absent_not_comprehensive",
    "lowinfo_skipped",
    "wrongly_skipped",
    "answerable_auc",
    "answerable_auc_swapped",
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


def evaluate(path: Path, queries: Sequence[dict], args: argparse.Namespace, state: Path) -> dict[str, dict[str, float]]:
    """Answer one question file's ``queries`` with every system; print its tables; return the overall metrics."""
    if not queries:
        print(f"## {path.name}: no questions for the corpora under {args.corpus}\n")
        return {}
    return evaluate_queries(path.name, queries, args, state)


def evaluate_queries(
    name: str, queries: Sequence[dict], args: argparse.Namespace, state: Path
) -> dict[str, dict[str, float]]:
    """``evaluate`` for questions already loaded, reported under ``name``."""
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
            print(table(f"{name}: {title}, per kind", metrics, counts), end="\n\n")
            if args.llm:
                print(_llm_summary(answers), end="\n\n")
            if args.details:
                _details(queries, answers)
    print(side_by_side(f"{name}: {counts['all']} questions, same run", overall), end="\n\n")
    return overall


def one_chat_memories(
    path: Path, queries: Sequence[dict], args: argparse.Namespace, state: Path
) -> dict[str, dict[str, float]]:
    """The chat questions of ``path`` (``queries``), each asked of its own chat as a memory of one file (as a
    long-conversation benchmark converts each conversation): where a cap on the sections read per file would
    starve it."""
    root = state / "one-chat-memories" / path.stem
    asked = []
    for q in queries:
        name = chat_file(q)
        folder = root / Path(name).stem
        if not folder.is_dir():
            folder.mkdir(parents=True)
            shutil.copy(corpus_root(args.corpus, q["corpus"]) / name, folder / name)
        asked.append({**q, "corpus": folder.name})
    alone = argparse.Namespace(**{**vars(args), "corpus": root})
    return evaluate_queries(path.name + ONE_CHAT, asked, alone, state) if asked else {}


def chat_file(question: dict) -> str:
    """The chat a question is about: its gold file, or for an unanswerable one the file its id names
    ("conv-maya-and-tom-020" → "maya-and-tom.md")."""
    if question["gold"]:
        return str(question["gold"][0]["path"])
    return question["id"].removeprefix("conv-").rsplit("-", 1)[0] + ".md"


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
        for path in (HELDOUT_QUERIES, DEFINITION_QUERIES):
            if args.corpus.is_dir() and load_queries(path, args.corpus):  # its handbooks are here
                args.queries.append(path)
        args.queries.extend(path for path in CONVERSATION_FILES if path.is_file())
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(argv)
    problem = _problem(args)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    summary: dict[str, dict[str, dict[str, float]]] = {}
    loaded: dict[Path, list[dict]] = {}
    with tempfile.TemporaryDirectory(prefix="retriever-eval-") as state:
        for path in args.queries:
            try:
                loaded[path] = load_queries(path, args.corpus)
                summary[path.name] = evaluate(path, loaded[path], args, Path(state))
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                print(f"error: {path} is not a question file of the README's format ({exc!r:.120}); fix or drop it.",
                      file=sys.stderr)
                return 2
        for path in (p for p in CONVERSATION_FILES if p in loaded):
            alone = one_chat_memories(path, loaded[path], args, Path(state))
            if alone:
                summary[path.name + ONE_CHAT] = alone
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
