"""``retriever check``: a linter for memory trees, for pre-commit hooks and CI.

Contract:
- Settings come from ``lint.config.load_config(root)``; the output formats are in ``lint.report``;
  the rules, one registry of them, in ``lint.rules``.
- ``check(memory, config)`` returns ``Finding``s sorted by file, line and rule.  ``file`` is the
  source path as the retriever shows it (root folder name first), ``line`` a 1-based file line,
  front matter included (1 for whole-file problems), and the message says how to fix it.  A rule lists at most
  ``LISTED_PER_FILE`` findings in one file, then one finding that counts the rest: one 1.9 MB file of "[[a]]"
  had made 380,000 findings, 100 MB of JSON and 773 MB held.
Memory files are read through ``reader`` only (``lint.tree``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator

from retriever.lint import tree as lint_tree
from retriever.lint.config import CheckConfig
from retriever.lint.rules import RULES, Rule
from retriever.lint.tree import Finding, Problem
from retriever.memory.memory import Memory

__all__ = ["Finding", "check", "files_checked"]

LISTED_PER_FILE = 50  # a rule's findings listed in one file; the rest are counted in one more


def check(memory: Memory, config: CheckConfig | None = None) -> list[Finding]:
    """Every enabled rule's findings over the memory tree, sorted by file, line and rule."""
    config = config or CheckConfig()
    tree = lint_tree.load(memory, config.known_types)
    return sorted(
        finding
        for rule in RULES.values()
        if config.enabled(rule.id)
        for finding in _listed(rule, rule.find(tree), memory.source_path)
    )


def _listed(rule: Rule, problems: Iterable[Problem], source: Callable[[str], str]) -> Iterator[Finding]:
    """``rule``'s findings, at most ``LISTED_PER_FILE`` a file, then one a file counting those not listed (at the
    first of them).  Problems are counted as they come, never all held."""
    counts: Counter[str] = Counter()
    first_unlisted: dict[str, int] = {}
    for p in problems:
        counts[p.rel_path] += 1
        if counts[p.rel_path] <= LISTED_PER_FILE:
            yield Finding(source(p.rel_path), p.line, rule.id, rule.severity, p.message)
        else:
            first_unlisted.setdefault(p.rel_path, p.line)
    for path, line in first_unlisted.items():
        more = counts[path] - LISTED_PER_FILE
        message = f"and {more:,} more {rule.id} findings in this file from this line on; fix those above, check again"
        yield Finding(source(path), line, rule.id, rule.severity, message)


def files_checked(memory: Memory) -> int:
    """Markdown files the linter looked at: readable documents plus skipped files."""
    return len(memory.state.catalog) + len(memory.skipped)
