"""The scripted model the LLM tests share, and how they build a retriever that calls it.

``smart`` is a well-behaved model for ``llm_server``'s scripted server: it picks the billing sections, quotes
them and summarises the facts it is given.  Kept here, beside the server, so that any test module can import it
(a test module imported from another one is found only when pytest happened to collect that folder first).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from llm_server import Reply, answer, outline_ids, section_blocks, stage_of

from retriever import Retriever, Settings

QUESTION = "Who owns the billing migration?"


def first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]


def smart(request: dict[str, Any]) -> Reply:
    """A well-behaved model: picks billing sections, quotes them, summarises the facts it is given."""
    stage = stage_of(request)
    if stage == "TriageAnswer":
        return answer(
            {
                "decision": "retrieve",
                "reasoning": "A follow-up about the billing migration.",
                "rewritten_query": "Who owns the billing migration project?",
            }
        )
    if stage == "TargetAnswer":
        ids = outline_ids(request)
        picks = [i for i, path in ids.items() if "Billing Migration" in path][:3]
        return answer(
            {"sections": [{"id": i, "relevance_reason": f"Billing migration: {ids[i].strip()}."} for i in picks]}
        )
    if stage == "ExtractAnswer":
        facts = [
            {"statement": first_sentence(text), "source": sid, "relevance": 0.9}
            for sid, text in section_blocks(request).items()
            if text.strip()
        ]
        return answer({"facts": facts})
    return answer({"summary": "Olena Marchenko owns the billing migration, which is 60% complete."})


def guided_retriever(root: Path, **settings: Any) -> Retriever:
    return Retriever(root, Settings.from_env(llm_model="test-model", **settings))


def llm_diagnostics(result: Any) -> dict[str, Any]:
    return dict(result.structured["diagnostics"]["llm"])
