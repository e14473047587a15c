"""The systems ``scripts/eval.py`` scores, and where their corpora are: the retriever, and plain rank-bm25
over heading sections or whole files, each answering a question as an ``Answer``.

Split from ``eval.py`` (which scores and prints): a system is a function from a question (a row of a
question file) to what it returned, so a new baseline is one more function here.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

try:
    from rank_bm25 import BM25Okapi  # the plain baseline; a test dependency, not the package's
except ImportError:
    sys.exit("scripts/eval.py compares against rank-bm25; install it with: .venv/bin/pip install -e '.[test]'")

from retriever import Retriever, Settings
from retriever.memory.index import Params

REPO = Path(__file__).resolve().parent.parent
# Multi-session chats between two people, with unanswerable questions among the rest (eval/conversations/):
# a stand-in, written the same way, for the long-conversation benchmark the project is judged on.
CONVERSATIONS = REPO / "eval" / "conversations"
_TURNS = re.compile(r"#{1,6}\s+Turns\s+(\d+)-(\d+)\s*")  # a transcript's block of turns, one turn a line


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
    turns: list[int | None] | None = None  # the turn each fact cites, for questions naming turns (None: cannot say)


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
        root, spans = corpus_root(corpus, name), "relevant_text_span" in query
        turns = [turn_lines(root / f.rel_path).get(f.lines[0]) for f in facts] if spans else None
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
            turns=turns,
        )

    return answer


@lru_cache(maxsize=64)
def turn_lines(path: Path) -> dict[int, int]:
    """Line number (1-based) → the turn it holds, in a transcript whose sections are blocks of turns
    ("## Turns 120-144", then one turn a line): QMSum's ``relevant_text_span`` names turns, finer than sections."""
    out: dict[int, int] = {}
    turn: int | None = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        heading = _TURNS.fullmatch(line.strip())
        if heading:
            turn = int(heading.group(1))
        elif line.startswith("#"):
            turn = None
        elif line.strip() and turn is not None:
            out[number] = turn
            turn += 1
    return out


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
