"""The mojibake rule: UTF-8 text read as Windows-1252 and saved again."""

from __future__ import annotations

from conftest import TreeFactory
from hypothesis import given
from hypothesis import strategies as st

from retriever import Settings
from retriever.lint.check import check
from retriever.lint.encoding import _runs
from retriever.memory.memory import Memory


def _found(make_tree: TreeFactory, files: dict[str, str]) -> list[tuple[str, int, str]]:
    memory = Memory.open(make_tree(files), Settings.from_env())
    return [(f.file, f.line, f.message) for f in check(memory) if f.rule == "mojibake"]


def test_a_file_of_misread_utf8_is_one_warning_at_its_first_such_line_naming_what_each_run_was(
    make_tree: TreeFactory,
) -> None:
    page = "# Release rules\n\nWe don’t ship on Fridays.\n\nWe donâ€™t ship on Fridays.\n\nThe cafÃ© is closed.\n"
    ((file, line, message),) = _found(make_tree, {"rules.md": page})
    assert (file, line) == ("memory/rules.md", 5)
    assert message.startswith("'â€™' (was '’'), 'Ã©' (was 'é'): UTF-8 text read as Windows-1252 and saved again")
    assert "(2 lines)" in message


def test_text_in_other_scripts_and_accented_letters_written_right_are_no_mojibake(make_tree: TreeFactory) -> None:
    page = "# Offices\n\nSÃO PAULO and Zürich, a naïve café, Ä alone, Київ, 東京, “quoted” — dashes.\n\n"
    page += "Der „Fuß“ ist 30 cm; Größe: 2×\u00a03 m.\n"  # "ß“" and "×\u00a0" would be N'Ko and Hebrew
    assert _found(make_tree, {"offices.md": page}) == []


def test_of_a_run_with_a_character_after_it_the_beginning_that_was_utf8_is_named() -> None:
    assert list(_runs("cafÃ©© and Ã¶sterreich")) == ["Ã©", "Ã¶"]


@given(st.text(max_size=200))
def test_any_text_that_is_valid_utf8_as_written_yields_only_runs_that_repair(text: str) -> None:
    for run in _runs(text):
        assert run.encode("cp1252").decode("utf-8") != run
