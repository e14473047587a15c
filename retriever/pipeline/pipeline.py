"""The order of the stages, written down once, and the loop that runs them under a deadline.

    prompt ─► validate ─► triage ─► target ─► extract ─► score ─► assemble ─► report

Each stage is ``run(state, ctx) -> state``: pure over the ``Run`` it is given, reading the
memory and settings from ``ctx``.  The deadline is checked between stages and inside the
stages that loop, so an over-long retrieval ends with ``retrieval_timeout``.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from retriever.pipeline import assemble, extract, report, score, target, triage, validate
from retriever.pipeline.context import Context, Run
from retriever.pipeline.results import Request

Stage = Callable[[Run, Context], Run]

STAGES: tuple[tuple[str, Stage], ...] = (
    ("validate", validate.run),
    ("triage", triage.run),
    ("target", target.run),
    ("extract", extract.run),
    ("score", score.run),
    ("assemble", assemble.run),
    ("report", report.run),
)


def new_run(arguments: Mapping[str, Any], started: float | None = None, request: Request | None = None) -> Run:
    """A run for tool ``arguments``; ``request`` when they were validated already (the validate stage keeps it)."""
    return Run(
        arguments=arguments,
        request_id=str(uuid.uuid4()),
        started=time.monotonic() if started is None else started,
        request=request,
    )


def execute(state: Run, ctx: Context, stages: tuple[tuple[str, Stage], ...] = STAGES) -> Run:
    """Run every stage in order; raises ``RetrieverError`` (invalid arguments, timeout)."""
    for name, stage in stages:
        ctx.check_deadline()
        began = time.perf_counter()
        state = stage(state, ctx)
        timings = {**state.timings_ms, name: (time.perf_counter() - began) * 1000}
        state = dataclasses.replace(state, timings_ms=timings)
    return state
