"""Settings: one pydantic model, read from arguments and ``RETRIEVER_*`` environment variables.

``Settings.from_env`` reads the environment only (the library's default); ``config_files.load``
adds the config files (user, tree, ``--config``) below the environment and records each value's
source, as every ``retriever`` command does.

Where state lives: ``$RETRIEVER_STATE_DIR`` when set, else the XDG folders
(``$XDG_CACHE_HOME/company-memory-retriever`` for the index cache).  Never inside the
memory tree, which teams commit.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails, PydanticCustomError

from retriever.errors import ConfigError
from retriever.redaction import shown_value

APP_DIR = "company-memory-retriever"
MAX_PROMPT_CHARS = 8000
# The top of every duration setting (``*_seconds``): well under what their consumers accept
# (``threading`` waits overflow past ``threading.TIMEOUT_MAX``, about 49 days on Windows; the MCP
# SDK, asyncio and the OpenAI client take these too).  A week is longer than any sensible wait.
MAX_SECONDS = 7 * 24 * 3600
# The top of every count, size and rate with no smaller one of its own: SQLite, Redis and asyncio
# take them as C integers.
MAX_COUNT = 2**31 - 1
# The watcher's shortest round: a server rescans the tree this often at most (1e-300 had spun a core).
MIN_REFRESH_SECONDS = 0.05
MAX_PROBLEMS = 5  # invalid values a settings error lists, then "and N more"

_ENV = {
    "state_dir": "RETRIEVER_STATE_DIR",
    "top_k": "RETRIEVER_TOP_K",
    "deadline_seconds": "RETRIEVER_DEADLINE_SECONDS",
    "max_file_bytes": "RETRIEVER_MAX_FILE_BYTES",
    "redis_url": "RETRIEVER_REDIS_URL",
    "api_key": "RETRIEVER_API_KEY",
    "refresh_seconds": "RETRIEVER_REFRESH_SECONDS",
    "request_log_limit": "RETRIEVER_REQUEST_LOG_LIMIT",
    "allowed_origins": "RETRIEVER_ALLOWED_ORIGINS",
    "llm_model": "RETRIEVER_LLM_MODEL",
    "llm_stages": "RETRIEVER_LLM_STAGES",
    "llm_max_calls": "RETRIEVER_LLM_MAX_CALLS",
    "llm_token_budget": "RETRIEVER_LLM_TOKEN_BUDGET",
    "llm_timeout_seconds": "RETRIEVER_LLM_TIMEOUT_SECONDS",
    "llm_json_mode": "RETRIEVER_LLM_JSON_MODE",
    "llm_endpoint": "RETRIEVER_LLM_ENDPOINT",
    "llm_prompt_tokens_per_second": "RETRIEVER_LLM_PROMPT_TOKENS_PER_SECOND",
    "llm_output_tokens_per_second": "RETRIEVER_LLM_OUTPUT_TOKENS_PER_SECOND",
    "graphs": "RETRIEVER_GRAPHS",
    "user_trees": "RETRIEVER_USER_TREES",
    "max_files": "RETRIEVER_MAX_FILES",
    "index_workers": "RETRIEVER_INDEX_WORKERS",
    "user_trees_cached": "RETRIEVER_USER_TREES_CACHED",
    "session_limit": "RETRIEVER_SESSION_LIMIT",
    "store_timeout_seconds": "RETRIEVER_STORE_TIMEOUT_SECONDS",
    "allowed_hosts": "RETRIEVER_ALLOWED_HOSTS",
    "api_keys": "RETRIEVER_API_KEYS",
    "max_body_bytes": "RETRIEVER_MAX_BODY_BYTES",
    "header_timeout_seconds": "RETRIEVER_HEADER_TIMEOUT_SECONDS",
    "body_timeout_seconds": "RETRIEVER_BODY_TIMEOUT_SECONDS",
    "keep_alive_seconds": "RETRIEVER_KEEP_ALIVE_SECONDS",
    "max_connections": "RETRIEVER_MAX_CONNECTIONS",
    "session_idle_seconds": "RETRIEVER_SESSION_IDLE_SECONDS",
    "max_sessions": "RETRIEVER_MAX_SESSIONS",
    "max_sections": "RETRIEVER_MAX_SECTIONS",
    "excerpt_chars": "RETRIEVER_EXCERPT_CHARS",
    "max_documents": "RETRIEVER_MAX_DOCUMENTS",
    "memory_id": "RETRIEVER_MEMORY_ID",
    "host": "RETRIEVER_HOST",
    "port": "RETRIEVER_PORT",
    "log_level": "RETRIEVER_LOG_LEVEL",
    # The openai package's own variables: read here too, so a config file can hold them as well.
    "llm_base_url": "OPENAI_BASE_URL",
    "llm_api_key": "OPENAI_API_KEY",
}
ENV_VARIABLES: Mapping[str, str] = _ENV  # setting → its environment variable
LLMStage = Literal["triage", "target", "extract", "summary"]
LLM_STAGES: tuple[LLMStage, ...] = ("triage", "target", "extract", "summary")


class Settings(BaseModel):
    """Everything a retrieval can be configured with; defaults suit a laptop.  ``Settings(...)`` takes only what it is
    given (``OPENAI_*`` aside: ``endpoints``); ``Settings.from_env(**overrides)`` is the environment and code.  A bad
    value is a ``ConfigError`` naming the field and the value (a secret's type only), never pydantic's error,
    which repeats every input.  ``model_copy(update=…)`` validates nothing: build a new one instead."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            problems = listed_problems(exc, _DESCRIBE.get() or _field_problem)  # ``describing`` names sources
            # Not chained: the pydantic error repeats every input, secrets included.
            raise ConfigError(f"invalid setting: {problems}") from None

    state_dir: Path | None = Field(default=None, description="Folder for caches and stores.")
    top_k: int = Field(default=12, ge=1, le=100, description="Facts returned per retrieval.")
    max_sections: int = Field(
        default=14,
        ge=1,
        le=50,
        description="Sections read in phase 1 (up to 1.5 times as many where the question's words leave it uncovered).",
    )
    deadline_seconds: float = Field(default=120.0, gt=0, le=MAX_SECONDS, description="Per-retrieval time limit.")
    max_file_bytes: int = Field(default=2_000_000, ge=1, le=MAX_COUNT, description="Larger files are skipped.")
    excerpt_chars: int = Field(default=700, ge=50, le=MAX_COUNT, description="Document excerpts are cut here.")
    max_documents: int = Field(default=4, ge=0, le=20, description="Document excerpts per result.")
    redis_url: str | None = Field(default=None, description="Sessions and request log in Redis, not SQLite.")
    api_key: SecretStr | None = Field(default=None, description="Bearer token the HTTP server requires.")
    refresh_seconds: float = Field(
        default=2.0, ge=MIN_REFRESH_SECONDS, le=MAX_SECONDS, description="How often a server looks for edited files."
    )
    request_log_limit: int = Field(
        default=10_000, ge=0, le=MAX_COUNT, description="Requests kept in the request log (0: none is logged)."
    )
    allowed_origins: tuple[str, ...] = Field(default=(), description="Browser origins the HTTP server accepts.")

    llm_model: str | None = Field(default=None, description="LLM model name; unset means offline.")
    llm_stages: tuple[LLMStage, ...] = Field(default=LLM_STAGES, description="Stages the LLM may guide.")
    llm_max_calls: int = Field(default=3, ge=0, le=10, description="LLM calls per retrieval at most.")
    llm_token_budget: int = Field(
        default=8000, ge=500, le=MAX_COUNT, description="Prompt tokens per retrieval at most."
    )
    llm_timeout_seconds: float = Field(default=20.0, gt=0, le=MAX_SECONDS, description="Per LLM call.")
    llm_json_mode: Literal["auto", "json_schema", "json_object"] = Field(
        default="auto", description="How structured answers are requested."
    )
    llm_endpoint: Literal["auto", "local", "remote"] = Field(
        default="auto",
        description="local: one model on this machine, answering one call at a time (prompts sized to its speed, "
        "no call while it still works on an abandoned one); auto: local when OPENAI_BASE_URL is a loopback address.",
    )
    llm_prompt_tokens_per_second: float | None = Field(
        default=None,
        gt=0,
        le=MAX_COUNT,
        description="Prompt tokens the endpoint reads per second (measure: scripts/check_llm.py).",
    )
    llm_output_tokens_per_second: float | None = Field(
        default=None, gt=0, le=MAX_COUNT, description="Answer tokens the endpoint writes per second, in JSON mode."
    )
    llm_base_url: str | None = Field(
        default=None, description="OpenAI-compatible endpoint (OPENAI_BASE_URL); unset means OpenAI's."
    )
    llm_api_key: SecretStr | None = Field(default=None, description="The endpoint's key (OPENAI_API_KEY).")
    memory_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        pattern=r"^[^\x00-\x1f\x7f]+$",
        description="A stable name for this memory: sessions are kept under it (else the git remote or the path).",
    )

    graphs: dict[str, Path] = Field(
        default_factory=dict, description="Shared memory trees by graph id (``id=path,id=path``)."
    )
    user_trees: Path | None = Field(default=None, description="Folder of per-user trees, one sub-folder per user id.")
    max_files: int = Field(
        default=100_000,
        ge=1,
        le=MAX_COUNT,
        description="Markdown files a tree may hold; past it the scan stops with an error.",
    )
    index_workers: int = Field(
        default=0, ge=0, le=256, description="Processes that parse files for a large index build; 0: one per core."
    )
    user_trees_cached: int = Field(
        default=32, ge=1, le=10_000, description="Per-user trees kept open at once (least recently used go first)."
    )
    session_limit: int = Field(
        default=10_000,
        ge=1,
        le=MAX_COUNT,
        description="Sessions the SQLite store keeps (least recently used go first).",
    )
    store_timeout_seconds: float = Field(
        default=0.25, gt=0, le=10, description="How long a call waits for session history before going on without."
    )

    @field_validator("*", mode="before")
    @classmethod
    def _finite_and_bounded(cls, value: Any, info: ValidationInfo) -> Any:
        """A number setting given NaN, an infinity, or a value outside its range is refused, naming the range
        it accepts (``must be a number of seconds above 0 and at most 604800 (7 days)``).  Text that is no
        number is left to the field's own checks."""
        name = info.field_name or ""
        field = cls.model_fields.get(name)
        if field is None or not _numeric(field.annotation):
            return value
        number = _number(value)
        if number is None or _acceptable(number, field):
            return value
        raise PydanticCustomError("out_of_range", "must be {accepted}", {"accepted": _accepted(name, field)})

    @field_validator("graphs", mode="before")
    @classmethod
    def _parse_graphs(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        pairs = [p.split("=", 1) for p in value.split(",") if p.strip()]
        if any(len(p) != 2 or not p[0].strip() or not p[1].strip() for p in pairs):
            raise ValueError("expected id=path pairs separated by commas, e.g. eng=/srv/memory/eng")
        return {k.strip(): Path(v.strip()) for k, v in pairs}

    @field_validator("allowed_origins", "llm_stages", "allowed_hosts", mode="before")
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        return tuple(v.strip() for v in value.split(",") if v.strip()) if isinstance(value, str) else value

    @field_validator("log_level", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:  # INFO, as logging spells it, too
        return value.strip().lower() if isinstance(value, str) else value

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Settings from ``RETRIEVER_*`` variables, then explicit ``overrides`` (None ignored)."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {k: environ[v] for k, v in _ENV.items() if environ.get(v)}
        given = {k: v for k, v in overrides.items() if v is not None}
        values.update(given)
        with describing(lambda error: _field_problem(error, given.keys())):
            return cls(**values)

    # -- HTTP server hardening (``retriever serve``) ---------------------------------------------

    allowed_hosts: tuple[str, ...] = Field(
        default=(), description="Host names the HTTP server answers besides loopback ones; '*' allows any."
    )
    api_keys: SecretStr | None = Field(
        default=None, description="Bearer keys bound to users: inline 'key=u1|u2,key2=*' or a keys file's path."
    )
    max_body_bytes: int = Field(default=1_000_000, ge=1, le=MAX_COUNT, description="Larger request bodies answer 413.")
    header_timeout_seconds: float = Field(
        default=10.0, gt=0, le=MAX_SECONDS, description="Time to send a request's headers."
    )
    body_timeout_seconds: float = Field(
        default=30.0, gt=0, le=MAX_SECONDS, description="Time to send a request's body."
    )
    keep_alive_seconds: int = Field(
        default=5, ge=1, le=MAX_SECONDS, description="Idle keep-alive connections close after it."
    )
    max_connections: int = Field(
        default=1000, ge=1, le=MAX_COUNT, description="Open connections at most (capped by the fd limit)."
    )
    session_idle_seconds: float = Field(
        default=1800.0, gt=0, le=MAX_SECONDS, description="MCP sessions idle this long end."
    )
    max_sessions: int = Field(
        default=1000, ge=1, le=MAX_COUNT, description="Open MCP sessions at most; more answer 503."
    )
    host: str = Field(default="127.0.0.1", min_length=1, description="Interface `retriever serve` binds.")
    port: int = Field(default=8765, ge=0, le=65535, description="Port `retriever serve` listens on (0: any free one).")
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        default="warning", description="What `serve` and `mcp` log to stderr; 'info' adds a line per HTTP request."
    )


# How a ``Settings`` being built names a bad value's source (``describing``); by its field otherwise.
_DESCRIBE: ContextVar[Callable[[ErrorDetails], str] | None] = ContextVar("_DESCRIBE", default=None)


@contextlib.contextmanager
def describing(describe: Callable[[ErrorDetails], str]) -> Iterator[None]:
    """While in it, a ``Settings`` built in this thread names each bad value with ``describe``: its environment
    variable (``from_env``) or its file (``config_files``), where the value came from."""
    token = _DESCRIBE.set(describe)
    try:
        yield
    finally:
        _DESCRIBE.reset(token)


def _field_problem(error: ErrorDetails, from_code: Iterable[str] | None = None) -> str:
    """One problem as "NAME=value: why": NAME is the environment variable a value came from, else the field (every
    field when ``from_code`` is None: ``Settings(...)``; else those it lists, passed in code to ``from_env``)."""
    key = str(error["loc"][0]) if error["loc"] else "?"
    if error["type"] == "extra_forbidden":  # a misspelt name ("llm_api_kye"): its value may be the secret
        return f"{key[:60]}: no such setting (its value is not shown)"
    variable = from_code is not None and key not in from_code
    return f"{_ENV.get(key, key) if variable else key}={shown_value(key, error.get('input'))}: {error['msg']}"


def listed_problems(exc: ValidationError, describe: Callable[[ErrorDetails], str]) -> str:
    """The first ``MAX_PROBLEMS`` errors, each ``describe``d, then "and N more" (10,000 bad list items had
    made a 900 KB message)."""
    errors = exc.errors()
    more = f"; and {len(errors) - MAX_PROBLEMS} more" if len(errors) > MAX_PROBLEMS else ""
    return "; ".join(describe(error) for error in errors[:MAX_PROBLEMS]) + more


def _numeric(annotation: Any) -> bool:
    """True for ``int``, ``float`` and ``float | None`` fields."""
    kinds = set(get_args(annotation) or (annotation,)) - {type(None)}
    return bool(kinds) and kinds <= {int, float}


def _number(value: Any) -> int | float | None:
    """``value`` as a number (text included: the environment's), else None; a bool is no number here."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if not isinstance(value, str):
        return None
    for kind in (int, float):
        try:
            return kind(value.strip())
        except ValueError:
            continue
    return None


def _acceptable(number: int | float, field: FieldInfo) -> bool:
    """Finite and within the field's bounds (a huge int is compared exactly, never turned into a float)."""
    low, above, top = _limit(field, "ge"), _limit(field, "gt"), _limit(field, "le")
    within = (low is None or number >= low) and (above is None or number > above) and (top is None or number <= top)
    return (isinstance(number, int) or math.isfinite(number)) and within


def _accepted(name: str, field: FieldInfo) -> str:
    """The range a number field accepts, in words: ``a whole number from 1 to 100``."""
    what = "a whole number" if field.annotation is int else "a number"
    what += " of seconds" if name.endswith("_seconds") else ""
    low, above, top = _limit(field, "ge"), _limit(field, "gt"), _limit(field, "le")
    span = f"from {low} to {top}" if low is not None else f"above {above} and at most {top}"
    return f"{what} {span}" + (" (7 days)" if top == MAX_SECONDS else "")


def _limit(field: FieldInfo, name: str) -> Any:
    """The field's ``ge``, ``gt`` or ``le`` bound, else None."""
    return next((getattr(m, name) for m in field.metadata if hasattr(m, name)), None)


def cache_home(settings: Settings, environ: Mapping[str, str] | None = None) -> Path:
    """The folder for rebuildable caches."""
    environ = os.environ if environ is None else environ
    if settings.state_dir is not None:
        return settings.state_dir / "cache"
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / APP_DIR


def state_home(settings: Settings, environ: Mapping[str, str] | None = None) -> Path:
    """The folder for state worth keeping: sessions and the request log."""
    environ = os.environ if environ is None else environ
    if settings.state_dir is not None:
        return settings.state_dir / "state"
    base = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / APP_DIR


_NAME_BYTES = 255  # the longest file name most file systems take (NAME_MAX), in bytes
_KEY_CHARS = 16  # hex digits of the hash of the root's absolute path


def index_cache_dir(settings: Settings, root: Path) -> Path:
    """One cache folder per memory root: ``<folder name>-<16 hex digits of a hash of its absolute path>``.

    The name part is cut at a character boundary so that the whole name stays within 255 bytes (a root
    whose name is 250 characters made a name no file system takes, and the cache was never there); the
    hash keeps roots apart whatever the cut. A name that fits is kept whole: existing caches keep their folders.
    """
    resolved = root.resolve()
    # fsencode: the bytes the file system holds (a name that is not UTF-8 cannot be .encode()d); the same
    # bytes as before for every other path, so no existing cache changes its name.
    key = hashlib.sha1(os.fsencode(str(resolved)), usedforsecurity=False).hexdigest()[:_KEY_CHARS]
    return cache_home(settings) / "index" / f"{_cut_name(resolved.name, _NAME_BYTES - 1 - _KEY_CHARS)}-{key}"


def _cut_name(name: str, limit: int) -> str:
    """The longest prefix of whole characters of ``name`` within ``limit`` bytes, as the file system encodes it."""
    if len(os.fsencode(name)) <= limit:
        return name
    kept, size = [], 0
    for char in name:
        size += len(os.fsencode(char))
        if size > limit:
            break
        kept.append(char)
    return "".join(kept)
