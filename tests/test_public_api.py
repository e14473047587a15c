"""The public API: what ``import retriever`` exports, and that importing it stays cheap."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import REPO

import retriever

EXPORTED = [
    "ConfigError",
    "DocumentUnavailable",
    "Entity",
    "Excerpt",
    "Fact",
    "GitError",
    "InvalidArguments",
    "MemoryNotFound",
    "MemoryUnavailable",
    "Relationship",
    "Retrieval",
    "RetrievalResult",
    "RetrievalTimeout",
    "Retriever",
    "RetrieverError",
    "Settings",
    "When",
    "__version__",
]


def test_the_exported_names_are_pinned() -> None:
    assert retriever.__all__ == EXPORTED


@pytest.mark.parametrize("name", [n for n in EXPORTED if n != "__version__"])
def test_every_exported_name_is_a_class_defined_inside_the_package(name: str) -> None:
    member = getattr(retriever, name)
    assert isinstance(member, type)
    assert member.__module__.startswith("retriever.")
    assert name in dir(retriever)


def test_the_errors_users_catch_share_one_base_with_a_seed_code() -> None:
    for name in [n for n in EXPORTED if n.endswith(("Error", "Arguments", "NotFound", "Timeout", "Unavailable"))]:
        error = getattr(retriever, name)
        assert issubclass(error, retriever.RetrieverError)
        assert error.code and error.code == error.code.lower()


def test_an_unknown_name_is_an_attribute_error_that_points_at_all() -> None:
    with pytest.raises(AttributeError, match=r"no attribute 'Memory'; the public names are in retriever.__all__"):
        _ = retriever.Memory  # type: ignore[attr-defined]


def _imported(code: str) -> set[str]:
    """Top-level packages imported by a fresh interpreter running ``code``."""
    probe = f"{code}\nimport sys\nprint(' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_import_retriever_loads_neither_numpy_nor_pydantic() -> None:
    loaded = _imported("import retriever")
    assert not loaded & {"numpy", "pydantic", "click", "mcp", "starlette"}


def test_retriever_help_loads_neither_numpy_nor_pydantic() -> None:
    code = (
        "import contextlib, io, sys\n"
        "from retriever.adapters.cli import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    cli.main(['--help'], prog_name='retriever')"
    )
    loaded = _imported(code)
    assert "click" in loaded
    assert not loaded & {"numpy", "pydantic", "rich", "mcp", "starlette", "uvicorn", "redis"}
