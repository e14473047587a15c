"""Section meaning vectors: computed with each segment, aligned with section ids through every change."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from conftest import TreeFactory
from fixtures import ACME
from hypothesis import given
from hypothesis import strategies as st

from retriever.config import Settings
from retriever.memory import vectors
from retriever.memory.build import add_sections
from retriever.memory.cache import decode_document, encode_document
from retriever.memory.index import SectionIndex
from retriever.memory.intake import prepare
from retriever.memory.memory import Memory
from retriever.memory.vectors import section_text
from retriever.text.framing import framed
from retriever.text.parser import parse_document

LATER = 2_000_000_000_000_000_000  # an mtime no freshly written file has
TRAVEL = "# Travel\n\n## Dining expenses\n\nBreakfast, lunch and dinner are reimbursed up to 75 dollars a day.\n"


def _write(path: Path, text: str, mtime_ns: int) -> None:
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(mtime_ns, mtime_ns))


def _assert_aligned(memory: Memory) -> None:
    """Every live section's stored vector is the meaning of its own current text (up to int8 rounding),
    and no other section's."""
    stored = np.concatenate([segment.vectors * segment.scales[:, None] for segment in memory.index.segments])
    assert stored.shape == (memory.index.size, 256)
    live = np.flatnonzero(memory.index.alive)
    fresh = memory.index.meaning([section_text(*memory.section(int(sid))) for sid in live])
    closeness = fresh @ stored[live].T  # row: a section's text now; column: a stored vector
    assert np.diag(closeness).min() > 0.99
    assert (closeness.argmax(axis=1) == np.arange(len(live))).all()


def test_vectors_stay_aligned_with_sections_through_edits_deletions_compaction_and_the_cache(
    make_tree: TreeFactory,
) -> None:
    notes = {
        f"notes/note_{n:02d}.md": f"## Note {n}\n\nThe {word} rota changes weekly.\n"
        for n, word in enumerate(["coffee", "printer", "parking", "badge", "plant", "mail", "fridge", "desk"])
    }
    root = make_tree({**ACME, **notes})
    settings = Settings.from_env()
    memory = Memory.open(root, settings)
    _assert_aligned(memory)

    _write(root / "policies/leave.md", "# Leave Policy\n\n## Holidays\n\nTwenty-five days of holiday a year.\n", LATER)
    (root / "notes/note_03.md").unlink()
    _write(root / "policies/travel.md", TRAVEL, LATER)
    memory.refresh()
    assert not memory.stats.rebuilt and len(memory.index.segments) == 2  # tombstones plus a new segment
    _assert_aligned(memory)

    rebuilt = []
    for number in range(1, 9):  # each edit adds a segment, until eight of them are compacted into one
        _write(root / "notes/note_00.md", f"## Note zero\n\nEdit {number} of the coffee rota.\n", LATER + number)
        memory.refresh()
        rebuilt.append(memory.stats.rebuilt)
        _assert_aligned(memory)
    assert rebuilt.count(True) == 1

    reopened = Memory.open(root, settings)
    assert reopened.stats.cache == "hit"
    _assert_aligned(reopened)


def test_a_section_is_found_by_meaning_in_the_segment_that_added_it(make_tree: TreeFactory) -> None:
    root = make_tree(ACME)
    memory = Memory.open(root, Settings.from_env())
    _write(root / "policies/travel.md", TRAVEL, LATER)
    memory.refresh()
    cosines = memory.index.cosines_at(memory.index.meaning(["meals on a work trip"])[0], np.arange(memory.index.size))
    best = int(np.argmax(np.where(memory.index.alive, cosines, -1.0)))
    doc, section = memory.section(best)
    assert (doc.rel_path, section.heading) == ("policies/travel.md", "Dining expenses")


def test_a_text_of_stop_words_alone_has_no_meaning() -> None:
    index = SectionIndex()
    assert not index.meaning(["What is it about, and who is there?"]).any()


def test_the_cosine_spread_from_moments_is_the_mean_and_spread_over_live_sections(make_tree: TreeFactory) -> None:
    root = make_tree(ACME)
    memory = Memory.open(root, Settings.from_env())
    _write(root / "policies/travel.md", TRAVEL, LATER)  # a second segment, and tombstones in the first
    _write(root / "policies/leave.md", "# Leave Policy\n\n## Holidays\n\nTwenty-five days of holiday a year.\n", LATER)
    memory.refresh()
    assert len(memory.index.segments) == 2 and not memory.index.alive.all()
    query = memory.index.meaning(["meals on a work trip"])[0]
    # the exact cosines, segment by segment, to check both shortcuts against
    cosines = np.concatenate([(s.vectors.astype(np.float64) @ query) * s.scales for s in memory.index.segments])
    spread = memory.index.cosine_spread(query)
    assert spread is not None
    live = cosines[memory.index.alive].astype(np.float64)
    assert spread == pytest.approx((live.mean(), live.std()), abs=1e-6)
    some = np.flatnonzero(memory.index.alive)[::2]
    np.testing.assert_allclose(memory.index.cosines_at(query, some), cosines[some], atol=1e-6)


def test_an_index_built_without_texts_has_no_vectors_and_no_cosine_spread() -> None:
    index = SectionIndex()
    add_sections(index, [(Counter(), Counter({"fridge": 1}), Counter(), Counter(), Counter({"rota": 2}))])
    assert index.segments[0].vectors.shape == (0, 0)
    assert index.cosine_spread(index.meaning(["fridge rota"])[0]) is None
    assert index.cosine_spread(np.ones(256, dtype=np.float32) / 16) is None


# remembered vectors (the query path)


def test_cosines_skip_a_segment_built_from_no_text() -> None:
    meaning = vectors.meaning_of(["billing migration owner", "holiday calendar"])
    rows, scales = vectors.arrays(meaning)
    query = vectors.embed(["who owns the billing migration"])[0]
    blocks = [(vectors.no_rows(), vectors.no_scales()), (rows, scales)]  # an empty first build, then a file
    found = vectors.cosines_at(blocks, np.array([0, 1]), query)
    assert found.tolist() == vectors.cosines_at([(rows, scales)], np.array([0, 1]), query).tolist()
    assert found[0] > found[1]


def test_remembered_vectors_are_bit_for_bit_what_embed_returns() -> None:
    remembered = vectors.Remembered()
    first = remembered.embed(["Breakfast is paid for.", "Hotels are booked by travel."])
    again = remembered.embed(["Hotels are booked by travel.", "Parking is free.", "Breakfast is paid for."])
    exact = vectors.embed(["Hotels are booked by travel.", "Parking is free.", "Breakfast is paid for."])
    assert again.tolist() == exact.tolist()
    assert first[0].tolist() == exact[2].tolist()
    assert remembered.embed([]).shape == (0, exact.shape[1])


def test_the_least_recently_used_text_is_forgotten_first_and_long_texts_are_never_kept() -> None:
    remembered = vectors.Remembered(limit=2)
    remembered.embed(["one", "two"])
    remembered.embed(["one", "three"])  # "two" is now the least recently used: it goes
    assert list(remembered._rows) == ["one", "three"]
    remembered.embed(["x " * vectors.REMEMBERED_CHARS])
    assert list(remembered._rows) == ["one", "three"]


# statements' vectors, stored with their document


def test_a_packed_vector_unpacks_to_its_int8_rounding_of_the_same_direction() -> None:
    exact = vectors.embed(["Breakfast is paid for.", "Hotels are booked by travel.", "and the"])
    packed = vectors.pack(exact)
    assert [len(p) for p in packed] == [exact.shape[1] + 4] * 3
    back = vectors.unpack(packed, exact.shape[1])
    assert (np.einsum("ij,ij->i", back[:2], exact[:2]) > 0.999).all()
    assert not back[2].any()  # a text of stop words has no meaning, packed or not


def _stored_and_fresh(memory: Memory, rel_path: str) -> tuple[np.ndarray, np.ndarray]:
    """The stored vectors of a document's statements, and the vectors of those statements as they are scored."""
    doc = memory.document(rel_path)
    pairs = [(u, s) for s in doc.sections for u in s.units]
    assert all(u.vector for u, _ in pairs)
    return vectors.unpack([u.vector for u, _ in pairs], 256), vectors.embed([framed(u, s) for u, s in pairs])


def test_an_indexed_documents_statements_carry_the_vectors_they_are_scored_with(make_tree: TreeFactory) -> None:
    root = make_tree({"travel.md": TRAVEL + "\n## Hotels\n\n- Booked by the travel desk.\n- Up to 130 euros.\n"})
    memory = Memory.open(root, Settings.from_env())
    assert [framed(u, s) for s in memory.document("travel.md").sections for u in s.units][1:] == [
        "Hotels: Booked by the travel desk.",  # a short item is scored, so embedded, with its heading
        "Hotels: Up to 130 euros.",
    ]
    stored, fresh = _stored_and_fresh(memory, "travel.md")
    assert (np.einsum("ij,ij->i", stored, fresh) > 0.999).all()


def test_an_edited_file_gets_its_new_statements_vectors(make_tree: TreeFactory) -> None:
    root = make_tree({"travel.md": TRAVEL})
    memory = Memory.open(root, Settings.from_env())
    _write(root / "travel.md", "# Travel\n\n## Parking\n\nParking permits are issued by the front desk.\n", LATER)
    memory.refresh()
    stored, fresh = _stored_and_fresh(memory, "travel.md")
    assert len(stored) == 1 and float(stored[0] @ fresh[0]) > 0.999


def test_stored_vectors_are_read_and_only_the_texts_without_one_embedded(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = ["What is paid for?", "Breakfast is paid for.", "Hotels are booked by travel."]
    exact = vectors.embed(texts)
    embedded: list[str] = []
    real = vectors.embed
    monkeypatch.setattr(vectors, "embed", lambda asked: embedded.extend(asked) or real(asked))
    stored = [b"", vectors.pack(exact[1:2])[0], b"a vector of another table's width"]
    out = vectors.Remembered().embed_stored(texts, stored)
    assert embedded == ["What is paid for?", "Hotels are booked by travel."]
    assert out[0].tolist() == exact[0].tolist() and out[2].tolist() == exact[2].tolist()
    assert float(out[1] @ exact[1]) > 0.999


def test_statements_are_embedded_a_batch_at_a_time_to_the_same_vectors(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = parse_document("travel.md", TRAVEL + "\n## Hotels\n\n- Booked by the travel desk.\n- Up to 130 euros.\n")
    whole = vectors.document_vectors(doc)[1]
    monkeypatch.setattr(vectors, "_STATEMENT_BATCH", 2)
    batched = vectors.document_vectors(doc)[1]
    one_by_one = [[vectors.pack(vectors.embed([framed(unit, s)]))[0] for unit in s.units] for s in doc.sections]
    assert [len(rows) for rows in whole] == [len(s.units) for s in doc.sections]
    assert sum(map(len, whole)) == 3 and all(map(all, whole)) and batched == whole == one_by_one


def test_a_documents_meaning_taken_with_its_statements_is_the_meaning_taken_alone() -> None:
    doc = parse_document("travel.md", TRAVEL + "\n## Hotels\n\n- Booked by the travel desk.\n- Up to 130 euros.\n")
    meaning, rows = vectors.document_vectors(doc)
    assert meaning == vectors.document_meaning(doc)
    assert rows == [[vectors.pack(vectors.embed([framed(unit, s)]))[0] for unit in s.units] for s in doc.sections]


def test_a_stored_row_that_is_not_finite_is_embedded_again() -> None:
    texts = ["Breakfast is paid for."]
    exact = vectors.embed(texts)
    corrupt = vectors.pack(exact)[0][:-4] + np.array([np.nan], dtype=np.float32).tobytes()
    assert vectors.Remembered().embed_stored(texts, [corrupt]).tolist() == exact.tolist()


def test_the_cache_record_keeps_each_statements_vector() -> None:
    doc = prepare(parse_document("travel.md", TRAVEL)).document()
    again = decode_document(encode_document(doc))
    assert [u.vector for s in again.sections for u in s.units] == [u.vector for s in doc.sections for u in s.units]
    assert all(u.vector for s in again.sections for u in s.units)


@given(st.lists(st.integers(min_value=0, max_value=250), max_size=60))
def test_texts_are_embedded_in_runs_bounded_by_count_and_characters_in_order(lengths: list[int]) -> None:
    texts = ["x" * n for n in lengths]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vectors, "_STATEMENT_BATCH", 7)
        patch.setattr(vectors, "_BATCH_CHARS", 200)
        runs = list(vectors._batches(iter(texts)))
    assert [text for run in runs for text in run] == texts
    for run in runs:
        assert 0 < len(run) <= 7
        assert len(run) == 1 or sum(map(len, run)) <= 200
