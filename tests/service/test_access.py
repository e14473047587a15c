"""API keys bound to users: RETRIEVER_API_KEYS inline or as a file, and RETRIEVER_API_KEY for any user."""

from __future__ import annotations

from pathlib import Path

import pytest

from retriever import Settings
from retriever.errors import ConfigError
from retriever.service.access import OPEN, load_api_keys


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
