"""Stage 1: only ``prompt`` (1–8,000 characters) and ``session_id`` are accepted."""

from __future__ import annotations

import json
from typing import Any

import pytest

from retriever.errors import InvalidArguments
from retriever.pipeline.results import Request
from retriever.pipeline.validate import validate_arguments


def test_prompt_and_session_id_are_accepted_and_stripped() -> None:
    assert validate_arguments({"prompt": "  Who owns billing? ", "session_id": " t-1 "}) == Request(
        "Who owns billing?", "t-1"
    )


def test_session_id_is_optional_and_blank_means_none() -> None:
    assert validate_arguments({"prompt": "billing"}).session_id is None
    assert validate_arguments({"prompt": "billing", "session_id": "  "}).session_id is None


def test_prompt_of_exactly_8000_chars_is_valid() -> None:
    assert len(validate_arguments({"prompt": "x" * 8000}).prompt) == 8000


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "'prompt' is required: describe the company context you need"),
        ({"prompt": ""}, "'prompt' is empty: describe the company context you need"),
        ({"prompt": " \n\t "}, "'prompt' is empty: describe the company context you need"),
        ({"prompt": "x" * 8001}, "'prompt' is 8,001 characters; the limit is 8,000: shorten it"),
        ({"prompt": 42}, "'prompt' must be a string, got integer: send the question as text"),
        ({"prompt": ["a"]}, "'prompt' must be a string, got array: send the question as text"),
        ({"prompt": None}, "'prompt' is required: describe the company context you need"),
        (
            {"prompt": "billing", "session_id": 7},
            "'session_id' must be a string, got integer: send it as text, or omit it",
        ),
        (
            {"prompt": "billing", "session_id": "s" * 5000},
            "'session_id' is 5,000 characters; the limit is 256: send a shorter id",
        ),
        ({"prompt": "billing", "top_k": 3}, "unknown argument 'top_k': only 'prompt' and 'session_id' are accepted"),
        (
            {"prompt": "billing", "b": 1, "a": 2},
            "unknown argument 'a', 'b': only 'prompt' and 'session_id' are accepted",
        ),
        ("billing", "arguments must be an object with 'prompt' and optional 'session_id', got string"),
        (None, "arguments must be an object with 'prompt' and optional 'session_id', got null"),
    ],
)
def test_bad_arguments_are_invalid_arguments_naming_the_bad_value(arguments: Any, message: str) -> None:
    with pytest.raises(InvalidArguments) as caught:
        validate_arguments(arguments)
    assert caught.value.message == message
    assert caught.value.to_dict() == {"status": "error", "error_code": "invalid_arguments", "error_message": message}


def test_prompt_over_8000_chars_is_invalid_arguments() -> None:
    with pytest.raises(InvalidArguments):
        validate_arguments({"prompt": "é" * 8001})


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"prompt": "x \ud800"},
            "'prompt' holds an unpaired surrogate (U+D800) at character 2; send valid Unicode text",
        ),
        (
            {"prompt": "hi", "session_id": "\udfff"},
            "'session_id' holds an unpaired surrogate (U+DFFF) at character 0; send valid Unicode text",
        ),
    ],
)
def test_a_lone_surrogate_is_invalid_arguments_naming_the_argument(arguments: Any, message: str) -> None:
    with pytest.raises(InvalidArguments) as caught:
        validate_arguments(arguments)
    assert caught.value.message == message


def test_a_surrogate_pair_escaped_in_json_is_valid_text() -> None:
    arguments = json.loads('{"prompt": "rocket \\ud83d\\ude80"}')  # JSON joins the pair into one character
    assert validate_arguments(arguments).prompt == "rocket 🚀"


def test_unknown_argument_names_are_quoted_as_a_bounded_prefix() -> None:
    arguments = {"prompt": "billing", **{f"{i:05d}" + "k" * 10_000: i for i in range(1000)}}
    with pytest.raises(InvalidArguments) as caught:
        validate_arguments(arguments)
    message = caught.value.message
    assert len(message) < 600
    assert message.startswith("unknown argument '00000kkkk")
    assert "and 995 more: only 'prompt' and 'session_id' are accepted" in message
