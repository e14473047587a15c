"""The README's measuring commands work from a fresh clone: bench and eval default to the bundled
company_context (eval with its own labelled questions) and exit with a message, never a traceback or
an endless loop, when a corpus is missing or holds no markdown."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import COMPANY_CONTEXT, REPO

from retriever import Settings
from retriever.memory import workers
from retriever.memory.memory import Memory
from retriever.text.markup import normalize_heading

QUESTIONS = REPO / "eval" / "company_context_queries.jsonl"


def _script(name: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # the scripts' scratch folders stay in the test's folder
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / name), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
        check=False,
    )


def test_every_labelled_question_names_a_section_the_bundled_memory_has() -> None:
    memory = Memory.open(COMPANY_CONTEXT, Settings.from_env())
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 24 and len({r["id"] for r in rows}) == 24
    assert {r["kind"] for r in rows} == {"lookup", "paraphrase", "people", "multi", "absent", "lowinfo"}
    for row in rows:
        assert row["corpus"] == "company_context"
        assert (row["gold"] == []) == (row["kind"] in ("absent", "lowinfo")), row["id"]
        for gold in row["gold"]:
            headings = {normalize_heading(s.heading) for s in memory.document(gold["path"]).sections}
            assert normalize_heading(gold["heading"]) in headings, (row["id"], gold)


def test_eval_without_arguments_scores_the_bundled_memory(tmp_path: Path) -> None:
    result = _script("eval.py", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "## company_context_queries.jsonl: 24 questions, same run" in result.stdout
    assert "| metric | retriever (offline) | rank-bm25 over sections | rank-bm25 over files |" in result.stdout


def test_bench_without_a_corpus_measures_the_bundled_memory(tmp_path: Path) -> None:
    result = _script("bench.py", tmp_path, "--files", "20", "--rounds", "1", "--json", "--no-cli")
    assert result.returncode == 0, result.stderr
    measures = json.loads(result.stdout)
    assert measures["files"] == 20 and measures["sections"] > 0 and measures["warm_query_p50_ms"] > 0
    assert list(tmp_path.iterdir()) == []  # its scratch tree is removed


def test_bench_with_a_missing_corpus_exits_2_naming_it(tmp_path: Path) -> None:
    result = _script("bench.py", tmp_path, "--corpus", str(tmp_path / "no-corpus"))
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: no corpus at {tmp_path / 'no-corpus'}; pass --corpus DIR")
    assert "Traceback" not in result.stderr


def test_bench_with_a_corpus_without_markdown_exits_2_instead_of_looping(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "notes.txt").write_text("not markdown\n", encoding="utf-8")
    result = _script("bench.py", tmp_path, "--corpus", str(corpus), "--files", "10")
    assert result.returncode == 2
    assert (
        result.stderr
        == f"error: no markdown files under {corpus}; pass --corpus DIR naming a folder that holds .md files\n"
    )


@pytest.mark.skipif(workers.available_cores() < 2, reason="a cold build parses in worker processes from 2 cores")
def test_bench_counts_the_index_workers_memory_beside_its_own(tmp_path: Path) -> None:
    files = str(workers.PARALLEL_FROM + 50)  # enough files for the cold build to start workers
    result = _script("bench.py", tmp_path, "--files", files, "--rounds", "1", "--json", "--no-cli")
    assert result.returncode == 0, result.stderr
    measures = json.loads(result.stdout)
    assert measures["peak_rss_workers_mb"] > 0
    # Each worker is an interpreter holding the parser (tens of MB): together they outweigh this process.
    assert measures["peak_rss_combined_mb"] > measures["peak_rss_mb"] + 25


def test_latency_without_a_corpus_times_the_bundled_memorys_own_questions(tmp_path: Path) -> None:
    result = _script("latency.py", tmp_path, "--rounds", "1", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["corpus"], report["questions"]) == ("company_context", 24)
    for name in ("first_asking", "repeated"):
        assert 0 < report[name]["p50_ms"] <= report[name]["p95_ms"]


def test_latency_of_a_missing_corpus_exits_2_with_a_message(tmp_path: Path) -> None:
    result = _script("latency.py", tmp_path, "--corpus", str(tmp_path / "nowhere"))
    assert result.returncode == 2
    assert "no corpus folder at" in result.stderr and "Traceback" not in result.stderr


def test_bench_copies_of_the_bundled_memory_are_all_indexed(tmp_path: Path) -> None:
    # Shifted numbers in front matter had made invalid dates ("2028-13-20"): 9,144 of 10,000 copies were skipped.
    spec = importlib.util.spec_from_file_location("bench_script", REPO / "scripts" / "bench.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    files = 3 * len(bench.sources(COMPANY_CONTEXT))  # the third pass shifts a month past 12
    assert bench.build_tree(COMPANY_CONTEXT, tmp_path / "tree", files) == files

    memory = Memory.open(tmp_path / "tree", Settings(state_dir=tmp_path / "state"))

    assert memory.skipped == []
    assert memory.documents_count == files
