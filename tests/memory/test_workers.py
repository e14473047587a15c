"""Work spread over worker interpreters: results in order, really elsewhere, and a dead worker is no error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from retriever.memory import workers


def _self() -> str:
    return os.readlink("/proc/self")  # the pid of the process that runs it


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers for a handful of items, a few per batch, so a short test crosses many batches."""
    monkeypatch.setattr(workers, "PARALLEL_FROM", 1)
    monkeypatch.setattr(workers, "BATCH", 3)


@pytest.mark.usefixtures("small_batches")
def test_results_come_back_in_order_from_worker_processes() -> None:
    items = list(range(-100, 100))
    assert list(workers.ordered(abs, items, 2)) == [abs(i) for i in items]

    pids = set(workers.ordered(os.readlink, ["/proc/self"] * 60, 2))
    assert len(pids) == 2 and _self() not in pids  # two interpreters, neither of them this one


def test_a_few_items_or_one_worker_run_in_this_process() -> None:
    assert set(workers.ordered(os.readlink, ["/proc/self"] * 5, 2)) == {_self()}
    assert set(workers.ordered(os.readlink, ["/proc/self"] * (workers.PARALLEL_FROM + 1), 1)) == {_self()}


@pytest.mark.usefixtures("small_batches")
def test_a_worker_that_dies_is_not_an_error_its_batches_run_here(monkeypatch: pytest.MonkeyPatch) -> None:
    class Dying(workers._Worker):
        def receive(self) -> list[object] | None:
            self.process.kill()  # killed from outside, as the OOM killer would
            self.process.wait()
            return super().receive()

    monkeypatch.setattr(workers, "_Worker", Dying)
    pids = list(workers.ordered(os.readlink, ["/proc/self"] * 90, 2))
    assert len(pids) == 90
    assert pids[-1] == _self()  # the rest ran here, in order


@pytest.mark.usefixtures("small_batches")
def test_closing_early_stops_the_workers() -> None:
    results = workers.ordered(abs, list(range(300)), 2)
    assert next(results) == 0
    frame = results.gi_frame
    assert frame is not None
    pool = frame.f_locals["pool"]
    results.close()
    assert all(worker.process.poll() is not None for worker in pool)


@pytest.mark.usefixtures("small_batches")
def test_without_an_interpreter_to_start_the_work_runs_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers.sys, "executable", "/nonexistent/python")
    assert set(workers.ordered(os.readlink, ["/proc/self"] * 20, 2)) == {_self()}


@pytest.mark.usefixtures("small_batches")
def test_a_module_in_the_working_folder_never_runs_in_a_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The working folder is often the memory tree: a ``pickle.py`` committed there is data, not code."""
    marker = tmp_path / "ran"
    (tmp_path / "pickle.py").write_text(f"open({str(marker)!r}, 'w').write('shadowed')\nraise SystemExit(3)\n")
    monkeypatch.chdir(tmp_path)
    pids = set(workers.ordered(os.readlink, ["/proc/self"] * 30, 2))
    assert not marker.exists()
    assert _self() not in pids  # the batches really ran in the workers, not here after they died
