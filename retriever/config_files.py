"""Settings from every place they can be set, each value with the place it came from.

Contract: ``load(flags, config_file=…, environ=…)`` returns ``Loaded``: the ``Settings``, the memory
root, and for every key its ``Source``.  Precedence, highest first:

    command-line flags > environment > the ``--config`` file (else ``$RETRIEVER_CONFIG``)
    > the memory root's ``.retriever.toml`` > the user's config file > defaults

The user's file is ``$XDG_CONFIG_HOME/company-memory-retriever/config.toml`` (``~/.config`` when
unset).  Files hold settings as top-level keys named like the environment variables without
``RETRIEVER_``, in lower case (``top_k = 8`` is ``RETRIEVER_TOP_K=8``), plus ``root``, and
``llm_base_url`` / ``llm_api_key`` (``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``).  Relative paths in
a file are read from the file's folder.  The root comes from flags, environment, the ``--config``
file or the user's file; the tree's own file is then read at that root.

The tree's ``.retriever.toml`` is committed with the memory, so whoever can commit to the tree
writes it: it may hold only settings about how the memory is answered (``TREE_KEYS``).  Secrets,
and settings that decide where data goes, who may call, how much a machine spends, or the memory's
name (``memory_id``, which scopes its sessions), are refused there (``ConfigError`` naming the
file, the key and where to put it instead).  Its ``[check]`` table belongs to ``retriever check``.
An unknown key is a ``ConfigError`` naming the file and the key, with the closest known key.
Invalid values name their source.  ``Loaded.warnings`` lists what works but needs fixing, each
naming its source: a file holding a secret that other users can read, and a graph (``graphs``)
whose folder does not exist; every command prints them on stderr.
"""

from __future__ import annotations

import difflib
import os
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic_core import ErrorDetails

from retriever.config import APP_DIR, ENV_VARIABLES, MAX_PROBLEMS, Settings, describing
from retriever.errors import ConfigError
from retriever.redaction import SECRET_KEYS, mask_url, shown_value, type_name
from retriever.text.reader import expanded, is_file, is_folder
from retriever.text.safe import cut, one_line, preview

TREE_CONFIG = ".retriever.toml"
USER_CONFIG = "config.toml"
CONFIG_VARIABLE = "RETRIEVER_CONFIG"
# Variables of ours that are no setting: the workflow ``retriever init`` writes reads RETRIEVER_SOURCE (where to
# install the retriever from).  Never said to be unknown.
NOT_SETTINGS = frozenset({"RETRIEVER_SOURCE"})
ROOT_VARIABLE = "RETRIEVER_ROOT"
DEFAULT_ROOT = "company_context"

# Every key a file may hold, with its variable: the Settings fields and the memory root.
VARIABLES: Mapping[str, str] = {"root": ROOT_VARIABLE, **ENV_VARIABLES}
PATH_KEYS = frozenset({"root", "state_dir", "user_trees"})
# What a memory tree may decide for itself: how it is answered.  Not limits (a commit could make
# every reader's machine index a 1 GB file), addresses (a commit could send the reader's key and
# questions to another endpoint), who may call, what the reader's LLM key is charged (model, calls,
# tokens, timeouts) or how the reader's endpoint is spoken to (JSON mode), or the memory's name
# (``memory_id`` scopes the sessions a server keeps: a commit naming another memory would read them).
# ``llm_stages`` stays: it picks where the calls go, within the reader's call and token budgets.
TREE_KEYS = frozenset({"top_k", "max_sections", "excerpt_chars", "max_documents", "llm_stages"})
CHECK_TABLE = "check"

Kind = Literal["default", "user config", "tree config", "--config", "env", "flag"]


@dataclass(frozen=True, slots=True)
class Source:
    """Where one setting's value came from: ``kind`` and the file, variable or flag (``where``)."""

    kind: Kind
    where: str = ""

    def __str__(self) -> str:
        return f"{self.kind} ({self.where})" if self.where else self.kind


DEFAULT = Source("default")


@dataclass(frozen=True, slots=True)
class Layer:
    """Values from one place, each with its source (a file, or one variable or flag per value)."""

    values: Mapping[str, Any]
    sources: Mapping[str, Source]


@dataclass(frozen=True)
class Loaded:
    """The settings in force, the root, each key's source, and the config files looked at."""

    settings: Settings
    root: Path
    sources: Mapping[str, Source]
    files: Mapping[Kind, Path | None] = field(default_factory=dict)  # None: looked for, absent
    warnings: tuple[str, ...] = ()  # e.g. a file holding a secret that others can read, a graph with no folder

    def source(self, key: str) -> Source:
        return self.sources.get(key, DEFAULT)


def user_config_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/company-memory-retriever/config.toml`` (``~/.config`` when unset)."""
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / APP_DIR / USER_CONFIG


def load(
    flags: Mapping[str, Any] | None = None,
    *,
    config_file: Path | None = None,
    environ: Mapping[str, str] | None = None,
    flag_names: Mapping[str, str] | None = None,
    lenient_tree: bool = False,
) -> Loaded:
    """The settings from every source (see the module's contract); ``flags`` set to None are not given.

    Raises ``ConfigError`` for a named config file that is missing, a file that is not TOML, an
    unknown key, a key the tree may not set, a ``root`` that is no string, or invalid values (each naming
    its source; the first ``MAX_PROBLEMS``, then how many more).  With ``lenient_tree`` (the servers), a memory
    tree's ``.retriever.toml`` that would raise is left out with a warning instead: whoever commits to the tree
    could otherwise stop the server's next start (a reboot, an upgrade) with a ``git pull``, and the tree may set
    only how answers are shaped.
    """
    environ = os.environ if environ is None else environ
    named = config_file or (Path(environ[CONFIG_VARIABLE]) if environ.get(CONFIG_VARIABLE) else None)
    files: dict[Kind, Path | None] = {}
    user = _file_layer("user config", user_config_path(environ), files, required=False)
    chosen = _file_layer("--config", named, files, required=True) if named else None
    above = [layer for layer in (_env_layer(environ), _flag_layer(flags or {}, flag_names or {})) if layer]
    early = [layer for layer in (user, chosen, *above) if layer]
    root = _root(*_merge(early))
    left_out: list[str] = []  # a lenient load's tree file that could not be used, said as a warning
    tree = _tree_layer(root, files, left_out if lenient_tree else None)
    layers = [layer for layer in (user, tree, chosen, *above) if layer]
    settings, sources = _settled(layers, tree if lenient_tree else None, root, left_out)
    exposed = tuple(w for layer in (user, chosen) if layer and (w := _exposed(layer)))
    warnings = tuple(left_out) + exposed + _missing_graphs(settings, sources) + _unknown_variables(environ)
    return Loaded(settings, root, sources, files, warnings)


def _tree_layer(root: Path, files: dict[Kind, Path | None], left_out: list[str] | None) -> Layer | None:
    """The memory tree's settings; where ``left_out`` is given, a file that cannot be used is said there instead."""
    try:
        return _file_layer("tree config", root / TREE_CONFIG if is_folder(root) else None, files, required=False)
    except ConfigError as exc:
        if left_out is None:
            raise
        left_out.append(_tree_left_out(exc, root))
        return None


def _settled(
    layers: list[Layer], droppable: Layer | None, root: Path, left_out: list[str]
) -> tuple[Settings, dict[str, Source]]:
    """The settings of ``layers``; when they are invalid and ``droppable`` (a lenient load's tree layer) is among
    them, the settings without it, its problem said in ``left_out`` (a fault elsewhere still raises)."""
    values, sources = _merge(layers)
    values.pop("root", None)
    try:
        return _settings(values, sources), sources
    except ConfigError as exc:
        if droppable is None:
            raise
        settled = _settled([layer for layer in layers if layer is not droppable], None, root, left_out)
        left_out.append(_tree_left_out(exc, root))
        return settled


def _tree_left_out(error: ConfigError, root: Path) -> str:
    return (
        f"{error.message}; the memory tree's {TREE_CONFIG} is left out until it is fixed (answers use the other "
        f"settings): `retriever check --root {one_line(str(root))}` names the problem"
    )


def _root(values: Mapping[str, Any], sources: Mapping[str, Source]) -> Path:
    """The memory root; a file's ``root = 5`` (or a list, a table, a boolean) is a ``ConfigError`` naming it."""
    root = values.get("root", DEFAULT_ROOT)
    if isinstance(root, str | Path):
        return Path(root)
    where = sources.get("root", DEFAULT)
    raise ConfigError(
        f"{one_line(where.where or str(where))}: root must be a string, the memory folder's path, not "
        f'{type_name(root)}; write it in quotes, e.g. root = "{DEFAULT_ROOT}"'
    )


def _exposed(layer: Layer) -> str | None:
    """A warning when a file holding a secret can be read by other users."""
    secrets = sorted(k for k, v in layer.values.items() if k in SECRET_KEYS and _secret(k, v))
    path = Path(layer.sources[secrets[0]].where) if secrets else None
    if path is None or os.name != "posix" or not path.stat().st_mode & 0o077:
        return None
    return f"{path} holds {', '.join(secrets)} and other users can read it: chmod 600 {path}"


def _missing_graphs(settings: Settings, sources: Mapping[str, Source]) -> tuple[str, ...]:
    """A warning per graph whose folder is not a folder (yet), and for a users' folder that is not one: not an
    error, since a server keeps running and the folder may appear later, but ``/memories/retrieve`` reads nothing
    from that graph, or any user's own tree, until then."""
    source = sources.get("graphs", DEFAULT)
    where = source.where or source.kind
    warnings = [
        f"{one_line(where)}: graph {one_line(repr(graph))} names {one_line(str(path))}, which is not a folder; "
        "/memories/retrieve reads nothing from that graph until it is: create the folder or fix the path"
        for graph, path in settings.graphs.items()
        if not is_folder(path)
    ]
    users = settings.user_trees
    if users is not None and not is_folder(users):
        source = sources.get("user_trees", DEFAULT)
        warnings.append(
            f"{one_line(source.where or source.kind)}: the users' trees folder {one_line(str(users))} is not a folder; "
            "no user's own tree is read until it is: create the folder or fix the path"
        )
    return tuple(warnings)


def _unknown_variables(environ: Mapping[str, str]) -> tuple[str, ...]:
    """A warning per ``RETRIEVER_*`` variable that names no setting (``RETRIEVER_TOPK``): it is ignored, which
    a typo in a config file's key is not (``ConfigError``), so it is said, with the nearest name."""
    known = {CONFIG_VARIABLE, *VARIABLES.values(), *NOT_SETTINGS}
    names = sorted(n for n in environ if n.startswith("RETRIEVER_") and n not in known)[:MAX_PROBLEMS]
    warnings = []
    prefix = len("RETRIEVER_")  # compared without it: every name shares it
    ours = sorted(n[prefix:] for n in known if n.startswith("RETRIEVER_"))
    for name in names:
        close = difflib.get_close_matches(name[prefix:], ours, n=1, cutoff=0.6)
        hint = f"; did you mean RETRIEVER_{close[0]}?" if close else "; `retriever status` lists the settings"
        warnings.append(f"{one_line(preview(name, 80))} is no setting and is ignored{hint}")
    return tuple(warnings)


def _merge(layers: list[Layer]) -> tuple[dict[str, Any], dict[str, Source]]:
    """Later layers win; every key keeps the source of its value."""
    values: dict[str, Any] = {}
    sources: dict[str, Source] = {}
    for layer in layers:
        values.update(layer.values)
        sources.update(layer.sources)
    return values, sources


def _env_layer(environ: Mapping[str, str]) -> Layer | None:
    values = {key: environ[name] for key, name in VARIABLES.items() if environ.get(name)}
    return Layer(values, {key: Source("env", VARIABLES[key]) for key in values}) if values else None


def _flag_layer(flags: Mapping[str, Any], names: Mapping[str, str]) -> Layer | None:
    values = {key: value for key, value in flags.items() if value is not None}
    unknown = sorted(set(values) - set(VARIABLES))
    if unknown:
        raise ValueError(f"flags for unknown settings: {unknown}")  # a programming error, not a user's
    sources = {key: Source("flag", names.get(key, "--" + key.replace("_", "-"))) for key in values}
    return Layer(values, sources) if values else None


def _file_layer(kind: Kind, path: Path | None, files: dict[Kind, Path | None], *, required: bool) -> Layer | None:
    """The settings in one TOML file (None when it is absent and not required)."""
    if path is None:
        return None
    path = expanded(path)
    if not is_file(path):
        files[kind] = None
        if required:
            shown = preview(str(path), 300)
            what = "is not a regular file" if os.path.lexists(path) else "does not exist"  # /dev/null, a FIFO
            raise ConfigError(f"config file {shown} {what}; check --config (or {CONFIG_VARIABLE})")
        return None
    files[kind] = path
    values = _resolved(_checked(kind, path, read_toml(path)), path.parent)
    return Layer(values, dict.fromkeys(values, Source(kind, str(path)))) if values else None


def read_toml(path: Path, what: str = "settings") -> dict[str, Any]:
    """The TOML file at ``path``; a file that cannot be read or parsed is a ``ConfigError`` naming it."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # TOMLDecodeError and UnicodeDecodeError are ValueErrors
        raise ConfigError(f"cannot read {what} from {path}: {_toml_problem(exc)}; fix or remove the file") from exc


def _toml_problem(exc: OSError | ValueError) -> str:
    """Why a TOML file could not be read.  tomllib turns a decimal integer into an ``int``, which Python
    refuses past ``sys.get_int_max_str_digits()`` digits with a plain ``ValueError``."""
    if type(exc) is ValueError and "integer string conversion" in str(exc):
        return f"a number has more than {sys.get_int_max_str_digits():,} digits"
    return one_line(cut(str(exc), 300))


def _checked(kind: Kind, path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """The file's settings; unknown keys, and keys its place may not hold, raise ``ConfigError``."""
    values = dict(data)
    check = values.pop(CHECK_TABLE, None)
    if check is not None and kind != "tree config":
        raise ConfigError(
            f"{path}: [{CHECK_TABLE}] is read only from a memory tree's {TREE_CONFIG} (by `retriever check`); "
            "move it there"
        )
    for key in values:
        if key not in VARIABLES:
            raise ConfigError(f"{path}: unknown setting {preview(key)}{_suggestion(key)}")
        if kind == "tree config":
            _allowed_in_tree(path, key)
    return values


def _suggestion(key: str) -> str:
    """"; did you mean 'top_k'?" for a near miss (``RETRIEVER_TOP_K`` and ``Top-K`` included)."""
    plain = key.lower().replace("-", "_").removeprefix("retriever_")
    plain = {"openai_api_key": "llm_api_key", "openai_base_url": "llm_base_url"}.get(plain, plain)
    close = difflib.get_close_matches(plain, list(VARIABLES), n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ";"
    return f"{hint} Settings are top-level keys named like the variables without RETRIEVER_, in lower case"


def _allowed_in_tree(path: Path, key: str) -> None:
    if key in TREE_KEYS:
        return
    elsewhere = f"set it in {user_config_path()}, a --config file or {VARIABLES[key]}"
    if key in SECRET_KEYS:
        raise ConfigError(
            f"{path}: {key} holds a secret, and this file is part of the memory tree (committed to git): "
            f"remove it (and rotate the secret if it was committed); {elsewhere}"
        )
    if key == "root":
        raise ConfigError(f"{path}: root cannot be set from inside the tree; remove it")
    why = _WHY_NOT_IN_TREE.get(key, "whoever commits to the tree would decide it for every reader")
    raise ConfigError(
        f"{path}: {key} cannot be set in a memory tree's {TREE_CONFIG} ({why}); {elsewhere}. "
        f"The tree may set: {', '.join(sorted(TREE_KEYS))}"
    )


# Why a key the tree may not set is refused, where the generic reason says too little.
_CHARGED = "it decides what the reader's LLM key is charged, and the reader pays"
_WHY_NOT_IN_TREE: Mapping[str, str] = {
    "memory_id": "it names the sessions a server keeps for this memory: a commit naming another memory "
    "would read and add to that memory's sessions",
    **dict.fromkeys(("llm_model", "llm_max_calls", "llm_token_budget", "llm_timeout_seconds"), _CHARGED),
    "llm_json_mode": "it describes the reader's LLM endpoint, which the tree cannot know",
}


def _secret(key: str, value: Any) -> bool:
    """A Redis URL is a secret only with a password in it; the other secret keys always are."""
    return key != "redis_url" or (isinstance(value, str) and mask_url(value) != value)


def _resolved(values: dict[str, Any], folder: Path) -> dict[str, Any]:
    """Paths in a file, read from the file's folder (``~`` expanded)."""
    out = dict(values)
    for key in PATH_KEYS & set(out):
        if isinstance(out[key], str):
            out[key] = _path(out[key], folder)
    graphs = out.get("graphs")
    if isinstance(graphs, dict):
        out["graphs"] = {k: _path(v, folder) if isinstance(v, str) else v for k, v in graphs.items()}
    return out


def _path(value: str, folder: Path) -> Path:
    path = expanded(Path(value))
    return path if path.is_absolute() else folder / path


def _settings(values: dict[str, Any], sources: Mapping[str, Source]) -> Settings:
    with describing(lambda error: _problem(error, sources)):  # a bad value named by where it came from
        return Settings(**values)


def _problem(error: ErrorDetails, sources: Mapping[str, Source]) -> str:
    """``RETRIEVER_TOP_K='0': …`` for the environment, ``top_k = 0 in FILE: …`` for a file; a secret's
    value is never shown, only its type (``redaction.shown_value``)."""
    key = str(error["loc"][0]) if error.get("loc") else "?"
    shown = shown_value(key, error.get("input"))
    source = sources.get(key, DEFAULT)
    if source.kind == "env":
        return f"{source.where}={shown}: {error['msg']}"
    if source.kind == "flag":
        return f"{source.where} {shown}: {error['msg']}"
    return f"{key} = {shown} in {source.where or source.kind}: {error['msg']}"
