"""The three tools that open a URL a model chose (``load_web_page``, an OpenAPI tool's
request, a computer's ``navigate``) refuse the same hosts: one rule
(``adk_actors/tools/_public_address.py``), so a host one of them refuses is refused by
all, before any connection. Each host below was let through by at least one of the
three when each kept its own copy of the rule.

Every name resolves, in these tests, to a public address (``socket.getaddrinfo``
patched), so a name is refused for what it names, not because this machine cannot
resolve it; and no request leaves the process (httpx's transports record the attempt
and fail it)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from adk_actors.tools.computer_use._guards import refusal
from adk_actors.tools.load_web_page import load_web_page
from adk_actors.tools.openapi_tool._network import send

PUBLIC_V4 = "93.184.216.34"

REFUSED = [
    "metadata.goog",  # cloud metadata by name
    "metadata",
    "ip6-localhost",  # this machine by another name
    "localhost.localdomain",
    "db.internal",
    "printer.local",
    "[::7f00:1]",  # IPv4-compatible IPv6 carrying 127.0.0.1
    "[::a00:1]",  # ... carrying 10.0.0.1
    "[64:ff9b::a9fe:a9fe]",  # NAT64 carrying 169.254.169.254
    "[2002:a00:1::1]",  # 6to4 carrying 10.0.0.1
    "[::ffff:127.0.0.1]",
    "127.0.0.1",
    "169.254.169.254",
]

PUBLIC = [PUBLIC_V4, "[2606:4700:4700::1111]", "example.com"]


@pytest.fixture
def attempts(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every name resolves to a public address; every request is recorded and failed
    instead of sent."""
    sent: list[str] = []

    def lookup(host: str, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (PUBLIC_V4, port or 80))]

    def record(self: Any, request: httpx.Request) -> httpx.Response:
        sent.append(str(request.url))
        raise httpx.ConnectError("not sent in this test", request=request)

    async def record_async(self: Any, request: httpx.Request) -> httpx.Response:
        return record(self, request)

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    monkeypatch.setattr(httpx.HTTPTransport, "handle_request", record)
    monkeypatch.setattr(httpx.AsyncHTTPTransport, "handle_async_request", record_async)
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    yield sent


def _openapi_refuses(url: str) -> bool:
    try:
        asyncio.run(send({"method": "GET", "url": url}))
    except ValueError as exc:
        assert str(exc).startswith("Blocked host: ")
        return True
    except httpx.ConnectError:
        return False
    raise AssertionError("the recorded transport always fails")


@pytest.mark.parametrize("host", REFUSED)
def test_each_tool_refuses_a_host_off_the_public_internet_before_connecting(host: str, attempts: list[str]) -> None:
    url = f"http://{host}/page"
    assert load_web_page(url) == f"Failed to fetch url: {url}"
    assert _openapi_refuses(url)
    assert asyncio.run(refusal(url, private_allowed=False)) is not None
    assert attempts == []


@pytest.mark.parametrize("host", PUBLIC)
def test_each_tool_lets_a_public_host_through(host: str, attempts: list[str]) -> None:
    url = f"http://{host}/page"
    assert load_web_page(url) == f"Failed to fetch url: {url}"  # the recorded transport failed it
    assert not _openapi_refuses(url)
    assert asyncio.run(refusal(url, private_allowed=False)) is None
    assert len(attempts) == 2  # load_web_page's and the OpenAPI tool's (navigate only vets)
