#!/usr/bin/env python3
"""Benchmark the retriever on a large generated memory tree.

    python scripts/bench.py [--corpus DIR] [--files 10000] [--compare-rank-bm25]
    python scripts/bench.py --corpus ../shared/corpora --files 10000     # the README's published numbers

``--corpus`` defaults to the bundled ``company_context/`` (it works from a fresh clone); the README's
numbers come from the public handbooks in ``../shared/corpora``.  A missing corpus, or one without
markdown, exits 2 with a message.  Builds a tree of ``--files`` markdown files from the corpus
(copies with varied names and text: numbers shifted, per-copy words added, paragraphs rotated),
then reports: cold index time, cached load time, warm query p50/p95 (library, in process), one changed file
refreshed, peak RSS, and the wall time of ``retriever query`` with a warm cache on
``company_context``.  Targets (issue 2): warm p50 ≤ 50 ms at 10k files, CLI ≤ 1 s, cold 10k
index ≤ 60 s, one changed file ≤ 0.5 s.

Peak RSS comes in three figures, because the cold build parses in worker processes:
``peak_rss_mb`` is this process alone (``VmHWM``, else ``RUSAGE_SELF``); ``peak_rss_workers_mb`` the largest single
worker (``RUSAGE_CHILDREN``, read as the cold build ends), an upper bound: Linux charges a child the
memory it held when it called exec, a copy of this process's at that moment; ``peak_rss_combined_mb``
the largest sum of this process and its live children during the cold build, sampled every 50 ms
from ``/proc`` (Linux only; a spike shorter than that can be missed): what a cold build needs in all.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from retriever import Retriever, Settings
from retriever.memory.memory import Memory
from retriever.text.front_matter import front_matter_end

REPO = Path(__file__).resolve().parent.parent
QUESTIONS = [
    "How much sick leave do federal employees earn?",
    "What are the monthly internet, phone and wellness stipends?",
    "Who should I contact about the Turing infrastructure drop-in sessions?",
    "How long do I have to report an IT security incident?",
    "What incident severity levels do we use?",
    "Can I expense a coworking space membership?",
    "How do merit increases work and how are salary bands set?",
    "What is the default licence for permissive open source code?",
    "Who approves travel bookings?",
    "What is the professional development budget per year?",
]
# Asked when the corpus is the bundled company_context (the list above is about the public handbooks).
BUNDLED_QUESTIONS = [
    "Who owns the Helix EU data residency project?",
    "What is our total MRR and which account is the largest?",
    "How many days of paid time off do we get per year?",
    "Who approves a discount above 20 percent?",
    "What is the hotel limit per night in London?",
    "What did we decide about a Warsaw office?",
    "Who follows up on the Northwind renewal?",
    "What are the incident severity levels?",
    "How much is paid for answering a night page on call?",
    "What are our goals for 2027?",
]
_NUMBER = re.compile(r"\b\d{1,4}\b")


def sources(corpus: Path) -> list[tuple[str, str]]:
    """(relative path, text) of every markdown file under ``corpus``."""
    out = []
    for path in sorted(corpus.rglob("*.md")):
        if not any(part.startswith(".") for part in path.relative_to(corpus).parts):
            out.append((path.relative_to(corpus).as_posix(), path.read_text(encoding="utf-8", errors="replace")))
    return out


def vary(text: str, copy: int, rng: random.Random) -> str:
    """A copy that is not a duplicate: shifted numbers, a per-copy vocabulary, rotated paragraphs.  Its front
    matter stays as it was: shifted, "2026-11-18" became "2027-12-19" and then "2028-13-20", an invalid date that
    makes the whole file skipped (9,144 of 10,000 copies of the bundled memory were)."""
    if copy == 0:
        return text
    end = front_matter_end(text)  # the reader's own fences, YAML or TOML
    matter, text = text[:end], text[end:]
    paragraphs = _NUMBER.sub(lambda m: str(int(m.group()) + copy), text).split("\n\n")
    if len(paragraphs) > 4:
        k = rng.randrange(1, len(paragraphs) - 1)
        head, body = paragraphs[:1], paragraphs[1:]
        paragraphs = head + body[k:] + body[:k]
    words = " ".join(f"project{copy}x{rng.randrange(500)}" for _ in range(8))
    return matter + "\n\n".join(paragraphs) + f"\n\nCopy {copy} notes: {words}.\n"


def build_tree(corpus: Path, target: Path, files: int, seed: int = 7) -> int:
    """Write ``files`` varied copies of the corpus's markdown under ``target``; ValueError for an empty corpus
    (each pass over it must write something, or the loop would never end)."""
    rng = random.Random(seed)
    pool = sources(corpus)
    if not pool:
        raise ValueError(f"no markdown files under {corpus}")
    written = 0
    copy = 0
    while written < files:
        for rel, text in pool:
            if written >= files:
                break
            path = target / f"batch_{copy:02d}" / rel
            if copy:
                path = path.with_name(f"{path.stem}_{copy}.md")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(vary(text, copy, rng), encoding="utf-8")
            written += 1
        copy += 1
    return written


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def time_queries(retriever: Retriever, rounds: int, questions: list[str]) -> list[float]:
    times = []
    for _ in range(rounds):
        for question in questions:
            began = time.perf_counter()
            retriever.retrieve(question)
            times.append((time.perf_counter() - began) * 1000)
    return times


def cli_wall_time(state: Path, runs: int = 5) -> float:
    env = {**os.environ, "RETRIEVER_STATE_DIR": str(state)}
    command = [
        str(Path(sys.executable).with_name("retriever")),
        "query",
        QUESTIONS[1],
        "--root",
        str(REPO / "company_context"),
    ]
    if not Path(command[0]).exists():
        command = [sys.executable, "-m", "retriever", *command[1:]]
    subprocess.run(command, env=env, check=True, capture_output=True)  # warm the cache
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run(command, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def own_peak_mb() -> float:
    """This process's peak resident memory: ``VmHWM`` where ``/proc`` has it, else ``RUSAGE_SELF``.

    ``ru_maxrss`` also counts what this process held when it called exec, a copy of its parent's: started
    from a large process (a test runner), it would report the parent's size.  ``VmHWM`` starts at exec.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class RssSampler:
    """The largest sum of the resident memory of this process and its children, sampled every ``interval``
    seconds from ``/proc`` while the ``with`` block runs (Linux; ``peak_mb`` is None elsewhere)."""

    def __init__(self, interval: float = 0.05) -> None:
        self.interval = interval
        self.peak_mb: float | None = None  # this process and its children together
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="rss-sampler", daemon=True)
        self._page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

    def __enter__(self) -> RssSampler:
        if Path("/proc/self/statm").exists():
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _sample(self) -> None:
        while True:
            total = sum(self._rss(pid) for pid in [os.getpid(), *self._children()])
            self.peak_mb = max(self.peak_mb or 0.0, total / 2**20)
            if self._stop.wait(self.interval):
                return

    def _rss(self, pid: int) -> int:
        try:  # statm's second field: resident pages
            return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * self._page
        except (OSError, IndexError, ValueError):
            return 0  # a child that just exited

    @staticmethod
    def _children() -> list[int]:
        pids: list[int] = []
        for task in Path("/proc/self/task").iterdir():
            try:
                pids.extend(int(p) for p in (task / "children").read_text().split())
            except (OSError, ValueError):
                continue
        return pids


def rank_bm25_query_ms(memory: Memory, questions: list[str]) -> tuple[float, float]:
    """(build seconds, median query ms) of plain rank-bm25 over the same sections, for comparison."""
    from rank_bm25 import BM25Okapi

    from retriever.text import analyzer

    began = time.perf_counter()
    corpus = []
    for path in sorted(memory.state.catalog):
        doc = memory.document(path)
        corpus.extend(analyzer.terms(" ".join([*s.heading_path, s.text])) or ["_"] for s in doc.sections)
    bm25 = BM25Okapi(corpus)
    build = time.perf_counter() - began
    times = []
    for question in questions:
        started = time.perf_counter()
        bm25.get_scores(analyzer.terms(question))
        times.append((time.perf_counter() - started) * 1000)
    return build, statistics.median(times)


def provenance_times(tree: Path, memory: Memory) -> dict[str, float]:
    """Commit the tree, then time git provenance: one batched ``git log`` cold, then from the cache."""
    from retriever.memory import gitinfo

    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Bench",
        "GIT_AUTHOR_EMAIL": "b@example.test",
        "GIT_COMMITTER_NAME": "Bench",
        "GIT_COMMITTER_EMAIL": "b@example.test",
    }
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "bench"]):
        subprocess.run(["git", "-C", str(tree), *command], env=env, check=True, capture_output=True)
    began = time.perf_counter()
    history = gitinfo.history(tree, "")
    gitinfo.dirty(tree, "")
    cold = time.perf_counter() - began
    assert memory.cache is not None
    memory.cache.save_history(history.head, history)
    began = time.perf_counter()
    memory.cache.load_history(history.head)
    gitinfo.dirty(tree, "")
    return {
        "provenance_cold_s": round(cold, 3),
        "provenance_cached_s": round(time.perf_counter() - began, 3),
        "provenance_files": len(history.last),
    }


def _problem(corpus: Path, keep: Path | None, files: int) -> str | None:
    """Why the benchmark cannot start, with the next step; None when it can."""
    if files < 1:
        return f"error: --files {files}: build at least one file"
    if keep is not None and keep.is_dir() and any(keep.iterdir()):
        return None  # an existing tree is measured as it is; the corpus is not read
    if not corpus.is_dir():
        return (
            f"error: no corpus at {corpus}; pass --corpus DIR (a folder of markdown files), or leave it out "
            "for the bundled company_context"
        )
    if not sources(corpus):
        return f"error: no markdown files under {corpus}; pass --corpus DIR naming a folder that holds .md files"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=REPO / "company_context", help="default: company_context")
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5, help="passes over the questions when timing queries")
    parser.add_argument("--keep", type=Path, default=None, help="build the tree here and keep it")
    parser.add_argument("--compare-rank-bm25", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-cli", action="store_true", help="skip the `retriever query` wall-time runs")
    args = parser.parse_args()
    if problem := _problem(args.corpus, args.keep, args.files):
        print(problem, file=sys.stderr)
        return 2

    work = Path(tempfile.mkdtemp(prefix="retriever-bench-"))
    tree = args.keep or work / "tree"
    state = work / "state"
    results: dict[str, float | int | str] = {}
    try:
        if not tree.exists() or not any(tree.iterdir()):
            results["files"] = build_tree(args.corpus, tree, args.files)
        settings = Settings(state_dir=state)

        began = time.perf_counter()
        with RssSampler() as sampler:
            memory = Memory.open(tree, settings)
        results["cold_index_s"] = round(time.perf_counter() - began, 2)
        # Read at once: a child started later (git, the CLI runs) is charged this process's own peak, since
        # Linux counts the memory a child had when it called exec (a copy of ours) in its maximum.
        workers_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        results["sections"] = memory.sections_count
        results["documents"] = memory.documents_count

        began = time.perf_counter()
        memory = Memory.open(tree, settings)
        results["cached_load_s"] = round(time.perf_counter() - began, 3)

        retriever = Retriever(tree, settings, refresh_interval=float("inf"))
        retriever._memory = memory  # the loaded memory, as a server holds it
        questions = BUNDLED_QUESTIONS if args.corpus.resolve() == REPO / "company_context" else QUESTIONS
        time_queries(retriever, 1, questions)  # warm-up
        times = time_queries(retriever, args.rounds, questions)
        results["warm_query_p50_ms"] = round(percentile(times, 0.5), 2)
        results["warm_query_p95_ms"] = round(percentile(times, 0.95), 2)

        victim = next(iter(sorted(tree.rglob("*.md"))))
        victim.write_text(victim.read_text(encoding="utf-8") + "\n\nEdited for the benchmark: zebra quokka.\n")
        began = time.perf_counter()
        stats = memory.refresh()
        results["one_file_refresh_s"] = round(time.perf_counter() - began, 3)
        results["one_file_refresh_parsed"] = stats.parsed

        results["peak_rss_mb"] = round(own_peak_mb(), 1)
        results["peak_rss_workers_mb"] = round(workers_peak, 1)
        if sampler.peak_mb is not None:
            results["peak_rss_combined_mb"] = round(sampler.peak_mb, 1)
        if shutil.which("git") and args.keep is None:  # never turn the user's own folder into a repository
            results.update(provenance_times(tree, memory))
        if args.compare_rank_bm25:
            build, query_ms = rank_bm25_query_ms(memory, questions)
            results["rank_bm25_build_s"] = round(build, 2)
            results["rank_bm25_query_p50_ms"] = round(query_ms, 2)
        if not args.no_cli:
            results["cli_query_warm_s"] = round(cli_wall_time(work / "cli-state"), 3)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print("| measure | value |\n|---|---|")
        for key, value in results.items():
            print(f"| {key} | {value} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
