"""Calls sized to the endpoint's speed, and a local server that is busy left alone (scripted server)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import COMPANY_CONTEXT, TreeFactory
from fixtures import ACME
from hypothesis import given, settings
from hypothesis import strategies as st
from llm_script import QUESTION, first_sentence, guided_retriever, llm_diagnostics, smart
from llm_server import Reply, ScriptedLLM, answer, outline_ids, section_blocks, serve_for, stage_of

from retriever import Settings
from retriever.llm.pace import (
    DAY,
    LOCAL_CHARS_PER_TOKEN,
    LOCAL_OUTPUT_TPS,
    LOCAL_PROMPT_TPS,
    OUTPUT_SHARE,
    SAFETY,
    Pace,
    is_loopback,
    pace_of,
    seconds_for,
    size_call,
    timeout_for,
)

FAST = {"llm_prompt_tokens_per_second": 1e6, "llm_output_tokens_per_second": 1e6}  # sizes never bite
HELIX = "Who owns the Helix EU data residency project?"  # asked of the bundled company_context


def generic(request: dict[str, Any]) -> Reply:
    """A model for any memory: picks the first six outline entries, quotes first sentences, echoes a fact."""
    stage = stage_of(request)
    if stage == "TargetAnswer":
        return answer({"sections": [{"id": i, "relevance_reason": "listed"} for i in list(outline_ids(request))[:6]]})
    if stage == "ExtractAnswer":
        blocks = section_blocks(request).items()
        return answer({"facts": [{"statement": first_sentence(t), "source": i, "relevance": 0.9} for i, t in blocks]})
    facts = re.findall(r"^- (.+)$", request["messages"][1]["content"], re.M)
    return answer({"summary": facts[0] if facts else "The facts do not say."})


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedLLM]:
    for server in serve_for(monkeypatch):
        server.script = smart
        server.serial = True  # one call at a time, as llama-cpp-python's server
        yield server


@pytest.fixture
def root(make_tree: TreeFactory) -> Path:
    return make_tree(ACME)


def _prompt_chars(request: dict[str, Any]) -> int:
    """What a request's prompt holds, the schema included (it rides in the prompt in json_object mode)."""
    schema = json.dumps(request["response_format"].get("schema") or {})
    return sum(len(m["content"]) for m in request["messages"]) + len(schema)


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://127.8.9.10/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://[::1]:8000/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.5:8000/v1", False),
        ("http://gpu-box.internal/v1", False),
        (None, False),
    ],
)
def test_a_loopback_endpoint_is_local_unless_declared_otherwise(url: str | None, local: bool) -> None:
    assert is_loopback(url) is local
    assert pace_of(Settings(), url).serial is local
    assert pace_of(Settings(llm_endpoint="remote"), url).serial is False
    assert pace_of(Settings(llm_endpoint="local"), url).serial is True


def test_a_local_endpoint_has_the_measured_defaults_unless_its_speed_is_declared() -> None:
    default = pace_of(Settings(llm_endpoint="local"), None)
    assert (default.prompt_tps, default.output_tps) == (LOCAL_PROMPT_TPS, LOCAL_OUTPUT_TPS)
    declared = pace_of(Settings(llm_endpoint="local", llm_prompt_tokens_per_second=40), None)
    assert (declared.prompt_tps, declared.output_tps) == (40, LOCAL_OUTPUT_TPS)
    remote = pace_of(Settings(llm_endpoint="remote"), None)
    assert not remote.paced and size_call(remote, 20, 800).max_tokens == 800


@settings(max_examples=200, deadline=None)
@given(
    prompt_tps=st.floats(1, 1e5),
    output_tps=st.floats(1, 1e4),
    seconds=st.floats(0.5, 300),
    max_tokens=st.integers(1, 4000),
    chars_per_token=st.floats(2, 5),
)
def test_a_sized_call_finishes_within_its_share_of_the_time(
    prompt_tps: float, output_tps: float, seconds: float, max_tokens: int, chars_per_token: float
) -> None:
    pace = Pace(prompt_tps, output_tps, chars_per_token, 0.5, True)
    call = size_call(pace, seconds, max_tokens)
    assert 0 <= call.max_tokens <= max_tokens
    assert call.max_tokens / output_tps <= seconds * OUTPUT_SHARE + 1e-9
    if call.prompt_chars > 0:
        assert seconds_for(pace, call.prompt_chars, call.max_tokens) <= seconds * SAFETY + 1e-6


def test_prompts_and_answers_are_sized_to_a_local_endpoints_declared_speed(llm: ScriptedLLM) -> None:
    llm.script = generic
    slow = {"llm_prompt_tokens_per_second": 150.0, "llm_output_tokens_per_second": 15.0}
    result = guided_retriever(COMPANY_CONTEXT, llm_endpoint="local", **slow).retrieve(HELIX)
    assert llm_diagnostics(result)["stages_guided"] == ["target", "extract", "summary"]
    call = size_call(pace_of(Settings(llm_endpoint="local", **slow), None), 20.0, 800)
    for request in llm.requests:
        assert request["max_tokens"] <= 15.0 * 20.0 * OUTPUT_SHARE
        assert _prompt_chars(request) <= call.prompt_chars + 100  # + the schema's JSON spacing
    target, extract = llm.requests[0], llm.requests[1]
    assert "(at most 3)" in target["messages"][0]["content"]  # as many picks as ~120 tokens hold
    assert "Give at most 2 facts" in extract["messages"][0]["content"]
    llm.requests.clear()
    guided_retriever(COMPANY_CONTEXT, llm_endpoint="remote").retrieve(HELIX)
    assert len(outline_ids(llm.requests[0])) > 2 * len(outline_ids(target)), "unpaced, more of the outline is sent"


def test_a_prompt_a_local_endpoint_cannot_read_in_time_is_not_sent(root: Path, llm: ScriptedLLM) -> None:
    result = guided_retriever(root, llm_endpoint="local", llm_prompt_tokens_per_second=5.0).retrieve(QUESTION)
    assert llm.requests == []
    fallbacks = llm_diagnostics(result)["fallbacks"]
    assert [f["stage"] for f in fallbacks] == ["target", "extract", "summary"]
    assert all(
        f["reason"].startswith("prompt of ~")
        and "cannot be read in 20.0 s at the endpoint's ~5 tokens/s" in f["reason"]
        for f in fallbacks
    )
    assert result.structured["diagnostics"]["mode"] == "offline" and result.facts


def test_a_prompt_that_does_not_fit_names_the_timeout_that_would_and_that_timeout_lets_it_through(
    root: Path, llm: ScriptedLLM
) -> None:
    llm.script = generic
    slow = {"llm_endpoint": "local", "llm_prompt_tokens_per_second": 20.0, "llm_output_tokens_per_second": 10.0}
    result = guided_retriever(root, **slow).retrieve(QUESTION)
    assert llm.requests == []
    first = llm_diagnostics(result)["fallbacks"][0]
    found = re.search(r"\(a timeout of (\d+) s would fit it: RETRIEVER_LLM_TIMEOUT_SECONDS\)$", first["reason"])
    assert first["stage"] == "target" and found, first["reason"]
    wanted = int(found.group(1))
    guided_retriever(root, llm_timeout_seconds=wanted, **slow).retrieve(QUESTION)
    assert [stage_of(r) for r in llm.requests][:1] == ["TargetAnswer"]  # the target call was sent


def test_a_prompt_cut_by_the_deadline_names_no_timeout(root: Path, llm: ScriptedLLM) -> None:
    slow = {"llm_endpoint": "local", "llm_prompt_tokens_per_second": 20.0, "deadline_seconds": 10.0}
    result = guided_retriever(root, llm_timeout_seconds=60.0, **slow).retrieve(QUESTION)
    reasons = [f["reason"] for f in llm_diagnostics(result)["fallbacks"]]
    assert reasons and all("RETRIEVER_LLM_TIMEOUT_SECONDS" not in reason for reason in reasons)


@settings(max_examples=200, deadline=None)
@given(
    prompt_tps=st.floats(1, 1e4),
    output_tps=st.floats(1, 1e3),
    prompt_chars=st.integers(1, 400_000),
    max_tokens=st.integers(1, 4000),
)
def test_timeout_for_is_the_fewest_whole_seconds_that_fit(
    prompt_tps: float, output_tps: float, prompt_chars: int, max_tokens: int
) -> None:
    pace = Pace(prompt_tps, output_tps, 3.0, 0.5, True)
    wanted = timeout_for(pace, prompt_chars, max_tokens)
    if wanted is None:
        assert size_call(pace, DAY, max_tokens).prompt_chars < prompt_chars
        return
    assert size_call(pace, wanted, max_tokens).prompt_chars >= prompt_chars
    assert wanted == 1 or size_call(pace, wanted - 1, max_tokens).prompt_chars < prompt_chars


def test_a_slow_local_server_answers_every_stage_within_the_timeout(llm: ScriptedLLM) -> None:
    """The issue's case, scaled down 20 times: the server reads 2,000 prompt tokens a second (a CPU
    server reads ~120), and each call has 2 s (the default is 20).  Unsized, the outline and the
    sections take longer than that to read."""
    speed = 2000.0

    def reading(request: dict[str, Any]) -> Reply:
        reply = generic(request)
        reply.delay = _prompt_chars(request) / LOCAL_CHARS_PER_TOKEN / speed
        return reply

    llm.script = reading
    declared = {"llm_prompt_tokens_per_second": speed, "llm_output_tokens_per_second": 400.0}
    result = guided_retriever(COMPANY_CONTEXT, llm_timeout_seconds=2.0, **declared).retrieve(HELIX)
    assert llm_diagnostics(result)["fallbacks"] == []
    assert llm_diagnostics(result)["stages_guided"] == ["target", "extract", "summary"]


def test_after_a_timeout_on_a_local_endpoint_the_later_stages_are_skipped(root: Path, llm: ScriptedLLM) -> None:
    release = threading.Event()
    llm.script = lambda request: (
        Reply(content='{"sections": []}', hold=release) if stage_of(request) == "TargetAnswer" else smart(request)
    )
    try:
        result = guided_retriever(root, llm_timeout_seconds=1.0, **FAST).retrieve(QUESTION)
    finally:
        release.set()
    diagnostics = llm_diagnostics(result)
    assert llm.stages() == ["TargetAnswer"], "nothing more was sent to the busy server"
    assert diagnostics["stages_guided"] == []
    assert diagnostics["fallbacks"] == [
        {"stage": "target", "reason": "timed out after 1.0 s"},
        {"stage": "extract", "reason": "skipped: the endpoint is still busy with the target call that timed out"},
        {"stage": "summary", "reason": "skipped: the endpoint is still busy with the target call that timed out"},
    ]
    assert result.structured["diagnostics"]["mode"] == "offline" and result.facts
    assert "Mode: offline; the LLM (test-model) was not used: target (timed out after 1.0 s)" in result.text


def test_the_next_retrieval_leaves_a_busy_local_server_alone_until_it_is_idle(root: Path, llm: ScriptedLLM) -> None:
    release = threading.Event()
    first = True

    def stuck_once(request: dict[str, Any]) -> Reply:
        nonlocal first
        if first:
            first = False
            return Reply(content='{"sections": []}', hold=release)
        return smart(request)

    llm.script = stuck_once
    retriever = guided_retriever(root, llm_timeout_seconds=1.0, **FAST)
    try:
        retriever.retrieve(QUESTION)
        busy = retriever.retrieve("Who approves travel bookings?")
    finally:
        release.set()
    assert len(llm.requests) == 1 and llm.probes == 1
    reasons = {f["reason"] for f in llm_diagnostics(busy)["fallbacks"]}
    assert reasons == {"skipped: the endpoint is still busy with an earlier call that timed out"}
    llm.wait_idle()
    later = retriever.retrieve(QUESTION)
    assert llm_diagnostics(later)["stages_guided"] == ["target", "extract", "summary"]
    assert llm.probes == 2
