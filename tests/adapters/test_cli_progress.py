"""Progress on stderr: silent when short, a line every few seconds when not a terminal, a bar on one."""

from __future__ import annotations

import io

import pytest

from retriever.adapters.cli_progress import Reporter


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_long_first_build_off_a_terminal_says_so_then_prints_a_line_every_few_seconds() -> None:
    stream, clock = io.StringIO(), Clock()
    report = Reporter(stream, bar=False, clock=clock)
    for done, at in [(0, 0.0), (500, 0.3), (1_000, 0.6), (4_000, 2.0), (6_000, 5.7), (8_000, 9.0), (10_000, 11.6)]:
        clock.now = 100.0 + at
        report("indexing", done, 10_000)
    clock.now += 0.2
    report("saving", 0, 1)
    clock.now += 0.8
    report("saving", 1, 1)
    assert stream.getvalue().splitlines() == [
        "building the index for the first time (10,000 files)…",
        "indexing: 6,000/10,000 files, 6 s",
        "indexing: 10,000/10,000 files, 12 s",
        "saving: done, 1 s",
    ]


def test_a_short_operation_prints_nothing() -> None:
    stream, clock = io.StringIO(), Clock()
    report = Reporter(stream, bar=False, clock=clock)
    for done in range(4):
        clock.now += 0.1
        report("refreshing", done, 3)
    assert stream.getvalue() == ""


def test_a_refresh_of_many_files_is_reported_without_the_first_build_note() -> None:
    stream, clock = io.StringIO(), Clock()
    report = Reporter(stream, bar=False, clock=clock)
    report("refreshing", 0, 2_000)
    clock.now += 7.0
    report("refreshing", 1_200, 2_000)
    assert stream.getvalue() == "refreshing: 1,200/2,000 changed files, 7 s\n"


def test_on_a_terminal_a_bar_goes_to_stderr_and_nothing_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    stream, clock = io.StringIO(), Clock()
    report = Reporter(stream, bar=True, clock=clock)
    report("indexing", 0, 100)
    clock.now += 1.0
    report("indexing", 50, 100)
    assert report._progress is not None  # the bar is up
    report("indexing", 100, 100)
    assert report._progress is None  # and down again once the phase ends
    assert stream.getvalue().startswith("building the index for the first time (100 files)…\n")
    assert capsys.readouterr().out == ""


def test_a_first_build_of_one_file_says_one_file() -> None:
    stream, clock = io.StringIO(), Clock()
    report = Reporter(stream, bar=False, clock=clock)
    report("indexing", 0, 1)
    clock.now += 1.0
    report("indexing", 1, 1)
    assert stream.getvalue().startswith("building the index for the first time (1 file)…\n")
