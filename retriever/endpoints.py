"""Where the LLM endpoint is and which hosts are this machine: read by the LLM client, ``retriever status``, the
HTTP guard and ``retriever serve`` alike, so they never disagree.

Contract: ``endpoint_and_key(settings)`` is the endpoint's base URL and key (the settings', else the environment's, as
the openai package reads it); ``is_loopback_name(name)`` tells a loopback host name or address.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping

from retriever.config import Settings

OPENAI_URL = "https://api.openai.com/v1"  # the openai package's endpoint when none is set


def is_loopback_name(name: str, *, subdomains: bool = True) -> bool:
    """Whether a host name or address names this machine: ``localhost``, 127.0.0.0/8, ``::1`` (in brackets or not),
    and with ``subdomains`` a ``*.localhost`` name (RFC 6761: browsers and most resolvers keep it on loopback; a
    name to bind, which the system resolves, is held to the strict set)."""
    host = name.strip("[]").lower()
    if host == "localhost" or (subdomains and host.endswith(".localhost")):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def endpoint_and_key(settings: Settings, environ: Mapping[str, str] | None = None) -> tuple[str | None, str | None]:
    """The LLM endpoint's base URL and key: the settings', else ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` from the
    environment, as the openai package reads them (``Settings.from_env`` maps them; a ``Settings`` built in code does
    not); None where neither says (``OPENAI_URL``; no key).  The client and ``retriever status`` both ask here."""
    env = os.environ if environ is None else environ
    secret = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    return settings.llm_base_url or env.get("OPENAI_BASE_URL") or None, secret or env.get("OPENAI_API_KEY") or None
