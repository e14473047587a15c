"""Settings from config files: precedence, sources, paths, and the refusals (unknown keys, secrets in a tree)."""

from __future__ import annotations

import os
import re
import traceback
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.config_files import TREE_CONFIG, TREE_KEYS, VARIABLES, Source, load, user_config_path
from retriever.errors import ConfigError


@pytest.fixture
def homes(tmp_path: Path) -> dict[str, str]:
    """An environment whose user config lives under ``tmp_path/xdg`` (nothing else set)."""
    return {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _tree(tmp_path: Path, text: str | None = None) -> Path:
    root = tmp_path / "memory"
    _write(root / "a.md", "# A\n\nText.\n")
    if text is not None:
        _write(root / TREE_CONFIG, text)
    return root


def test_each_place_overrides_the_one_below_it_and_every_value_names_its_source(
    tmp_path: Path, homes: dict[str, str]
) -> None:
    root = _tree(tmp_path, "top_k = 3\nmax_sections = 3\nexcerpt_chars = 300\nmax_documents = 3\n")
    _write(user_config_path(homes), f'root = "{root}"\ntop_k = 1\nmax_sections = 1\nexcerpt_chars = 100\n')
    named = _write(tmp_path / "named.toml", "top_k = 4\nmax_sections = 4\n")
    environ = {**homes, "RETRIEVER_TOP_K": "5"}

    loaded = load({"top_k": 6}, config_file=named, environ=environ)
    again = load({}, config_file=named, environ=environ)

    assert loaded.root == root
    assert loaded.settings.top_k == 6 and loaded.source("top_k") == Source("flag", "--top-k")
    assert again.settings.top_k == 5 and again.source("top_k") == Source("env", "RETRIEVER_TOP_K")
    assert loaded.settings.max_sections == 4 and loaded.source("max_sections") == Source("--config", str(named))
    assert loaded.settings.max_documents == 3
    assert loaded.source("max_documents") == Source("tree config", str(root / TREE_CONFIG))
    assert loaded.settings.excerpt_chars == 300  # the tree's file is above the user's
    assert loaded.source("root") == Source("user config", str(user_config_path(homes)))
    assert loaded.settings.deadline_seconds == 120 and str(loaded.source("deadline_seconds")) == "default"
    user = user_config_path(homes)
    assert loaded.files == {"user config": user, "--config": named, "tree config": root / TREE_CONFIG}


PLACES = ("user config", "tree config", "--config", "env", "flag")


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from(PLACES), st.integers(1, 100), min_size=0, max_size=5))
def test_the_highest_place_that_sets_a_value_wins(
    tmp_path_factory: pytest.TempPathFactory, placed: dict[str, int]
) -> None:
    folder = tmp_path_factory.mktemp("precedence")
    environ = {"XDG_CONFIG_HOME": str(folder / "xdg")}
    root = _tree(folder, f"top_k = {placed['tree config']}\n" if "tree config" in placed else "")
    user = f'root = "{root}"\n' + (f"top_k = {placed['user config']}\n" if "user config" in placed else "")
    _write(user_config_path(environ), user)
    named = _write(folder / "named.toml", f"top_k = {placed['--config']}\n" if "--config" in placed else "")
    if "env" in placed:
        environ["RETRIEVER_TOP_K"] = str(placed["env"])

    loaded = load({"top_k": placed.get("flag")}, config_file=named, environ=environ)

    winner = next((place for place in reversed(PLACES) if place in placed), None)
    assert loaded.settings.top_k == (placed[winner] if winner else 12)
    assert loaded.source("top_k").kind == (winner or "default")


def test_an_unknown_key_names_the_file_and_the_closest_setting(tmp_path: Path, homes: dict[str, str]) -> None:
    path = _write(user_config_path(homes), "top_kk = 3\n")
    with pytest.raises(ConfigError, match=r"config\.toml: unknown setting 'top_kk'; did you mean 'top_k'\?") as caught:
        load({}, environ=homes)
    assert str(path) in caught.value.message

    _write(user_config_path(homes), "RETRIEVER_REDIS_URL = 'redis://h'\n")
    with pytest.raises(ConfigError, match="did you mean 'redis_url'"):
        load({}, environ=homes)
    _write(user_config_path(homes), "OPENAI_API_KEY = 'sk-1'\n")
    with pytest.raises(ConfigError, match="did you mean 'llm_api_key'"):
        load({}, environ=homes)


def test_a_secret_in_the_trees_file_is_refused_saying_where_it_belongs(tmp_path: Path, homes: dict[str, str]) -> None:
    root = _tree(tmp_path, 'llm_api_key = "sk-live-123"\n')
    with pytest.raises(ConfigError) as caught:
        load({"root": root}, environ=homes)
    message = caught.value.message
    assert str(root / TREE_CONFIG) in message and "llm_api_key holds a secret" in message
    assert "committed to git" in message and str(user_config_path(homes).name) in message
    assert "sk-live-123" not in message


@pytest.mark.parametrize("line", ['llm_base_url = "https://evil.example/v1"', 'allowed_hosts = "*"', "max_files = 9"])
def test_the_trees_file_cannot_redirect_calls_open_the_server_or_raise_limits(
    tmp_path: Path, homes: dict[str, str], line: str
) -> None:
    root = _tree(tmp_path, line + "\n")
    with pytest.raises(ConfigError, match=r"cannot be set in a memory tree's \.retriever\.toml"):
        load({"root": root}, environ=homes)


@pytest.mark.parametrize(
    ("line", "variable"),
    [
        ('llm_model = "o1-pro"', "RETRIEVER_LLM_MODEL"),
        ("llm_max_calls = 10", "RETRIEVER_LLM_MAX_CALLS"),
        ("llm_token_budget = 1000000000", "RETRIEVER_LLM_TOKEN_BUDGET"),
        ("llm_timeout_seconds = 1e300", "RETRIEVER_LLM_TIMEOUT_SECONDS"),
        ('llm_json_mode = "json_schema"', "RETRIEVER_LLM_JSON_MODE"),
    ],
)
def test_the_trees_file_cannot_decide_what_the_readers_llm_key_is_charged(
    tmp_path: Path, homes: dict[str, str], line: str, variable: str
) -> None:
    root = _tree(tmp_path, line + "\n")
    key = line.split(" = ")[0]
    with pytest.raises(ConfigError) as caught:
        load({"root": root}, environ=homes)
    message = caught.value.message
    assert f"{root / TREE_CONFIG}: {key} cannot be set in a memory tree's .retriever.toml" in message
    assert variable in message and "--config" in message and key not in TREE_KEYS


def test_the_readmes_list_of_keys_a_tree_may_set_is_the_codes() -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    listed = re.search(r"it may set only how the memory is answered \(([^)]*)\)", " ".join(readme.split()))
    assert listed is not None
    assert set(re.findall(r"`(\w+)`", listed[1])) == TREE_KEYS


def test_the_trees_file_may_set_how_the_memory_is_answered_beside_its_check_table(
    tmp_path: Path, homes: dict[str, str]
) -> None:
    root = _tree(tmp_path, 'top_k = 4\nllm_stages = ["target"]\n[check]\ndisable = []\n')
    loaded = load({"root": root}, environ=homes)
    assert (loaded.settings.top_k, loaded.settings.llm_stages) == (4, ("target",))
    assert set(TREE_KEYS) < set(VARIABLES)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("top_k = 0\nmax_documents = 2\n", "top_k = 0 in"),
        ('allowed_hosts = "*"\n', "allowed_hosts cannot be set in a memory tree's"),
        ("top_k = [\n", "cannot read settings from"),
    ],
)
def test_a_server_leaves_out_a_trees_file_it_cannot_use_and_says_why(
    tmp_path: Path, homes: dict[str, str], text: str, said: str
) -> None:
    root = _tree(tmp_path, text)
    _write(user_config_path(homes), "max_sections = 5\n")

    loaded = load({"root": root}, environ=homes, lenient_tree=True)

    assert (loaded.settings.top_k, loaded.settings.max_documents, loaded.settings.max_sections) == (12, 4, 5)
    assert loaded.source("top_k").kind == "default" and loaded.source("max_sections").kind == "user config"
    [warning] = loaded.warnings
    assert said in warning and str(root / TREE_CONFIG) in warning
    assert "is left out until it is fixed" in warning and f"retriever check --root {root}" in warning
    with pytest.raises(ConfigError):  # a command that is no server still stops on it
        load({"root": root}, environ=homes)


def test_a_server_still_stops_on_a_bad_value_from_elsewhere_beside_a_bad_trees_file(
    tmp_path: Path, homes: dict[str, str]
) -> None:
    root = _tree(tmp_path, "top_k = 0\n")
    with pytest.raises(ConfigError, match="RETRIEVER_MAX_SECTIONS='0'"):
        load({"root": root}, environ={**homes, "RETRIEVER_MAX_SECTIONS": "0"}, lenient_tree=True)


def test_a_server_reads_a_good_trees_file_as_any_command_does(tmp_path: Path, homes: dict[str, str]) -> None:
    root = _tree(tmp_path, "top_k = 4\n")
    loaded = load({"root": root}, environ=homes, lenient_tree=True)
    assert loaded.settings.top_k == 4 and loaded.warnings == ()


def test_a_tree_cannot_claim_another_memorys_sessions_by_setting_memory_id(
    tmp_path: Path, homes: dict[str, str]
) -> None:
    root = _tree(tmp_path, 'memory_id = "/srv/memory/hr"\n')
    with pytest.raises(ConfigError) as caught:
        load({"root": root}, environ=homes)
    message = caught.value.message
    assert f"{root / TREE_CONFIG}: memory_id cannot be set in a memory tree's .retriever.toml" in message
    assert "sessions" in message and "RETRIEVER_MEMORY_ID" in message and "--config" in message
    assert "memory_id" not in TREE_KEYS


def test_the_operator_names_the_memory_in_the_user_file_a_named_file_or_the_environment(
    tmp_path: Path, homes: dict[str, str]
) -> None:
    root = _tree(tmp_path)
    _write(user_config_path(homes), 'memory_id = "acme-handbook"\n')
    assert load({"root": root}, environ=homes).settings.memory_id == "acme-handbook"
    named = _write(tmp_path / "named.toml", 'memory_id = "acme-prod"\n')
    assert load({"root": root}, config_file=named, environ=homes).settings.memory_id == "acme-prod"
    environ = {**homes, "RETRIEVER_MEMORY_ID": "acme-env"}
    assert load({"root": root}, config_file=named, environ=environ).settings.memory_id == "acme-env"


def test_a_check_table_outside_a_tree_is_refused(tmp_path: Path, homes: dict[str, str]) -> None:
    _write(user_config_path(homes), "[check]\ndisable = []\n")
    with pytest.raises(ConfigError, match=r"\[check\] is read only from a memory tree's .retriever.toml"):
        load({}, environ=homes)


def test_relative_paths_in_a_file_are_read_from_its_folder(tmp_path: Path, homes: dict[str, str]) -> None:
    root = _tree(tmp_path)
    text = 'root = "../memory"\nstate_dir = "state"\n[graphs]\neng = "eng"\n'
    named = _write(tmp_path / "conf" / "retriever.toml", text)
    loaded = load({}, config_file=named, environ=homes)
    assert loaded.root == tmp_path / "conf" / "../memory"
    assert loaded.root.resolve() == root
    assert loaded.settings.state_dir == tmp_path / "conf" / "state"
    assert loaded.settings.graphs == {"eng": tmp_path / "conf" / "eng"}


def test_an_invalid_value_names_its_source(tmp_path: Path, homes: dict[str, str]) -> None:
    path = _write(user_config_path(homes), "top_k = 0\n")
    with pytest.raises(ConfigError, match=rf"top_k = 0 in {path}: must be a whole number from 1 to 100"):
        load({}, environ=homes)
    with pytest.raises(ConfigError, match=r"RETRIEVER_TOP_K='x': Input should be a valid integer"):
        load({}, environ={**homes, "RETRIEVER_TOP_K": "x"})


@pytest.mark.parametrize(
    ("line", "kind", "secrets"),
    [
        ('api_keys = ["k1secretABC=alice", "k2secretDEF=bob"]', "a list", ["k1secretABC", "k2secretDEF"]),
        ('api_key = ["k1secretABC"]', "a list", ["k1secretABC"]),
        ('llm_api_key = {key = "sk-live-XYZ"}', "a table", ["sk-live-XYZ"]),
        ('redis_url = ["redis://:hunter2@cache/0"]', "a list", ["hunter2"]),
    ],
)
def test_a_secret_of_the_wrong_type_names_the_key_file_and_types_but_never_the_value(
    tmp_path: Path, homes: dict[str, str], line: str, kind: str, secrets: list[str]
) -> None:
    named = _write(tmp_path / "named.toml", line + "\n")
    key = line.split(" = ")[0]
    with pytest.raises(ConfigError) as caught:
        load({}, config_file=named, environ=homes)
    message = caught.value.message
    assert f"{key} = <{kind}, not shown: {key} is a secret> in {named}: Input should be a valid string" in message
    printed = "".join(traceback.format_exception(caught.value))  # what a traceback or a log would show
    assert not [secret for secret in secrets if secret in printed]


def test_an_infinite_duration_in_a_file_names_the_file_and_the_accepted_range(
    tmp_path: Path, homes: dict[str, str]
) -> None:
    path = _write(user_config_path(homes), "refresh_seconds = inf\nsession_idle_seconds = 1e300\n")
    with pytest.raises(ConfigError) as caught:
        load({}, environ=homes)
    message = caught.value.message
    expected = "must be a number of seconds from 0.05 to 604800 (7 days)"
    assert f"refresh_seconds = inf in {path}: {expected}" in message
    assert f"session_idle_seconds = 1e+300 in {path}: must be a number of seconds above 0" in message


def test_a_named_config_file_must_exist_and_be_toml(tmp_path: Path, homes: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match=r"config file '.*nope.toml' does not exist; check --config"):
        load({}, environ={**homes, "RETRIEVER_CONFIG": str(tmp_path / "nope.toml")})
    fifo = tmp_path / "settings.toml"
    os.mkfifo(fifo)  # there, but no file to read (nor is /dev/null): before, "does not exist"
    with pytest.raises(ConfigError, match=r"config file '.*settings.toml' is not a regular file; check --config"):
        load({}, config_file=fifo, environ=homes)
    broken = _write(tmp_path / "broken.toml", "top_k = 3\nmax_sections = = 4\n")
    with pytest.raises(ConfigError, match=rf"cannot read settings from {broken}: .*line 2"):
        load({}, config_file=broken, environ=homes)


def test_the_llm_key_and_endpoint_come_from_openais_variables_or_a_file(tmp_path: Path, homes: dict[str, str]) -> None:
    environ = {**homes, "OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    loaded = load({}, environ=environ)
    assert loaded.settings.llm_api_key is not None and loaded.settings.llm_api_key.get_secret_value() == "sk-env"
    assert loaded.source("llm_base_url") == Source("env", "OPENAI_BASE_URL")

    _write(user_config_path(homes), 'llm_api_key = "sk-file"\n')
    from_file = load({}, environ=homes)
    assert from_file.settings.llm_api_key is not None
    assert from_file.settings.llm_api_key.get_secret_value() == "sk-file"
    assert "sk-file" not in repr(from_file.settings)


def test_a_file_holding_a_secret_that_others_can_read_is_warned_about(tmp_path: Path, homes: dict[str, str]) -> None:
    path = _write(user_config_path(homes), 'llm_api_key = "sk-1"\nredis_url = "redis://:pw@h/0"\n')
    path.chmod(0o644)
    assert load({}, environ=homes).warnings == (
        f"{path} holds llm_api_key, redis_url and other users can read it: chmod 600 {path}",
    )
    path.chmod(0o600)
    assert load({}, environ=homes).warnings == ()
    _write(user_config_path(homes), 'redis_url = "redis://h/0"\n').chmod(0o644)  # no password: nothing secret
    assert load({}, environ=homes).warnings == ()


# Hostile files: each is a ConfigError naming the file, with a short message, never a traceback.

HUGE = "9" * 5000  # Python refuses to read a decimal integer of over 4,300 digits (a plain ValueError in tomllib)


@pytest.mark.parametrize("place", ["tree", "--config", "RETRIEVER_CONFIG", "user config"])
def test_a_toml_integer_of_5000_digits_is_a_config_error_naming_the_file_not_a_traceback(
    tmp_path: Path, homes: dict[str, str], place: str
) -> None:
    root = _tree(tmp_path)
    path = {
        "tree": root / TREE_CONFIG,
        "--config": tmp_path / "named.toml",
        "RETRIEVER_CONFIG": tmp_path / "named.toml",
        "user config": user_config_path(homes),
    }[place]
    _write(path, f"top_k = {HUGE}\n")
    environ = {**homes, "RETRIEVER_ROOT": str(root)}
    environ |= {"RETRIEVER_CONFIG": str(path)} if place == "RETRIEVER_CONFIG" else {}
    with pytest.raises(ConfigError) as caught:
        load({}, config_file=path if place == "--config" else None, environ=environ)
    assert caught.value.message == (
        f"cannot read settings from {path}: a number has more than 4,300 digits; fix or remove the file"
    )


def test_a_hex_integer_too_long_to_print_is_shown_by_its_size(tmp_path: Path, homes: dict[str, str]) -> None:
    named = _write(tmp_path / "named.toml", f"top_k = 0x{'f' * 5000}\n")  # tomllib reads it: hex has no limit
    with pytest.raises(ConfigError) as caught:
        load({}, config_file=named, environ=homes)
    assert caught.value.message == (
        f"invalid setting: top_k = <an integer of over 4,300 digits> in {named}: must be a whole number from 1 to 100"
    )


@pytest.mark.parametrize(("value", "kind"), [("5", "an integer"), ('["a"]', "a list"), ("true", "a boolean")])
def test_a_root_that_is_not_a_string_is_a_config_error_naming_the_file_and_the_type(
    tmp_path: Path, homes: dict[str, str], value: str, kind: str
) -> None:
    named = _write(tmp_path / "named.toml", f"root = {value}\n")
    with pytest.raises(ConfigError) as caught:
        load({}, config_file=named, environ=homes)
    assert caught.value.message == (
        f"{named}: root must be a string, the memory folder's path, not {kind}; "
        'write it in quotes, e.g. root = "company_context"'
    )


def test_a_file_with_ten_thousand_invalid_items_names_five_then_counts_the_rest(
    tmp_path: Path, homes: dict[str, str]
) -> None:
    root = _tree(tmp_path, "llm_stages = [" + '"x", ' * 10_000 + "]\n")
    with pytest.raises(ConfigError) as caught:
        load({"root": root}, environ=homes)
    message = caught.value.message
    assert message.count(f"llm_stages = 'x' in {root / TREE_CONFIG}: Input should be") == 5
    assert message.endswith("; and 9995 more") and len(message) < 2000


def test_an_unknown_key_of_5000_characters_is_cut_in_the_message(tmp_path: Path, homes: dict[str, str]) -> None:
    named = _write(tmp_path / "named.toml", "k" * 5000 + " = 1\n")
    with pytest.raises(ConfigError) as caught:
        load({}, config_file=named, environ=homes)
    message = caught.value.message
    assert f"{named}: unknown setting 'kkk" in message and "[cut: 4920 more characters]'" in message
    assert len(message) < 400


def test_a_root_or_config_file_name_too_long_for_the_file_system_is_no_oserror(
    tmp_path: Path, homes: dict[str, str]
) -> None:
    long = tmp_path / ("a" * 5000)  # stat() fails with "File name too long", not "no such file"
    assert load({"root": long}, environ=homes).root == long  # opening the memory says it is no folder
    with pytest.raises(ConfigError, match=r"^config file '.*\[cut: \d+ more characters\]' does not exist"):
        load({}, config_file=long, environ=homes)


def test_a_retriever_variable_that_names_no_setting_is_a_warning_with_the_nearest_name(homes: dict[str, str]) -> None:
    environ = {**homes, "RETRIEVER_TOPK": "3", "RETRIEVER_TOKEN_BUDGET": "5", "RETRIEVER_CONFIG": "", "RETRIEVER_X": ""}
    environ["RETRIEVER_SOURCE"] = "git+https://example.invalid/r"  # read by the workflow `retriever init` writes
    loaded = load({}, environ=environ)
    assert loaded.settings.top_k == 12  # ignored, as before, but no longer silently
    assert loaded.warnings == (
        "'RETRIEVER_TOKEN_BUDGET' is no setting and is ignored; did you mean RETRIEVER_LLM_TOKEN_BUDGET?",
        "'RETRIEVER_TOPK' is no setting and is ignored; did you mean RETRIEVER_TOP_K?",
        "'RETRIEVER_X' is no setting and is ignored; `retriever status` lists the settings",
    )
