"""What ``retriever serve`` decides before it serves (``adapters.serve_support``)."""

from __future__ import annotations

import pytest

from retriever.adapters import serve_support


@pytest.mark.parametrize("host", ["0.0.0.0", "::", ""])
def test_listening_on_all_interfaces_with_no_allowed_host_names_the_setting_that_admits_clients(host: str) -> None:
    notice = serve_support.all_interfaces_notice(host, ())
    assert notice is not None and "RETRIEVER_ALLOWED_HOSTS" in notice and "421" in notice


@pytest.mark.parametrize(
    ("host", "allowed"), [("0.0.0.0", ("memory.example.com",)), ("127.0.0.1", ()), ("10.0.0.5", ())]
)
def test_no_notice_for_a_named_interface_or_once_allowed_hosts_are_set(host: str, allowed: tuple[str, ...]) -> None:
    assert serve_support.all_interfaces_notice(host, allowed) is None
