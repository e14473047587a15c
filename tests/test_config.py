"""Settings helpers: masking credentials in URLs before they are printed or logged."""

from __future__ import annotations

import hashlib
import os
import threading
import traceback
from pathlib import Path
from typing import Any

import pytest

from retriever.config import ENV_VARIABLES, MAX_SECONDS, Settings, index_cache_dir
from retriever.errors import ConfigError
from retriever.redaction import mask_url


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        (
            "cannot reach Redis at redis://user:hunter2@127.0.0.1:6379/0: refused",
            "cannot reach Redis at redis://user:***@127.0.0.1:6379/0: refused",
        ),
        ("redis://:hunter2@cache:6379/0", "redis://***@cache:6379/0"),
        ("rediss://hunter2@cache", "rediss://***@cache"),  # a bare token is a secret too
        ("redis://u:p@ss:w@rd@host/0 and a@b", "redis://u:***@host/0 and a@b"),
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        ("no url here: a@b.c", "no url here: a@b.c"),
        ("redis://127.0.0.1:6379/0?password=s3cret", "redis://127.0.0.1:6379/0?password=***"),  # redis-py reads it
        ("unix:///run/redis.sock?db=1&Password=s3cret&x=1", "unix:///run/redis.sock?db=1&Password=***&x=1"),
        ("redis://cache/0?db=2", "redis://cache/0?db=2"),
    ],
)
def test_mask_url_hides_passwords_and_keeps_the_rest(text: str, masked: str) -> None:
    assert mask_url(text) == masked


def test_http_limits_are_read_from_the_environment() -> None:
    settings = Settings.from_env(
        {
            "RETRIEVER_ALLOWED_HOSTS": "a.example, b.example",
            "RETRIEVER_MAX_BODY_BYTES": "2048",
            "RETRIEVER_HEADER_TIMEOUT_SECONDS": "2.5",
            "RETRIEVER_MAX_SESSIONS": "7",
        }
    )
    assert settings.allowed_hosts == ("a.example", "b.example")
    assert (settings.max_body_bytes, settings.header_timeout_seconds, settings.max_sessions) == (2048, 2.5, 7)


def test_a_secret_of_the_wrong_type_passed_to_from_env_is_named_but_never_shown() -> None:
    keys = ["k1secretABC=alice"]  # a list where a string belongs
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({}, api_keys=keys)
    message = caught.value.message
    assert "api_keys=<a list, not shown: api_keys is a secret>: Input should be a valid string" in message
    assert "k1secretABC" not in "".join(traceback.format_exception(caught.value))


NUMBERS = [name for name, field in Settings.model_fields.items() if field.annotation in (int, float, float | None)]


@pytest.mark.parametrize("name", NUMBERS)
@pytest.mark.parametrize("text", ["inf", "-inf", "nan", "1e300", "99999999999999999999999"])
def test_every_number_setting_refuses_infinity_nan_and_absurd_values_naming_the_accepted_range(
    name: str, text: str
) -> None:
    variable = ENV_VARIABLES[name]
    with pytest.raises(ConfigError, match=rf"{variable}='{text}': must be a (whole )?number .*\b(to|at most) \d+"):
        Settings.from_env({variable: text})


def test_a_duration_is_refused_past_a_week_and_the_message_says_so() -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({"RETRIEVER_SESSION_IDLE_SECONDS": "inf"})
    assert caught.value.message == (
        "invalid setting: RETRIEVER_SESSION_IDLE_SECONDS='inf': must be a number of seconds above 0 and at most "
        f"{MAX_SECONDS} (7 days)"
    )


def test_the_longest_duration_accepted_is_one_every_thread_wait_accepts() -> None:
    durations = [name for name in NUMBERS if name.endswith("_seconds")]
    assert durations and MAX_SECONDS <= threading.TIMEOUT_MAX
    longest = Settings(**{**dict.fromkeys(durations, MAX_SECONDS), "store_timeout_seconds": 10})
    assert longest.refresh_seconds == MAX_SECONDS
    assert threading.Lock().acquire(timeout=longest.refresh_seconds)  # what overflowed on inf or 1e300


# The index cache folder's name: <root folder name>-<16 hex digits of sha1(absolute path)>.


def _as_named_before(root: Path) -> str:
    """The cache folder name every release so far gave ``root`` (a changed name would rebuild its cache)."""
    resolved = root.resolve()
    return f"{resolved.name}-{hashlib.sha1(str(resolved).encode(), usedforsecurity=False).hexdigest()[:16]}"


@pytest.mark.parametrize("name", ["company_context", "Mémoire d'équipe", "a" * 238, "é" * 119])
def test_a_root_whose_name_fits_keeps_its_cache_folder_name(tmp_path: Path, name: str) -> None:
    root = tmp_path / name
    root.mkdir()
    assert index_cache_dir(Settings.from_env(), root).name == _as_named_before(root)


@pytest.mark.parametrize("name", ["a" * 250, "é" * 127, "😀" * 63, "a" + "😀" * 62, "日本語" * 28])
def test_a_long_root_name_is_cut_at_a_character_so_the_cache_folder_name_fits_in_255_bytes(
    tmp_path: Path, name: str
) -> None:
    root, twin = tmp_path / name, tmp_path / "twin" / name  # the same cut name, another path
    root.mkdir()
    folder = index_cache_dir(Settings.from_env(), root).name
    cut, key = folder.rsplit("-", 1)
    assert len(os.fsencode(folder)) <= 255 and name.startswith(cut) and len(os.fsencode(cut)) > 234
    assert key == hashlib.sha1(str(root.resolve()).encode(), usedforsecurity=False).hexdigest()[:16]
    assert index_cache_dir(Settings.from_env(), twin).name != folder
    (tmp_path / "cache" / folder).mkdir(parents=True)  # the file system takes it


def test_a_root_name_that_is_not_utf8_still_gets_a_cache_folder(tmp_path: Path) -> None:
    root = Path(os.fsdecode(os.fsencode(tmp_path) + b"/mem\xff"))
    root.mkdir()
    folder = index_cache_dir(Settings.from_env(), root).name
    assert folder.startswith("mem\udcff-")
    assert folder.endswith(hashlib.sha1(os.fsencode(root.resolve()), usedforsecurity=False).hexdigest()[:16])


# Hostile values: each error names the value's range or size, and stays short.


@pytest.mark.parametrize("text", ["1e-300", "0", "0.01"])
def test_a_refresh_interval_under_a_twentieth_of_a_second_is_refused_naming_the_range(text: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({"RETRIEVER_REFRESH_SECONDS": text})  # 1e-300 had spun the watcher at 95% of a core
    assert caught.value.message == (
        f"invalid setting: RETRIEVER_REFRESH_SECONDS='{text}': must be a number of seconds from 0.05 to "
        f"{MAX_SECONDS} (7 days)"
    )
    assert Settings.from_env({"RETRIEVER_REFRESH_SECONDS": "0.05"}).refresh_seconds == 0.05


def test_a_number_below_its_range_is_refused_naming_the_range_it_accepts() -> None:
    with pytest.raises(ConfigError, match=r"RETRIEVER_TOP_K='0': must be a whole number from 1 to 100$"):
        Settings.from_env({"RETRIEVER_TOP_K": "0"})
    with pytest.raises(ConfigError, match=r"RETRIEVER_LLM_TIMEOUT_SECONDS='0': must be a number of seconds above 0"):
        Settings.from_env({"RETRIEVER_LLM_TIMEOUT_SECONDS": "0"})


def test_ten_thousand_invalid_list_items_are_named_five_times_then_counted() -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({"RETRIEVER_LLM_STAGES": "x," * 10_000})  # had printed ~900 KB
    message = caught.value.message
    assert message.count("RETRIEVER_LLM_STAGES='x': Input should be 'triage'") == 5
    assert message.endswith("; and 9995 more") and len(message) < 1000


def test_an_integer_too_long_to_print_is_shown_by_its_size_not_a_value_error() -> None:
    huge = 16**5000  # a TOML file may write it in hex; Python refuses to write it in decimal
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({}, top_k=huge, host=[huge])
    message = caught.value.message
    assert "top_k=<an integer of over 4,300 digits>: must be a whole number from 1 to 100" in message
    assert "host=<a list holding an integer of over 4,300 digits>: Input should be a valid string" in message


def test_the_llm_endpoint_is_the_settings_else_the_environments_as_the_openai_package_reads_it() -> None:
    from pydantic import SecretStr

    from retriever.endpoints import endpoint_and_key

    environ = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "env-key"}
    assert endpoint_and_key(Settings(llm_model="m"), environ) == ("http://127.0.0.1:9/v1", "env-key")
    own = Settings(llm_model="m", llm_base_url="http://127.0.0.1:8/v1", llm_api_key=SecretStr("own-key"))
    assert endpoint_and_key(own, environ) == ("http://127.0.0.1:8/v1", "own-key")
    assert endpoint_and_key(Settings(llm_model="m"), {}) == (None, None)


@pytest.mark.parametrize(
    ("name", "subdomains", "loopback"),
    [
        ("localhost", False, True),
        ("LOCALHOST", False, True),
        ("127.0.0.9", False, True),
        ("[::1]", False, True),
        ("::1", False, True),
        ("app.localhost", True, True),
        ("app.localhost", False, False),  # a name to bind is resolved by the system: only the strict set
        ("10.0.0.1", True, False),
        ("localhost.example.com", True, False),
        ("[", True, False),
    ],
)
def test_a_loopback_name_is_told_one_way_everywhere(name: str, subdomains: bool, loopback: bool) -> None:
    from retriever.endpoints import is_loopback_name

    assert is_loopback_name(name, subdomains=subdomains) is loopback


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"top_k": 0}, "invalid setting: top_k=0: must be a whole number from 1 to 100"),
        ({"bogus": 1}, "invalid setting: bogus: no such setting (its value is not shown)"),
        ({"llm_api_kye": "sk-hunter2"}, "llm_api_kye: no such setting (its value is not shown)"),
        ({"redis_url": ["redis://:hunter2@db:6379"]}, "redis_url=<a list, not shown: redis_url is a secret>"),
    ],
)
def test_settings_built_in_code_refuse_a_bad_value_with_a_config_error_naming_the_field(
    values: dict[str, Any], message: str
) -> None:
    # It had been pydantic's ValidationError, no .code, repeating every input (a Redis password among them).
    with pytest.raises(ConfigError) as refused:
        Settings(**values)
    assert message in refused.value.message and "hunter2" not in str(refused.value)


def test_from_env_names_the_variable_of_an_environment_value_and_the_field_of_one_passed_in_code() -> None:
    with pytest.raises(ConfigError) as refused:
        Settings.from_env({"RETRIEVER_TOP_K": "0"}, max_sections=0)
    assert refused.value.message == (
        "invalid setting: RETRIEVER_TOP_K='0': must be a whole number from 1 to 100; "
        "max_sections=0: must be a whole number from 1 to 50"
    )
