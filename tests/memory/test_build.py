"""Building an index: in parallel it is the serial index, a document at a time it is a section at a time,
and a first build streams (it holds no parsed document while it indexes)."""

from __future__ import annotations

import gc
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import COMPANY_CONTEXT
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.config import Settings
from retriever.memory import build, workers
from retriever.memory.build import SegmentBuilder
from retriever.memory.index import FIELDS, Analyzed, SectionIndex
from retriever.memory.memory import Memory
from retriever.memory.postings import collect
from retriever.text.models import Document

UNREADABLE = {
    "broken/bad_yaml.md": b"---\ntitle: [unclosed\n---\n# Bad\n",
    "broken/binary.md": b"\x00\x01\x02 not text",
    "broken/latin1.md": "# Caf\xe9\n\nMen\xfc\n".encode("latin-1"),
}


def _snapshot(memory: Memory) -> dict[str, Any]:
    """Everything a build produces, comparable with ``==``."""
    index = memory.index
    return {
        "vocab": list(index.vocab.items()),  # ids included, in order
        "segments": [
            [part.tobytes() for part in (s.indptr, s.indices, s.values, s.counts)] for s in index.segments
        ],
        "alive": index.alive.tobytes(),
        "df": index.df.tobytes(),
        "avglen": index.avglen,
        "lengths": index.lengths.tobytes(),
        "section_files": memory.state.section_files,
        "section_ordinals": memory.state.section_ordinals,
        "catalog": memory.state.catalog,
        "acronyms": memory.state.acronyms,
        "skipped": memory.skipped,
    }


@pytest.fixture
def handbook(tmp_path: Path) -> Path:
    """The bundled memory (132 varied files) plus files that cannot be read."""
    root = tmp_path / "handbook"
    shutil.copytree(COMPANY_CONTEXT, root)
    for rel_path, data in UNREADABLE.items():
        (root / rel_path).parent.mkdir(parents=True, exist_ok=True)
        (root / rel_path).write_bytes(data)
    return root


def test_a_parallel_build_is_the_serial_build(handbook: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    serial = Memory.open(handbook, Settings(state_dir=tmp_path / "serial", index_workers=1))
    monkeypatch.setattr(workers, "PARALLEL_FROM", 1)  # the bundled memory is small: parallel anyway
    monkeypatch.setattr(workers, "BATCH", 5)  # many batches, each worker answering several
    parallel = Memory.open(handbook, Settings(state_dir=tmp_path / "parallel", index_workers=3))

    assert _snapshot(parallel) == _snapshot(serial)
    assert len(serial.skipped) == len(UNREADABLE)
    assert parallel.stats == serial.stats
    reopened = Memory.open(handbook, Settings(state_dir=tmp_path / "parallel", index_workers=3))
    assert reopened.stats.cache == "hit"  # the streamed cache records read back
    path = "relationships/client_organizations.md"
    assert reopened.document(path) == serial.document(path)


_TERMS = st.sampled_from(["billing", "stripe", "olena", "invoic", "kyiv", "dec-0054", "2026", "плат", "跨境"])
_FIELD = st.dictionaries(_TERMS, st.integers(1, 4), max_size=5).map(Counter)
_SECTION = st.tuples(*[_FIELD] * len(FIELDS))
_DOCUMENTS = st.lists(st.lists(_SECTION, max_size=4), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None)
@given(_DOCUMENTS)
def test_documents_added_whole_index_as_their_sections_added_one_by_one(documents: list[list[Analyzed]]) -> None:
    whole, single = SectionIndex(), SectionIndex()
    by_document, by_section = SegmentBuilder(whole), SegmentBuilder(single)
    for sections in documents:
        by_document.add_postings(collect(sections))
        for section in sections:
            by_section.add(section)
    assert by_document.finish(fix_avglen=True) == by_section.finish(fix_avglen=True)
    assert list(whole.vocab.items()) == list(single.vocab.items())
    for mine, theirs in zip(whole.segments, single.segments, strict=True):
        for part in ("indptr", "indices", "values", "counts"):
            assert np.array_equal(getattr(mine, part), getattr(theirs, part))
    assert np.array_equal(whole.df, single.df) and np.array_equal(whole.lengths, single.lengths)


def test_a_first_build_holds_no_parsed_document_while_it_indexes(handbook: Path) -> None:
    alive: list[int] = []
    gc.collect()
    before = {id(o) for o in gc.get_objects() if isinstance(o, Document)}  # other tests' documents, still held

    def count_documents(phase: str, done: int, total: int) -> None:
        if phase == "indexing" and done == total // 2:
            gc.collect()
            alive.append(sum(isinstance(o, Document) and id(o) not in before for o in gc.get_objects()))

    Memory.open(handbook, Settings.from_env(), progress=count_documents)
    assert alive == [0]  # each went to the cache and the segment builder, and was let go


def test_counts_above_the_uint16_range_index_exactly_as_narrow_ones(
    handbook: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    narrow = Memory.open(handbook, Settings(state_dir=tmp_path / "narrow", index_workers=1))
    monkeypatch.setattr(build, "_NARROW", 1)  # every count above 1 takes the wide path
    wide = Memory.open(handbook, Settings(state_dir=tmp_path / "wide", index_workers=1))
    assert _snapshot(wide) == _snapshot(narrow)


def test_a_term_written_70000_times_in_a_section_keeps_its_exact_count() -> None:
    index = SectionIndex()
    builder = SegmentBuilder(index)
    body: Counter[str] = Counter({"zebra": 70_000, "quokka": 3})
    builder.add_postings(collect([(Counter({"other": 1}), Counter(), Counter(), Counter(), Counter({"x": 2}))]))
    builder.add_postings(collect([(Counter(), Counter(), Counter(), Counter(), body)]))
    builder.finish(fix_avglen=True)
    segment = index.segments[0]
    zebra = index.vocab["zebra"]
    assert segment.counts[segment.indptr[zebra] : segment.indptr[zebra + 1]].tolist() == [70_000.0]
