"""``retriever check``: a linter for memory trees, for pre-commit hooks and CI.

Contract:
- Settings come from ``lint.config.load_config(root)``; the output formats are in ``lint.report``;
  the rules, one registry of them, in ``lint.rules``.
- ``check(memory, config)`` returns ``Finding``s sorted by file, line and rule.  ``file`` is the
  source path as the retriever shows it (root folder name first), ``line`` a 1-based file line,
  front matter included (1 for whole-file problems), and the message says how to fix it.
Memory files are read through ``reader`` only (``lint.tree``).
"""

from __future__ import annotations

from retriever.lint import tree as lint_tree
from retriever.lint.config import CheckConfig
from retriever.lint.rules import RULES
from retriever.lint.tree import Finding
from retriever.memory.memory import Memory

__all__ = ["Finding", "check", "files_checked"]


def check(memory: Memory, config: CheckConfig | None = None) -> list[Finding]:
    """Every enabled rule's findings over the memory tree, sorted by file, line and rule."""
    config = config or CheckConfig()
    tree = lint_tree.load(memory, config.known_types)
    return sorted(
        Finding(memory.source_path(p.rel_path), p.line, rule.id, rule.severity, p.message)
        for rule in RULES.values()
        if config.enabled(rule.id)
        for p in rule.find(tree)
    )


def files_checked(memory: Memory) -> int:
    """Markdown files the linter looked at: readable documents plus skipped files."""
    return len(memory.state.catalog) + len(memory.skipped)
