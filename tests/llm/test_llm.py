"""The LLM seam against a scripted OpenAI-compatible server: real HTTP, the real ``openai`` client."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import free_port, wait_until
from llm_server import Reply, ScriptedLLM, answer, serve_for, stage_of

from retriever import Settings
from retriever.llm.client import LLMClient
from retriever.llm.prompts import SummaryAnswer
from retriever.llm.replies import LLMFailure


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedLLM]:
    yield from serve_for(monkeypatch)


def _client(**settings: Any) -> LLMClient:
    return LLMClient(Settings(llm_model="test-model", **settings))


def test_a_structured_answer_is_requested_with_the_schema_and_validated(llm: ScriptedLLM) -> None:
    llm.script = lambda request: answer({"summary": "Olena owns billing."})
    result, usage = _client().complete(SummaryAnswer, "system text", "user text", timeout=5, max_tokens=300)
    assert result == SummaryAnswer(summary="Olena owns billing.")
    assert (usage.calls, usage.tokens_in, usage.tokens_out, usage.cached) == (1, 100, 20, False)
    sent = llm.requests[0]
    assert sent["model"] == "test-model"
    assert sent["temperature"] == 0 and sent["max_tokens"] == 300
    assert sent["messages"] == [{"role": "system", "content": "system text"}, {"role": "user", "content": "user text"}]
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["name"] == "SummaryAnswer"
    assert sent["response_format"]["json_schema"]["schema"]["required"] == ["summary"]


def test_a_server_that_only_accepts_json_object_is_detected_and_remembered(llm: ScriptedLLM) -> None:
    def json_object_only(request: dict[str, Any]) -> Reply:
        if request["response_format"]["type"] == "json_schema":
            return Reply(status=500)  # as llama.cpp's Python server does
        return answer({"summary": "ok"})

    llm.script = json_object_only
    client = _client()
    _, first = client.complete(SummaryAnswer, "s", "u1", timeout=5)
    _, second = client.complete(SummaryAnswer, "s", "u2", timeout=5)
    assert (first.calls, second.calls) == (2, 1)
    assert [r["response_format"]["type"] for r in llm.requests] == ["json_schema", "json_object", "json_object"]
    fmt = llm.requests[1]["response_format"]
    assert fmt["schema"]["title"] == "SummaryAnswer"
    assert "JSON Schema" in llm.requests[1]["messages"][0]["content"]  # the schema is in the prompt too
    assert client.json_mode == "json_object"


def test_a_transient_server_error_on_both_forms_keeps_json_schema_for_later_calls(llm: ScriptedLLM) -> None:
    down = [True]

    def flaky(request: dict[str, Any]) -> Reply:
        return Reply(status=500) if down[0] else answer({"summary": "ok"})

    llm.script = flaky
    client = _client()
    with pytest.raises(LLMFailure):
        client.complete(SummaryAnswer, "s", "u1", timeout=5)
    assert client.json_mode == "auto"  # it had switched to json_object for the rest of the process
    down[0] = False
    client.complete(SummaryAnswer, "s", "u2", timeout=5)
    assert [r["response_format"]["type"] for r in llm.requests] == ["json_schema", "json_object", "json_schema"]


def test_a_clear_refusal_of_json_schema_is_remembered_even_when_no_retry_is_afforded(llm: ScriptedLLM) -> None:
    def json_object_only(request: dict[str, Any]) -> Reply:
        return Reply(status=400) if request["response_format"]["type"] == "json_schema" else answer({"summary": "ok"})

    llm.script = json_object_only
    client = _client()
    with pytest.raises(LLMFailure, match="not retried as json_object"):
        client.complete(SummaryAnswer, "s", "u1", timeout=5, may_retry=False)  # one call left in the budget
    assert client.json_mode == "json_object"  # a 400 says so at once: the next call asks the form it accepts
    client.complete(SummaryAnswer, "s", "u2", timeout=5, may_retry=False)
    assert [r["response_format"]["type"] for r in llm.requests] == ["json_schema", "json_object"]


def test_json_object_mode_can_be_configured_up_front(llm: ScriptedLLM) -> None:
    llm.script = lambda request: answer({"summary": "ok"})
    _client(llm_json_mode="json_object").complete(SummaryAnswer, "s", "u", timeout=5)
    assert [r["response_format"]["type"] for r in llm.requests] == ["json_object"]


def test_an_answer_in_a_code_fence_is_accepted(llm: ScriptedLLM) -> None:
    llm.script = lambda request: Reply(content='```json\n{"summary": "fenced"}\n```')
    assert _client().complete(SummaryAnswer, "s", "u", timeout=5)[0].summary == "fenced"


UNREADABLE = "unreadable response from the LLM endpoint (JSONDecodeError)"  # a 200 whose JSON body is empty or cut


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply(content="not json at all"), "malformed JSON answer (JSONDecodeError)"),
        (Reply(content='{"wrong": 1}'), "malformed JSON answer (ValidationError)"),
        (Reply(status=429), "rate limited (HTTP 429); the endpoint asks for fewer calls"),
        (Reply(status=503), "server error (HTTP 503)"),
        (Reply(content=None), "empty answer"),
        (Reply(raw=b""), UNREADABLE),
        (Reply(raw=b'{"choices":[{"message":{"content":"abc'), UNREADABLE),  # a body cut off mid-way
        (Reply(content='{"summary": "cut', finish_reason="length"), "answer cut off at the token limit"),
        (
            Reply(
                body={
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": None, "refusal": "I can't."},
                        }
                    ]
                }
            ),
            "the model refused",
        ),
    ],
)
def test_failures_are_named(llm: ScriptedLLM, reply: Reply, reason: str) -> None:
    llm.script = lambda request: reply
    with pytest.raises(LLMFailure) as caught:
        _client(llm_json_mode="json_object").complete(SummaryAnswer, "s", "u", timeout=5)
    assert caught.value.reason == reason


def test_a_slow_answer_past_the_timeout_fails_fast(llm: ScriptedLLM) -> None:
    llm.script = lambda request: Reply(content=json.dumps({"summary": "late"}), delay=2.0)
    with pytest.raises(LLMFailure, match=r"timed out after 0\.3 s"):
        _client().complete(SummaryAnswer, "s", "u", timeout=0.3)


def test_an_unreachable_endpoint_is_a_failure_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    with pytest.raises(LLMFailure, match="cannot reach the LLM endpoint"):
        _client().complete(SummaryAnswer, "s", "u", timeout=2)


def test_identical_requests_are_answered_from_the_cache(llm: ScriptedLLM) -> None:
    llm.script = lambda request: answer({"summary": "once"})
    client = _client()
    client.complete(SummaryAnswer, "s", "same", timeout=5)
    result, usage = client.complete(SummaryAnswer, "s", "same", timeout=5)
    assert result.summary == "once" and usage.cached and usage.calls == 0
    client.complete(SummaryAnswer, "s", "different", timeout=5)
    assert len(llm.requests) == 2
    assert [stage_of(r) for r in llm.requests] == ["SummaryAnswer", "SummaryAnswer"]


@pytest.mark.parametrize(
    "reply",
    [
        Reply(content='{"summary": "cut', finish_reason="length"),
        Reply(content="not json at all"),
        Reply(content='{"wrong": 1}'),
    ],
)
def test_an_unusable_answer_still_counts_the_tokens_it_cost(llm: ScriptedLLM, reply: Reply) -> None:
    llm.script = lambda request: reply
    with pytest.raises(LLMFailure) as caught:
        _client(llm_json_mode="json_object").complete(SummaryAnswer, "s", "u", timeout=5)
    assert (caught.value.calls, caught.value.tokens_in, caught.value.tokens_out) == (1, 100, 20)


def test_a_cut_off_answer_after_a_rejected_json_schema_counts_both_calls_and_its_tokens(llm: ScriptedLLM) -> None:
    def json_object_only(request: dict[str, Any]) -> Reply:
        if request["response_format"]["type"] == "json_schema":
            return Reply(status=500)
        return Reply(content='{"summary": "cut', finish_reason="length")

    llm.script = json_object_only
    with pytest.raises(LLMFailure) as caught:
        _client().complete(SummaryAnswer, "s", "u", timeout=5)
    assert (caught.value.calls, caught.value.tokens_in, caught.value.tokens_out) == (2, 100, 20)


def test_a_timed_out_call_leaves_a_local_endpoint_busy_until_a_probe_finds_it_idle(llm: ScriptedLLM) -> None:
    llm.serial = True
    release = threading.Event()
    llm.script = lambda request: Reply(content=json.dumps({"summary": "late"}), hold=release)
    client = _client(llm_endpoint="local")
    try:
        with pytest.raises(LLMFailure) as caught:
            client.complete(SummaryAnswer, "s", "u", timeout=0.3)
        assert caught.value.timed_out
        assert not client.ready(), "the server is still working on the abandoned call"
    finally:
        release.set()
    llm.wait_idle()
    assert client.ready()
    assert client.ready() and llm.probes == 2, "once idle, no more probes"


def test_a_remote_endpoint_is_not_probed_after_a_timeout(llm: ScriptedLLM) -> None:
    llm.script = lambda request: Reply(content=json.dumps({"summary": "late"}), delay=1.0)
    client = _client(llm_endpoint="remote")
    with pytest.raises(LLMFailure, match="timed out"):
        client.complete(SummaryAnswer, "s", "u", timeout=0.2)
    assert client.ready() and llm.probes == 0


def test_a_remote_endpoint_rests_after_two_timeouts_in_a_row_and_an_answer_after_the_rest_ends_it(
    llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    from retriever.llm import client as client_module

    monkeypatch.setattr(client_module, "REST_SECONDS", 2.0)  # the looks right after a timeout are microseconds apart
    llm.script = lambda request: Reply(content=json.dumps({"summary": "late"}), delay=1.0)
    client = _client(llm_endpoint="remote", llm_timeout_seconds=0.2)
    with pytest.raises(LLMFailure, match="timed out"):
        client.complete(SummaryAnswer, "s", "u", timeout=0.1)  # cut short by the caller's deadline: not counted
    for _ in range(2):
        assert not client.resting()
        with pytest.raises(LLMFailure, match="timed out"):
            client.complete(SummaryAnswer, "s", "u", timeout=0.2)
    assert client.resting().startswith("the endpoint let 2 calls in a row time out; none for another")
    sent = len(llm.requests)
    with pytest.raises(LLMFailure, match=r"^skipped: the endpoint let 2 calls") as resting:
        client.complete(SummaryAnswer, "s", "u1", timeout=0.2)
    assert resting.value.calls == 0 and len(llm.requests) == sent  # refused here: nothing went out
    assert wait_until(lambda: not client.resting(), timeout=10)
    release, answers = threading.Event(), []
    llm.script = lambda request: Reply(content=json.dumps({"summary": "back"}), hold=release)
    trial = threading.Thread(target=lambda: answers.append(client.complete(SummaryAnswer, "s", "u2", timeout=10)))
    trial.start()  # the first call after the rest tries the endpoint…
    assert wait_until(lambda: len(llm.requests) > sent, timeout=10)
    assert client.resting()  # …and the others rest on meanwhile
    with pytest.raises(LLMFailure, match=r"^skipped: the endpoint let 2 calls"):
        client.complete(SummaryAnswer, "s", "u3", timeout=0.2)
    release.set()
    trial.join(10)
    assert answers and answers[0][0].summary == "back"
    assert not client.resting()  # the answer ended the rest


PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


def test_a_proxy_named_by_the_environment_is_used_and_the_calls_timeout_holds_through_it(
    llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.setenv("HTTP_PROXY", llm.url.removesuffix("/v1"))  # the scripted server answers as a proxy would
    monkeypatch.setenv("OPENAI_BASE_URL", "http://llm.invalid/v1")  # a name reached only through the proxy
    llm.script = lambda request: answer({"summary": "proxied"})
    client = _client()
    assert client.complete(SummaryAnswer, "s", "u1", timeout=5)[0].summary == "proxied"
    llm.script = lambda request: Reply(content=json.dumps({"summary": "late"}), trickle=0.25, trickle_head=True)
    started = time.monotonic()
    with pytest.raises(LLMFailure, match=r"timed out after 0\.5 s"):
        client.complete(SummaryAnswer, "s", "u2", timeout=0.5)
    assert time.monotonic() - started < 2.5


def test_the_log_says_once_when_calls_start_failing_and_once_when_one_is_answered_again(
    llm: ScriptedLLM, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    client = _client(llm_json_mode="json_object")
    llm.script = lambda request: Reply(status=503)
    with caplog.at_level(logging.WARNING, logger="retriever.llm.client"):
        for user in ("a", "b", "c"):
            with pytest.raises(LLMFailure):
                client.complete(SummaryAnswer, "s", user, timeout=5)
        llm.script = lambda request: Reply(content=json.dumps({"summary": "ok"}))
        client.complete(SummaryAnswer, "s", "d", timeout=5)
        client.complete(SummaryAnswer, "s", "e", timeout=5)
    assert [r.getMessage().split(" (")[0].split(" answers")[0] for r in caplog.records] == [
        f"LLM endpoint {client.url} failing",
        f"LLM endpoint {client.url}",
    ]
    first = caplog.records[0].getMessage()
    assert first.endswith("(server error (HTTP 503)): retrievals answer offline until it answers")
    assert caplog.records[1].getMessage().endswith("answers again after 3 failed call(s)")


def test_a_rejected_format_or_a_call_the_callers_deadline_cut_short_logs_no_failure(
    llm: ScriptedLLM, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    client = _client(llm_json_mode="auto")
    llm.script = lambda request: Reply(status=400) if "json_schema" in json.dumps(request) else Reply(
        content=json.dumps({"summary": "ok"})
    )
    with caplog.at_level(logging.WARNING, logger="retriever.llm.client"):
        client.complete(SummaryAnswer, "s", "u", timeout=5)  # json_schema refused, json_object answered
        llm.script = lambda request: Reply(content=json.dumps({"summary": "late"}), delay=2.0)
        with pytest.raises(LLMFailure):
            client.complete(SummaryAnswer, "s", "v", timeout=0.3)  # the caller's deadline, not the endpoint's 20 s
    assert caplog.records == []  # each had logged "failing", then "answers again": two lines a question
