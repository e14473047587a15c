"""API keys bound to users: RETRIEVER_API_KEYS inline or as a file, and RETRIEVER_API_KEY for any user."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever import Settings
from retriever.compat.users import InvalidUserId, canonical_user_id
from retriever.errors import ConfigError
from retriever.service.access import MAX_KEYS_FILE_BYTES, OPEN, load_api_keys
from retriever.text.safe import preview


def test_inline_bindings_map_each_key_to_its_users_or_any() -> None:
    keys = load_api_keys(Settings(api_keys="k-alpha=alice|bob, k-beta=*"))
    alpha, beta = keys.check("k-alpha"), keys.check("k-beta")
    assert alpha is not None and alpha.users == frozenset({"alice", "bob"})
    assert alpha.allows("alice") and not alpha.allows("carol") and not alpha.allows(None)
    assert beta is not None and beta.any_user and beta.allows("carol") and beta.allows(None)
    assert keys.check("k-gamma") is None and keys.check("") is None and keys.required


def test_the_single_api_key_still_means_any_user_beside_bound_keys() -> None:
    keys = load_api_keys(Settings(api_key="solo-key", api_keys="k-alpha=alice"))
    solo = keys.check("solo-key")
    assert solo is not None and solo.any_user
    assert not load_api_keys(Settings()).required
    assert OPEN.allows("anyone")


def test_a_keys_file_holds_one_binding_per_line_with_comments(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    path.write_text("# tenants\nk-alpha = alice | bob  # team A\n\nk-ops=*\n")
    keys = load_api_keys(Settings(api_keys=str(path)))
    alpha = keys.check("k-alpha")
    assert alpha is not None and alpha.users == frozenset({"alice", "bob"})
    assert keys.check("k-ops") is not None


def test_a_keys_file_saved_with_a_byte_order_mark_loads_its_first_key(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    path.write_bytes("k-first=alice\nk-second=*\n".encode("utf-8-sig"))  # Notepad's "UTF-8 with BOM"
    keys = load_api_keys(Settings(api_keys=str(path)))
    first = keys.check("k-first")  # before: the stored key was '\ufeffk-first', which no client sends
    assert first is not None and first.users == frozenset({"alice"})
    assert keys.check("\ufeffk-first") is None


@pytest.mark.parametrize("hidden", ["\ufeff", "\u200b", "\u2060", "\u00a0", "\u3000"])
@pytest.mark.parametrize("written", ["file", "inline", "single"])
def test_a_key_holding_an_invisible_character_is_refused_naming_its_entry_never_the_key(
    tmp_path: Path, hidden: str, written: str
) -> None:
    key = f"k-top{hidden}secret"
    path = tmp_path / "keys"
    path.write_text(f"# tenants\nk-ok=*\n{key}=alice\n", encoding="utf-8")
    settings, where = {
        "file": (Settings(api_keys=str(path)), f"keys file {str(path)!r} line 3"),
        "inline": (Settings(api_keys=f"k-ok=*,{key}=alice"), "RETRIEVER_API_KEYS entry 2"),
        "single": (Settings(api_key=key), "RETRIEVER_API_KEY"),
    }[written]
    with pytest.raises(ConfigError) as caught:
        load_api_keys(settings)
    message = caught.value.message
    assert message.startswith(f"{where}: ") and f"U+{ord(hidden):04X}" in message and "remove it" in message
    assert "secret" not in message and "k-top" not in message


@pytest.mark.parametrize(
    ("hidden", "what"),
    [
        ("\x01", "a control character U+0001"),  # the HTTP server answers 400 to a header holding it
        ("\x7f", "a control character U+007F"),
        ("\x9f", "a control character U+009F"),
        ("ключ", "a non-ASCII character"),  # a header is read as Latin-1: no spelling of it matches as UTF-8
        ("é", "a non-ASCII character"),
        ("\udcff", "a non-ASCII character"),  # an environment's byte that is not UTF-8
    ],
)
@pytest.mark.parametrize("written", ["file", "inline", "single"])
def test_a_key_holding_a_control_or_non_ascii_character_is_refused_naming_its_entry_and_what_never_the_key(
    tmp_path: Path, hidden: str, what: str, written: str
) -> None:
    key = f"k-top{hidden}secret"
    path = tmp_path / "keys"
    path.write_bytes(f"k-ok=*\n{key}=alice\n".encode("utf-8", "surrogateescape"))
    settings, where = {
        "file": (Settings(api_keys=str(path)), f"keys file {str(path)!r} line 2"),
        "inline": (Settings(api_keys=f"k-ok=*,{key}=alice"), "RETRIEVER_API_KEYS entry 2"),
        "single": (Settings(api_key=key), "RETRIEVER_API_KEY"),
    }[written]
    with pytest.raises(ConfigError) as caught:  # before: loaded, and `status` said valid
        load_api_keys(settings)
    message = caught.value.message
    if written == "file" and hidden == "\udcff":  # a byte that is not UTF-8: the file is refused as such
        assert message.endswith(
            "that file cannot be read (not UTF-8); give key=user1|user2 pairs or the path of a readable keys file"
        )
        return
    assert message == (
        f"{where}: the key holds {what}, {'which the server refuses in a header' if 'control' in what else ''}"
        f"{'which a header does not carry as written' if 'non-ASCII' in what else ''}, so the key could never "
        "match; use only printable ASCII (letters, digits and punctuation, as `openssl rand -hex 32` writes)"
    )
    assert "secret" not in message and "k-top" not in message and hidden not in message


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=12))
def test_a_key_loads_exactly_when_it_is_printable_ascii_and_no_refusal_shows_it(tail: str) -> None:
    key = f"k-secret-{tail}".strip()
    try:
        keys = load_api_keys(Settings(api_key=key))
    except ConfigError as error:
        assert not all("!" <= c <= "~" for c in key)
        assert "secret" not in error.message and error.message.startswith("RETRIEVER_API_KEY: the key holds ")
        return
    assert all("!" <= c <= "~" for c in key) and keys.check(key) is not None


@pytest.mark.parametrize(
    "value",
    [
        "sk-AAA=alice sk-live-SECRETSECRETSECRET",  # a space: the second entry has no '=' of its own
        "sk-AAA=alice;sk-live-SECRETSECRETSECRET",  # no space, but a run a key is written with
        "sk-AAA=alice\tsk-live-SECRET",
    ],
)
def test_an_invalid_id_that_may_hold_a_second_key_is_never_shown(value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_api_keys(Settings(api_keys=value))
    message = caught.value.message  # before: 'alice sk-live-SECRETSECRET…' was quoted
    assert "entry 1 binds its key to no valid user id" in message and "id not shown" in message
    assert "SECRET" not in message and "alice" not in message


def test_a_keys_path_that_is_a_fifo_a_device_or_a_folder_is_refused_without_reading_it(tmp_path: Path) -> None:
    fifo = tmp_path / "keys.fifo"
    os.mkfifo(fifo)  # opened blocking, with no writer, it hung `retriever status` and `serve`
    paths = [fifo, tmp_path, *(Path(d) for d in ("/dev/zero", "/dev/null") if Path(d).exists())]
    for path in paths:  # /dev/zero was read until the memory ran out
        with pytest.raises(ConfigError) as caught:
            load_api_keys(Settings(api_keys=str(path)))
        assert caught.value.message == (
            f"RETRIEVER_API_KEYS has no '=', so it is read as a keys file path, and {str(path)!r} is not a regular "
            "file (a FIFO, a device or a folder); give key=user1|user2 pairs or the path of a readable keys file"
        )


def test_a_keys_file_over_1_mib_is_refused_and_one_just_within_loads(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    line = b"k-ok-secret=*\n"
    path.write_bytes(line + b"#" * (MAX_KEYS_FILE_BYTES - len(line)))
    assert load_api_keys(Settings(api_keys=str(path))).check("k-ok-secret") is not None
    with path.open("ab") as file:
        file.write(b"#")
    with pytest.raises(ConfigError) as caught:
        load_api_keys(Settings(api_keys=str(path)))
    message = caught.value.message
    assert message.startswith(f"keys file {str(path)!r} is over 1 MiB") and "secret" not in message


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("supersecret-no-users", "cannot be read"),  # no '=': read as a file path, which does not exist
        ("supersecret=", "the user list is empty"),
        ("supersecret=alice|", "the user list is empty"),
        ("supersecret=alice|*", "mixes '*' with names"),
        ("supersecret=a,supersecret=b", "API key number 2 repeats an earlier key"),
        ("=alice", "entry 1: expected key=user1|user2 or key=*"),
        ("super secret=alice", "entry 1: expected key=user1|user2 or key=*"),
    ],
)
def test_malformed_bindings_are_a_config_error_that_never_shows_the_key(value: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_api_keys(Settings(api_keys=value))
    assert expected in caught.value.message
    assert "supersecret" not in caught.value.message and "secret" not in caught.value.message


def test_a_keys_name_follows_the_key_not_its_place_in_the_list() -> None:
    first = load_api_keys(Settings(api_keys="k-alpha-secret=alice,k-beta-secret=bob"))
    reordered = load_api_keys(Settings(api_key="k-solo-secret", api_keys="k-beta-secret=bob,k-alpha-secret=alice"))
    for key in ("k-alpha-secret", "k-beta-secret"):
        before, after = first.check(key), reordered.check(key)
        assert before is not None and after is not None
        assert before.name == after.name  # before: key-1 became key-2, and inherited the other key's sessions
    names = [grant.name for _, grant in reordered.entries]
    assert len(set(names)) == 3
    assert all("secret" not in name and "alpha" not in name for name in names)  # the name never shows the key


# -- user ids: one canonical form, and no binding to a user that can never exist ----------------------

JOSE_NFC, JOSE_NFD = unicodedata.normalize("NFC", "José"), unicodedata.normalize("NFD", "José")


@pytest.mark.parametrize("written", [JOSE_NFC, JOSE_NFD])
def test_a_key_bound_to_a_name_acts_for_it_in_either_unicode_spelling(written: str) -> None:
    assert JOSE_NFC != JOSE_NFD
    grant = load_api_keys(Settings(api_keys=f"k-jose=alice|{written}")).check("k-jose")
    assert grant is not None and grant.users == frozenset({"alice", JOSE_NFC})  # kept as the user's folder is named
    assert grant.allows(JOSE_NFC) and grant.allows(JOSE_NFD)  # before: only the spelling written in the setting
    assert not grant.allows("../alice") and not grant.allows("")


def test_a_key_bound_only_to_invalid_user_ids_is_a_config_error_naming_the_entry_and_the_ids() -> None:
    with pytest.raises(ConfigError) as caught:
        load_api_keys(Settings(api_keys="k-open-secret=*,k1-secret=../etc|bad:name"))
    message = caught.value.message  # before: the key loaded, and worked for nobody
    assert message.startswith("RETRIEVER_API_KEYS entry 2 binds its key to no valid user id, so the key would act")
    assert "'../etc', 'bad:name'" in message and "not starting with '.'" in message
    assert "secret" not in message


def test_invalid_user_ids_beside_valid_ones_are_named_too(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    path.write_text("k-ops-secret=*\n# tenants\nk-team-secret = alice | ../etc | .hidden | bob\n")
    with pytest.raises(ConfigError) as caught:
        load_api_keys(Settings(api_keys=str(path)))
    message = caught.value.message
    assert f"keys file {str(path)!r} line 3 binds its key to '../etc', '.hidden', not valid user ids" in message
    assert "'alice'" not in message and "'bob'" not in message and "secret" not in message


def test_entries_run_together_are_refused_without_showing_the_second_key() -> None:
    with pytest.raises(ConfigError) as caught:
        load_api_keys(Settings(api_keys="k-first-secret=alice k-second-secret=bob"))  # a space, not a ','
    message = caught.value.message
    assert "entry 1 binds its key to no valid user id" in message and "not shown" in message
    assert "secret" not in message and "bob" not in message


def test_the_message_about_invalid_ids_stays_bounded_however_many_and_long_they_are() -> None:
    entries = ",".join(f"k-{n}-secret=" + "|".join(f"bad id {i}" + "x" * 5000 for i in range(50)) for n in range(50))
    with pytest.raises(ConfigError) as caught:
        load_api_keys(Settings(api_keys=entries))
    message = caught.value.message
    assert "and 45 more" in message and "and 40 more entries" in message
    assert len(message) < 5000 and "secret" not in message


# -- properties of the key-binding parser -------------------------------------------------------------


def _valid(user: str) -> bool:
    try:
        canonical_user_id(user)
    except InvalidUserId:
        return False
    return True


USER_IDS = st.text(
    st.characters(categories=("L", "M", "N"), include_characters="_.@-"), min_size=1, max_size=12
).filter(_valid)
INVALID_USER_IDS = st.text(st.characters(exclude_characters=",|\n"), min_size=1, max_size=60).filter(
    lambda u: u.strip() not in ("", "*") and not _valid(u)
)
KEYS = st.binary(min_size=8, max_size=8).map(lambda b: f"k-{b.hex()}")
BINDINGS = st.dictionaries(KEYS, st.none() | st.lists(st.tuples(USER_IDS, st.booleans()), min_size=1, max_size=4))


def _written(users: list[tuple[str, bool]] | None) -> str:
    """A binding's users as an operator may write them: each in NFD or NFC."""
    return "*" if users is None else "|".join(unicodedata.normalize("NFD" if d else "NFC", u) for u, d in users)


@settings(max_examples=80, deadline=None)
@given(BINDINGS.filter(bool))
def test_any_valid_bindings_load_each_key_with_its_users_canonical_inline_or_from_a_file(
    tmp_path_factory: pytest.TempPathFactory, bindings: dict[str, list[tuple[str, bool]] | None]
) -> None:
    text = [f"{key}={_written(users)}" for key, users in bindings.items()]
    path = tmp_path_factory.mktemp("keys") / "keys"
    path.write_text("\n".join(text), encoding="utf-8")
    for keys in (load_api_keys(Settings(api_keys=",".join(text))), load_api_keys(Settings(api_keys=str(path)))):
        for key, users in bindings.items():
            grant = keys.check(key)
            assert grant is not None
            if users is None:
                assert grant.any_user
                continue
            assert grant.users == {unicodedata.normalize("NFC", u) for u, _ in users}
            assert all(grant.allows(unicodedata.normalize(form, u)) for u, _ in users for form in ("NFC", "NFD"))


@settings(max_examples=120, deadline=None)
@given(BINDINGS, st.lists(USER_IDS, max_size=2), INVALID_USER_IDS, st.integers(0, 10))
def test_any_invalid_user_id_is_refused_naming_its_entry_and_never_a_key(
    bindings: dict[str, list[tuple[str, bool]] | None], valid: list[str], invalid: str, place: int
) -> None:
    text = [f"{key}={_written(users)}" for key, users in bindings.items()]
    place = min(place, len(text))
    text.insert(place, f"k-bad-entry-key={'|'.join([*valid, invalid])}")
    with pytest.raises(ConfigError) as caught:
        load_api_keys(Settings(api_keys=",".join(text)))
    message = caught.value.message
    assert message.startswith(f"RETRIEVER_API_KEYS entry {place + 1} binds its key to ")
    assert preview(invalid.strip(), 40) in message or "not shown" in message
    assert ("act for no one" in message) == (not valid)
    assert not any(key in message for key in [*bindings, "k-bad-entry-key"])
