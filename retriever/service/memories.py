"""Seed 003's ``POST /memories/retrieve`` as a service call: who asks, for whom, and with what body.

Contract: ``answer(graphs, body, user_id, allowed, header)`` returns (HTTP status, response, the
canonical user id when valid) and never raises for what a client sends:
- 422 ``{"detail": [{type, loc, msg, input}]}`` for an invalid body, and for a user id that is not
  a plain name (``loc`` is ``["header", header]``); ``input`` is a bounded prefix;
- 403 ``{"detail": "…"}`` when ``allowed`` is a set (the users the caller's key is bound to) and the
  user is not in it; ``None`` allows any user;
- 504 (``retrieval_timeout``) or 503 (a tree missing or empty: ``memory_not_found``, ``memory_empty``)
  ``{"detail": message, "error_code": code}`` when retrieval itself fails;
- 200 with the blended retrieval (``compat.graphs``) otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import ValidationError

from retriever.compat.graphs import GraphRetrieval, Tree, UnknownGraph
from retriever.compat.users import InvalidUserId, canonical_user_id
from retriever.errors import InvalidArguments, RetrievalTimeout, RetrieverError
from retriever.pipeline.contracts import MemoriesRetrieveRequest
from retriever.service.roots import usable_memory
from retriever.text.safe import bounded, preview

USER_HEADER = "x-external-user-id"
ECHO_CHARS = 200  # a bad header value is quoted back at most this long
MAX_ERRORS = 20  # validation errors listed in a 422 reply; the rest are counted


def answer(
    graphs: GraphRetrieval, body: Any, user_id: str | None, allowed: frozenset[str] | None, header: str
) -> tuple[int, dict[str, Any], str | None]:
    """(status, response, canonical user id when valid); see the module's contract."""
    try:
        user = canonical_user_id(user_id) if user_id is not None else None
    except InvalidUserId as exc:
        detail: dict[str, Any] = {"type": "value_error", "loc": ["header", header], "msg": exc.message}
        return 422, {"detail": [{**detail, "input": bounded(user_id, chars=ECHO_CHARS)}]}, None
    if allowed is not None and user is None:  # a key bound to users acts only for one of them
        return 403, {"detail": f"this API key is bound to users; name one of them in the {header} header"}, None
    if user is not None and allowed is not None and user not in _canonical(allowed):
        message = f"user {preview(user, 64)} is not allowed: this API key is not bound to it; use a key bound to it"
        return 403, {"detail": message}, user
    try:
        request = MemoriesRetrieveRequest.model_validate(body)
        return 200, graphs.retrieve(request, user, _usable(graphs.trees(request.graph_ids, user))), user
    except ValidationError as exc:
        return 422, {"detail": _validation_detail(exc)}, user
    except UnknownGraph as exc:
        graph: dict[str, Any] = {"type": "value_error", "loc": ["body", "graph_ids", exc.index], "msg": str(exc)}
        return 422, {"detail": [{**graph, "input": bounded(exc.graph_id, chars=ECHO_CHARS)}]}, user
    except InvalidArguments as exc:  # a query the model accepts but retrieval cannot use (only spaces, say)
        # Retrieval names its argument 'prompt'; this route's field is 'query', and what was sent is echoed, bounded.
        message = exc.message.replace("'prompt'", "'query'")
        sent = body.get("query") if isinstance(body, dict) else None
        query: dict[str, Any] = {"type": "value_error", "loc": ["body", "query"], "msg": message}
        return 422, {"detail": [{**query, "input": bounded(sent, chars=ECHO_CHARS)}]}, user
    except RetrieverError as exc:  # seed 000's error codes; a timeout had been a 500 "internal error"
        status = 504 if isinstance(exc, RetrievalTimeout) else 503
        return status, {"detail": exc.message, "error_code": exc.code}, user


def _usable(trees: Sequence[Tree]) -> list[Tree]:
    """The ``trees`` a retrieval reads: those whose memory is there (``roots.usable_memory``).  When none is, the
    first one's error is raised (503): a tree missing or emptied while serving had answered an empty 200, and
    cached it.  Beside a usable one, an unusable one is left out (a user's own tree still answers beside an empty
    shared one, and a removed one's last index no longer does)."""
    kept: list[Tree] = []
    problems: list[RetrieverError] = []
    for tree in trees:
        try:
            usable_memory(tree.retriever)
        except RetrieverError as exc:
            problems.append(exc)
            continue
        kept.append(tree)
    if problems and not kept:
        raise problems[0]
    return kept


def _canonical(users: Iterable[str]) -> set[str]:
    out = set()
    for user in users:
        try:
            out.add(canonical_user_id(user))
        except InvalidUserId:
            continue  # binds nobody; load_api_keys refuses such ids, but a library caller's set may hold one
    return out


def _validation_detail(exc: ValidationError) -> list[dict[str, Any]]:
    """pydantic's errors as FastAPI's ``detail``, under ``body``, with inputs cut to a bounded prefix: the first
    ``MAX_ERRORS``, then one entry counting the rest (a list of bad items draws an error per item)."""
    errors = exc.errors(include_url=False)
    detail = []
    for error in errors[:MAX_ERRORS]:
        item = {
            "type": error["type"],
            "loc": bounded(["body", *error["loc"]]),
            "msg": bounded(error["msg"]),
            "input": bounded(error.get("input")),
        }
        if "ctx" in error:  # e.g. {"max_length": 5000}; an exception in it becomes its message
            item["ctx"] = bounded({k: str(v) if isinstance(v, BaseException) else v for k, v in error["ctx"].items()})
        detail.append(item)
    if len(errors) > MAX_ERRORS:
        more = len(errors) - MAX_ERRORS
        detail.append({"type": "too_many_errors", "loc": ["body"], "msg": f"and {more} more errors", "input": None})
    return detail
