"""``caches``: a root's cache opens whatever its name; ``describe`` of a hostile root.json says why, never crashes."""

from __future__ import annotations

import json
import math
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.config import Settings
from retriever.memory.caches import CacheEntry, describe, open_cache, select

NOW = time.time()


@pytest.mark.parametrize("name", ["a" * 250, "é" * 127])
def test_the_cache_of_a_root_with_a_long_name_opens(tmp_path: Path, name: str) -> None:
    root = tmp_path / name
    root.mkdir()
    cache, warnings = open_cache(Settings.from_env(), root)  # its folder name was over 255 bytes: ENAMETOOLONG
    assert cache is not None and warnings == []
    cache.close()

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=50),
    st.text(alphabet="/a\x00\ud800é", min_size=1, max_size=6000),  # NUL, lone surrogate, over PATH_MAX
)
_json = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3)
)
_roots = st.one_of(_json, st.just("/" + "a" * 5000), st.just("/" + "b" * 300), st.just("relative/path"), st.just("/"))
_times = st.one_of(_json, st.sampled_from([1e300, -1.0, 0, NOW, NOW + 10 * 86400, 10**30, "yesterday", True]))
_records = st.fixed_dictionaries({}, optional={"root": _roots, "last_used": _times, "format": _json})
_contents = st.one_of(
    _records.map(lambda r: json.dumps(r).encode("utf-8", "surrogatepass")),  # NaN/Infinity are written as such
    _json.map(lambda v: json.dumps(v).encode("utf-8", "surrogatepass")),
    st.binary(max_size=200),
    st.integers(min_value=1, max_value=100_000).map(lambda n: b"[" * n + b"]" * n),  # nested past the recursion limit
    st.just(b"{" + b" " * 70_000 + b"}"),  # over the size bound
)


@settings(max_examples=300, deadline=None)
@given(_contents)
def test_describe_never_raises_on_a_hostile_root_json_and_says_why_it_is_not_used(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as home:
        folder = Path(home) / "memory-0123456789abcdef"
        folder.mkdir()
        (folder / "root.json").write_bytes(content)

        entry = describe(folder)

    assert math.isfinite(entry.last_used) and entry.last_used <= time.time() + 86400
    time.localtime(entry.last_used)  # `cache list` can show it
    json.dumps(entry.to_dict(), allow_nan=False)  # `cache list --json` writes valid JSON
    assert entry.root is None or (entry.root.is_absolute() and len(os.fsencode(entry.root)) <= 4096)
    assert entry.root_exists is None if entry.root is None else entry.root_exists in (True, False, None)
    assert entry.problem is None or len(entry.problem) < 1000
    if entry.root is None:  # anything but the old cache's missing root.json says why
        assert entry.problem is not None


def _entry(tmp_path: Path, content: Any) -> Any:
    folder = tmp_path / "cache"
    folder.mkdir()
    raw = content if isinstance(content, bytes) else json.dumps(content).encode()
    (folder / "root.json").write_bytes(raw)
    return describe(folder)


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ({"root": "/tmp/a", "last_used": 1e300}, "root.json's last_used 1e+300 is not a time"),
        ({"root": "/tmp/a", "last_used": math.nan}, "root.json's last_used NaN is not a time"),
        ({"root": "/tmp/a", "last_used": -5}, "root.json's last_used -5 is not a time"),
        ({"root": "/tmp/a", "last_used": "yesterday"}, "root.json's last_used 'yesterday' is not a time"),
        ({"root": "/" + "a" * 5000, "last_used": NOW}, "root.json's root '/aaaa"),
        ({"root": 42, "last_used": NOW}, "root.json's root 42 is not a folder's absolute path"),
        ({"root": "memory", "last_used": NOW}, "root.json's root 'memory' is not a folder's absolute path"),
        (b'{"root": "/tmp/a", ', "root.json is unreadable (Expecting"),
        (b"[1, 2]", "root.json holds a JSON array, not an object"),
    ],
)
def test_a_malformed_root_json_leaves_the_fact_unknown_and_names_the_bad_value(
    tmp_path: Path, content: Any, said: str
) -> None:
    entry = _entry(tmp_path, content)
    assert entry.problem is not None and said in entry.problem
    assert 0 <= entry.last_used <= time.time()
    if entry.root is None:
        assert entry.root_exists is None and select([entry], missing=True) == []  # unknown is not gone


def test_a_root_that_cannot_be_checked_is_unknown_not_missing(tmp_path: Path) -> None:
    entry = _entry(tmp_path, {"root": "/" + "x" * 300, "last_used": NOW})  # a name past NAME_MAX
    assert entry.root is not None and entry.root_exists is None
    assert entry.problem is not None and "cannot be checked (File name too long)" in entry.problem
    assert select([entry], missing=True) == []


def test_a_well_formed_root_json_has_no_problem_and_a_missing_one_is_an_old_cache(tmp_path: Path) -> None:
    entry = _entry(tmp_path, {"root": str(tmp_path), "last_used": NOW, "format": 20})
    assert (entry.root, entry.root_exists, entry.last_used, entry.problem) == (tmp_path, True, NOW, None)
    (tmp_path / "cache" / "root.json").unlink()
    old = describe(tmp_path / "cache")
    assert (old.root, old.root_exists, old.problem) == (None, None, None)


def test_a_root_json_that_is_a_fifo_is_refused_without_waiting(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    os.mkfifo(folder / "root.json")
    described: list[CacheEntry] = []
    # In a thread of its own: a read that waits for a writer would hang the suite, not fail this test.
    reader = threading.Thread(target=lambda: described.append(describe(folder)), daemon=True)
    reader.start()
    reader.join(timeout=30)
    assert described, "describe waited on a FIFO"
    assert described[0].root is None and described[0].problem == "root.json is unreadable (not a regular file)"
