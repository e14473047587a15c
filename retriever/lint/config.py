"""``retriever check`` settings: which rules run and which document types are known.

Contract: ``load_config(root)`` reads ``[tool.retriever.check]`` from the nearest ``pyproject.toml``
at or above ``root`` and ``[check]`` from the tree's own ``.retriever.toml``; both merge.  Either
table takes ``disable`` (rule ids) and ``types`` (extra document types).  A malformed file raises
``ConfigError`` naming it (and at most ``MAX_NAMED`` of its unknown keys or rules, each cut short).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from retriever.config_files import read_toml
from retriever.errors import ConfigError
from retriever.lint.rules import RULES
from retriever.lint.tree import LOCAL_CONFIG
from retriever.text.safe import cut, one_line
from retriever.text.vocabulary import DOCUMENT_TYPES

KNOWN_TYPES = DOCUMENT_TYPES
PYPROJECT = "pyproject.toml"
_CONFIG_KEYS = frozenset({"disable", "types"})
MAX_NAMED = 5  # unknown keys or rules a message names, then "and N more"


@dataclass(frozen=True, slots=True)
class CheckConfig:
    """Which rules run, and which document types count as known besides ``KNOWN_TYPES``."""

    disable: frozenset[str] = frozenset()
    types: frozenset[str] = frozenset()
    sources: tuple[Path, ...] = ()  # the config files read, nearest pyproject first

    @property
    def known_types(self) -> frozenset[str]:
        return KNOWN_TYPES | self.types

    def enabled(self, rule: str) -> bool:
        return rule not in self.disable


def load_config(root: Path) -> CheckConfig:
    """The merged settings of the nearest ``pyproject.toml`` and the tree's ``.retriever.toml``."""
    sections: list[tuple[Path, str, dict[str, Any]]] = []
    nearest = _nearest_pyproject(root.resolve())
    if nearest is not None:
        sections.append(nearest)
    local = root / LOCAL_CONFIG
    if local.is_file():
        sections.append(_section(local, read_toml(local, "check settings"), ("check",)))
    disable: set[str] = set()
    types: set[str] = set()
    for path, name, table in sections:
        where = f"{path}: [{name}]"
        disable.update(_rule_list(where, table))
        types.update(t.strip().lower() for t in _string_list(where, table, "types") if t.strip())
    return CheckConfig(frozenset(disable), frozenset(types), tuple(path for path, _, _ in sections))


def _nearest_pyproject(start: Path) -> tuple[Path, str, dict[str, Any]] | None:
    """The closest ``pyproject.toml`` at or above ``start`` that has a ``[tool.retriever.check]`` table, looking
    no higher than the repository's root (the folder holding ``.git``): a file above it belongs to another
    project, broken or not, and is none of this tree's business."""
    for folder in (start, *start.parents):
        path = folder / PYPROJECT
        if path.is_file():
            data = read_toml(path, "check settings")
            tool = data.get("tool")
            retriever = tool.get("retriever") if isinstance(tool, dict) else None
            if isinstance(retriever, dict) and "check" in retriever:
                return _section(path, data, ("tool", "retriever", "check"))
        if (folder / ".git").exists():
            return None
    return None


def _named(names: Sequence[str]) -> str:
    """The first ``MAX_NAMED`` names, each cut short and on one line, then "and N more": 200 unknown rule names
    of 1,000 characters had made a 201 KB message."""
    more = f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else ""
    return ", ".join(one_line(cut(name, 80)) for name in names[:MAX_NAMED]) + more


def _section(path: Path, data: dict[str, Any], keys: tuple[str, ...]) -> tuple[Path, str, dict[str, Any]]:
    """(file, table name, table) for the table at ``keys``; empty when absent, only known keys allowed."""
    table: Any = data
    for key in keys:
        table = table.get(key, {}) if isinstance(table, dict) else None
    name = ".".join(keys)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [{name}] must be a table holding `disable` and `types` lists")
    unknown = sorted(set(table) - _CONFIG_KEYS)
    if unknown:
        raise ConfigError(f"{path}: [{name}] has unknown key(s) {_named(unknown)}; it takes `disable` and `types`")
    return path, name, table


def _string_list(where: str, table: dict[str, Any], key: str) -> list[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        example = '["empty-section"]' if key == "disable" else '["customer_story"]'
        raise ConfigError(f"{where} {key} must be a list of strings, e.g. {key} = {example}")
    return value


def _rule_list(where: str, table: dict[str, Any]) -> list[str]:
    rules = _string_list(where, table, "disable")
    unknown = [r for r in rules if r not in RULES]
    if unknown:
        raise ConfigError(f"{where} disable names unknown rule(s) {_named(unknown)}; known: {', '.join(RULES)}")
    return rules
