"""``retriever check`` settings from hostile files: each is a ConfigError naming the file, with a short message."""

from __future__ import annotations

from pathlib import Path

import pytest

from retriever.errors import ConfigError
from retriever.lint.config import load_config
from retriever.lint.tree import LOCAL_CONFIG


def _repository(tmp_path: Path, pyproject: str | None = None, local: str | None = None) -> Path:
    """A repository (``.git`` bounds the search for ``pyproject.toml``) holding the memory tree ``memory``."""
    (tmp_path / ".git").mkdir()
    root = tmp_path / "memory"
    root.mkdir()
    if pyproject is not None:
        (tmp_path / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    if local is not None:
        (root / LOCAL_CONFIG).write_text(local, encoding="utf-8")
    return root


@pytest.mark.parametrize("where", ["pyproject", "local"])
def test_a_toml_integer_of_5000_digits_is_a_config_error_naming_the_file_not_a_traceback(
    tmp_path: Path, where: str
) -> None:
    table = "[tool.retriever.check]" if where == "pyproject" else "[check]"
    text = f"{table}\ndisable = [{'9' * 5000}]\n"
    root = _repository(tmp_path, **{where: text})
    path = tmp_path / "pyproject.toml" if where == "pyproject" else root / LOCAL_CONFIG
    with pytest.raises(ConfigError) as caught:
        load_config(root)
    assert caught.value.message == (
        f"cannot read check settings from {path}: a number has more than 4,300 digits; fix or remove the file"
    )


def test_200_unknown_rule_names_of_1000_characters_are_named_five_times_each_cut_short(tmp_path: Path) -> None:
    names = ", ".join(f'"{n:03}{"x" * 1000}"' for n in range(200))
    root = _repository(tmp_path, local=f"[check]\ndisable = [{names}]\n")
    with pytest.raises(ConfigError) as caught:
        load_config(root)  # had made a 201 KB message
    message = caught.value.message
    assert f"{root / LOCAL_CONFIG}: [check] disable names unknown rule(s) 000xxx" in message
    assert message.count("…[cut: 923 more characters]") == 5 and "004x" in message and "005x" not in message
    assert " and 195 more; known: " in message and len(message) < 1500


def test_unknown_check_keys_are_named_five_at_most_each_cut_short_and_on_one_line(tmp_path: Path) -> None:
    keys = "\n".join(f'"{n}\\n{"k" * 1000}" = 1' for n in range(10))
    root = _repository(tmp_path, pyproject=f"[tool.retriever.check]\n{keys}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(root)
    message = caught.value.message
    assert message.startswith(f"{tmp_path / 'pyproject.toml'}: [tool.retriever.check] has unknown key(s) 0\\nkkk")
    assert "\n" not in message and message.count("[cut: ") == 5
    assert message.endswith(" and 5 more; it takes `disable` and `types`") and len(message) < 1000
