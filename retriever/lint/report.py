"""``retriever check`` output: text for people, JSON for scripts, GitHub Actions annotations."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from retriever.lint.rules import ERROR
from retriever.lint.tree import Finding
from retriever.text.safe import json_text, one_line


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary(findings: list[Finding], files: int) -> str:
    """"3 findings (1 error, 2 warnings) in 2 of 9 files.": the files with findings, of those checked."""
    if not findings:
        return f"No findings in {_plural(files, 'file')}."
    errors = sum(f.severity == ERROR for f in findings)
    counts = f"{_plural(errors, 'error')}, {_plural(len(findings) - errors, 'warning')}"
    found_in = len({f.file for f in findings})
    return f"{_plural(len(findings), 'finding')} ({counts}) in {found_in} of {_plural(files, 'file')}."


def format_text(findings: list[Finding], files: int) -> list[str]:
    """``path:line: severity rule: message`` lines, then the summary."""
    return [*(f"{f.file}:{f.line}: {f.severity} {f.rule}: {f.message}" for f in findings), summary(findings, files)]


def format_json(findings: list[Finding], files: int) -> str:
    errors = sum(f.severity == ERROR for f in findings)
    document = {
        "findings": [f.to_dict() for f in findings],
        "files": files,
        "errors": errors,
        "warnings": len(findings) - errors,
    }
    return json_text(document)


def located(findings: list[Finding], root: Path, cwd: Path) -> list[Finding]:
    """``findings`` with each file named from ``cwd`` when it lies under it (``--root .`` in a hook or CI job: a
    path an editor opens), else as the retriever names sources, from the root's parent (``memory/x.md``)."""
    return [dataclasses.replace(f, file=_relative_to(root.parent / f.file, cwd) or f.file) for f in findings]


def format_github(findings: list[Finding], root: Path, cwd: Path) -> list[str]:
    """GitHub Actions annotations; paths relative to ``cwd`` when the file lies under it (``located``).

    Each is one line whatever a file's name or a message holds: ``%``, CR and LF are written as GitHub's
    workflow commands decode them (``%25``, ``%0D``, ``%0A``; ``:`` and ``,`` too in a property), and other
    control characters (an ESC sequence would retitle the terminal of whoever runs it locally) as escapes.
    """
    lines = []
    for f in located(findings, root, cwd):
        properties = f"file={_escape_property(f.file)},line={f.line},title={_escape_property(f.rule)}"
        lines.append(f"::{f.severity} {properties}::{_escape_data(f.message)}")
    return lines


def _relative_to(path: Path, cwd: Path) -> str | None:
    try:
        return path.relative_to(cwd.resolve()).as_posix()
    except ValueError:
        return None


def _escape_data(text: str) -> str:
    """``text`` as a workflow command's message: ``%`` first, so the escapes it writes stay unambiguous."""
    return one_line(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")
