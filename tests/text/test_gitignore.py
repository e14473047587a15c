"""``.gitignore`` rules: valid lines kept and invalid ones named, matched by RE2 in linear time, bounded, and plain
rules matched as pathspec matches them without loading it (``text.gitignore``)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.text import gitignore
from retriever.text.gitignore import Plain

GITIGNORE_LINES = st.lists(st.text(alphabet="ab*?[]!\\/-z# \r", max_size=6), max_size=12)


def _compiles(line: str) -> bool:
    import pathspec

    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except (ValueError, re.error):
        return False
    return True


@settings(max_examples=300, deadline=None)
@given(GITIGNORE_LINES, st.lists(st.text(alphabet="abz-/.", min_size=1, max_size=6), max_size=5))
def test_any_gitignore_keeps_exactly_its_valid_lines_and_names_its_first_invalid_one(
    lines: list[str], paths: list[str]
) -> None:
    import pathspec

    spec, problem = gitignore.rules(lines)  # never raises
    valid = [line for line in lines if _compiles(line)]
    expected = pathspec.GitIgnoreSpec.from_lines(valid)
    assert [spec.match_file(path) for path in paths] == [expected.match_file(path) for path in paths]
    first = next((number for number, line in enumerate(lines, start=1) if not _compiles(line)), None)
    if first is None:
        assert problem is None
    else:
        assert problem is not None and problem.startswith(f"the pattern at line {first} (") and len(problem) < 400


def test_gitignore_rules_are_matched_by_re2_in_linear_time() -> None:
    # With Python's re, "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*c" against a name of 250 a's backtracked for minutes, and the
    # walk runs at every query: the memory never answered again.
    spec, why = gitignore.compiled(b"*a*a*a*a*a*a*a*a*a*a*a*a*a*a*c\n", 1 << 20, 1_000)
    assert why is None and type(spec._backend).__module__.startswith("pathspec._backends.re2")
    assert not spec.match_file("a" * 250 + ".md") and spec.match_file("a" * 250 + "c")


def test_rules_re2_cannot_hold_at_once_are_cut_to_the_first_half_it_can(monkeypatch: pytest.MonkeyPatch) -> None:
    import pathspec

    real = pathspec.GitIgnoreSpec.from_lines

    def at_most_two(lines: list[str]) -> Any:
        spec = real(lines)  # each line is read as a pattern first (an invalid one raises), then the set is built
        if len(lines) > 2:
            raise gitignore._SET_TOO_LARGE[0]("failed to compile Set")
        return spec

    monkeypatch.setattr(pathspec.GitIgnoreSpec, "from_lines", at_most_two)
    spec, why = gitignore.rules(["a.md", "b.md", "c.md", "d.md", "[z-a]"])
    assert spec.match_file("a.md") and spec.match_file("b.md") and not spec.match_file("c.md")
    assert why is not None and why.startswith("its rules are too many to match at once: only its first 2 lines apply")
    assert "the pattern at line 5 ('[z-a]') is invalid" in why


def test_a_gitignore_of_exactly_its_bound_of_lines_applies_them_all_without_a_word() -> None:
    data = "".join(f"pattern{i}.md\n" for i in range(1_000)).encode()
    spec, why = gitignore.compiled(data, 1 << 20, 1_000)
    assert why is None and spec.match_file("pattern999.md")  # before: "it has over 1,000 lines"


PLAIN_LINES = st.lists(
    st.builds(
        lambda lead, star, body, trail: f"{lead}{star}{body}{trail}",
        st.sampled_from(["", "/"]),
        st.sampled_from(["", "*"]),
        st.sampled_from(["a", "b.md", ".md", "a/b", "sub", "x.y", "a/b.md"]),
        st.sampled_from(["", "/"]),
    ),
    min_size=1,
    max_size=4,
)
PATHS = st.lists(st.sampled_from(["a", "b.md", "sub", "x.y", "c.md", "aa.md"]), min_size=1, max_size=4)


@given(PLAIN_LINES, PATHS, st.booleans())
def test_plain_rules_match_as_pathspec_matches_them(lines: list[str], parts: list[str], folder: bool) -> None:
    import pathspec

    plain = Plain.of(lines)
    path = "/".join(parts) + ("/" if folder else "")
    if plain is not None:
        assert plain.match_file(path) == pathspec.GitIgnoreSpec.from_lines(lines).match_file(path)
