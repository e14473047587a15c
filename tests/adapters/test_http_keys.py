"""The keys in force: re-read from the keys file when it changes; a file that cannot be used changes nothing."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from conftest import TreeFactory

from retriever import Settings
from retriever.adapters.http_keys import KeysInForce
from retriever.service.access import keys_file, load_api_keys


def _write(path: Path, text: str, tick: int) -> None:
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(tick * 10**9, tick * 10**9))  # a new modification time, however fast the test runs


def _alice(tmp_path: Path, now: list[float]) -> tuple[Path, KeysInForce]:
    path = tmp_path / "keys"
    _write(path, "alice-key-0001=alice\n", 1)
    return path, _in_force(path, now)


def _in_force(path: Path, now: list[float]) -> KeysInForce:
    settings = Settings(api_keys=str(path))
    assert keys_file(settings) == path
    return KeysInForce(load_api_keys(settings), path, lambda: load_api_keys(settings), every=1.0, clock=lambda: now[0])


def test_a_changed_keys_file_is_re_read_once_the_interval_has_passed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    now = [0.0]
    path, keys = _alice(tmp_path, now)
    _write(path, "bob-key-00002=bob\n", 2)
    assert keys.current().check("alice-key-0001") is not None  # within the interval: not looked at yet
    now[0] = 1.0
    with caplog.at_level(logging.WARNING, logger="retriever.adapters.http_keys"):
        current = keys.current()
    assert current.check("alice-key-0001") is None and current.check("bob-key-00002") is not None
    assert caplog.messages == [f"keys file {path} re-read: 1 key(s) in force"]


def test_a_file_that_cannot_be_used_or_holds_no_key_leaves_the_previous_keys_in_force(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    now = [0.0]
    path, keys = _alice(tmp_path, now)
    with caplog.at_level(logging.WARNING, logger="retriever.adapters.http_keys"):
        for tick, text in ((2, "alice-key-0001=../etc\n"), (3, "# every key removed\n")):
            _write(path, text, tick)
            keys.request_check()  # as SIGHUP does: looked at now, whatever the interval
            assert keys.current().check("alice-key-0001") is not None
        path.unlink()
        keys.request_check()
        assert keys.current().check("alice-key-0001") is not None
    assert [m.split(" (")[0] for m in caplog.messages] == [f"keys file {path} changed but cannot be used"] * 3
    assert "holds no keys" in caplog.messages[1]  # an emptied file would have opened the server to anyone


def test_inline_keys_name_no_file_to_watch() -> None:
    assert keys_file(Settings(api_keys="alice-key-0001=alice")) is None
    assert keys_file(Settings()) is None


def test_a_server_takes_a_rotated_key_without_a_restart_and_sighup_does_not_end_it(
    make_tree: TreeFactory, tmp_path: Path
) -> None:
    import signal

    import httpx
    from conftest import serve_process, wait_until
    from fixtures import ACME

    path = tmp_path / "keys"
    _write(path, "old-key-000001=*\n", 1)
    env = {"RETRIEVER_API_KEYS": str(path), "RETRIEVER_STATE_DIR": str(tmp_path / "state")}
    with serve_process(make_tree(ACME), env=env) as served:
        log = served.route("/v1/dev/mcp-requests")

        def status(key: str) -> int:
            return httpx.get(log, headers={"Authorization": f"Bearer {key}"}).status_code

        assert status("old-key-000001") == 200
        _write(path, "new-key-000002=*\n", 2)
        served.process.send_signal(signal.SIGHUP)  # before: the server ended (exit 129); now it looks at once
        assert wait_until(lambda: status("new-key-000002") == 200, timeout=10)
        assert status("old-key-000001") == 401  # the removed key no longer works
        assert served.process.poll() is None


def test_a_keys_file_written_this_instant_is_read_only_once_it_has_been_still(tmp_path: Path) -> None:
    import time

    now = [0.0]
    path, keys = _alice(tmp_path, now)
    path.write_text("bob-key-00002=b", encoding="utf-8")  # an editor's half-written "bob-key-00002=bob"
    keys.request_check()
    assert keys.current().check("bob-key-00002") is None  # read mid-write, it had granted user "b"
    path.write_text("bob-key-00002=bob\n", encoding="utf-8")
    still = time.time() - 5
    os.utime(path, (still, still))
    keys.request_check()
    grant = keys.current().check("bob-key-00002")
    assert grant is not None and grant.users == frozenset({"bob"})
