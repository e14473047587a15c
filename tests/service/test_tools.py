"""The tools as ``tools/list`` describes them: seed 000's and seed 002's words, schemas and limits."""

from __future__ import annotations

import re

import jsonschema
import pytest
from conftest import REPO

from retriever.pipeline.validate import MAX_SESSION_ID_CHARS
from retriever.service.tools import (
    GET_MEMORY_DESCRIPTION,
    GET_MEMORY_OUTPUT_SCHEMA,
    INPUT_SCHEMA,
    tool_definitions,
)

SEED_002 = REPO.parent / "shared" / "seeds" / "002_5a9688079082d6d8.txt"


def test_get_memory_registers_seed_002s_output_schema() -> None:
    get_memory = next(t for t in tool_definitions() if t["name"] == "get_memory")
    assert get_memory["outputSchema"] == GET_MEMORY_OUTPUT_SCHEMA
    jsonschema.Draft7Validator.check_schema(GET_MEMORY_OUTPUT_SCHEMA)
    assert GET_MEMORY_OUTPUT_SCHEMA["required"] == ["text", "facts", "episodes", "decisions", "floor"]


def test_a_get_memory_result_without_a_count_fails_the_registered_schema() -> None:
    good = {"text": "", "facts": 0, "episodes": 0, "decisions": 0, "floor": True, "business": None}
    jsonschema.validate(good, GET_MEMORY_OUTPUT_SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({k: v for k, v in good.items() if k != "facts"}, GET_MEMORY_OUTPUT_SCHEMA)


def test_the_session_id_limit_the_validator_enforces_is_advertised() -> None:
    assert INPUT_SCHEMA["properties"]["session_id"]["maxLength"] == MAX_SESSION_ID_CHARS


def test_get_memorys_description_is_seed_002s_word_for_word() -> None:
    if not SEED_002.is_file():
        pytest.skip("../shared/seeds is not beside this clone")
    text = SEED_002.read_text(encoding="utf-8")
    seed = re.search(r"^The organization's assistant memory.*$", text, re.M)
    assert seed is not None
    assert seed.group(0).replace("agent\\_ id", "agent_ id") == GET_MEMORY_DESCRIPTION
