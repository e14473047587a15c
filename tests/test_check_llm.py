"""scripts/check_llm.py: LLM mode checked against whatever endpoint is configured (here, a scripted one)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import REPO, TreeFactory, free_port
from fixtures import ACME
from llm_script import QUESTION, smart
from llm_server import Reply, ScriptedLLM, serve, stage_of

READS, WRITES = 10_000.0, 1_000.0  # the scripted endpoint's tokens per second


def measurable(request: dict[str, Any]) -> Reply:
    """A model whose time and token counts follow its prompt, as a real server's do; stages answer sensibly."""
    if stage_of(request):
        return smart(request)
    tokens = sum(len(m["content"]) for m in request["messages"]) // 3
    written = min(int(request["max_tokens"]), 120)
    return Reply(
        content='{"words": []}',
        usage={"prompt_tokens": tokens, "completion_tokens": written, "total_tokens": tokens + written},
        delay=tokens / READS + written / WRITES,
    )


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    for server in serve():
        server.script = measurable
        yield server


def _check(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RETRIEVER_LLM_"))}
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / "check_llm.py"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**environ, **env},
        check=False,
    )


def test_without_a_configured_model_the_check_says_what_to_set(make_tree: TreeFactory) -> None:
    done = _check("--root", str(make_tree(ACME)))
    assert done.returncode == 2
    assert "RETRIEVER_LLM_MODEL is not set" in done.stderr and "OPENAI_BASE_URL" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_absent_endpoint_is_named_with_the_next_step(make_tree: TreeFactory) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    done = _check("--root", str(make_tree(ACME)), RETRIEVER_LLM_MODEL="m", OPENAI_BASE_URL=url)
    assert done.returncode == 1
    assert f"cannot reach the LLM endpoint at {url}" in done.stderr and "start the server" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_check_measures_the_endpoint_and_reports_each_retrieval(make_tree: TreeFactory, llm: ScriptedLLM) -> None:
    root = make_tree(ACME)
    done = _check("--root", str(root), "--question", QUESTION, RETRIEVER_LLM_MODEL="m", OPENAI_BASE_URL=llm.url)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "to declare them: export RETRIEVER_LLM_PROMPT_TOKENS_PER_SECOND=" in out
    reads = float(re.search(r"prompt reading:  ([\d,.]+) tokens/s", out)[1].replace(",", ""))  # type: ignore[index]
    writes = float(re.search(r"answer writing:  ([\d,.]+) tokens/s", out)[1].replace(",", ""))  # type: ignore[index]
    assert READS / 10 < reads < READS * 10 and WRITES / 10 < writes < WRITES * 10, "the right order of magnitude"
    assert "tokenizer:       3.0 characters/token" in out
    assert "endpoint:        local (one call at a time); speeds 100 prompt / 12 answer tokens/s" in out
    assert f"{QUESTION}\n  mode: llm" in out
    assert "stages guided: target, extract, summary" in out
    assert "calls 3, tokens in 300 / out 60" in out


def test_a_model_that_answers_nothing_fails_the_check(make_tree: TreeFactory, llm: ScriptedLLM) -> None:
    llm.script = lambda request: Reply(status=500)
    done = _check("--root", str(make_tree(ACME)), "--no-measure", RETRIEVER_LLM_MODEL="m", OPENAI_BASE_URL=llm.url)
    assert done.returncode == 3
    assert "fallback: target: server error (HTTP 500)" in done.stdout
    assert "check failed: the model answered no call" in done.stderr
    assert "Traceback" not in done.stderr
