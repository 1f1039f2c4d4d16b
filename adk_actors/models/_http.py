"""What every HTTP provider shares: the request loop, retries, SSE, error mapping.

``HttpModel.generate`` does, in order: build the provider's payload (subclass);
POST it; on a retryable failure (429, 500, 502, 503, 504, 529, timeout, connection
error) wait and try again, up to ``max_attempts`` in all, never for other 4xx. The
wait is full-jitter exponential backoff, ``uniform(0, min(max_delay, base_delay *
2**n))``, or exactly what the provider asked for in ``Retry-After`` /
``retry-after-ms``. Streams are parsed as server-sent events; once output has been
yielded, a broken stream is a :class:`StreamInterrupted` error (a retry would repeat
it), never a hang: every read has a timeout.
"""

from __future__ import annotations

import asyncio
import json
import random
import ssl
import threading
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from .._secrets import redact, register_secret
from .._types import LlmRequest, LlmResponse
from ._errors import (
    AuthenticationError,
    BadRequestError,
    ConnectionFailed,
    MalformedResponse,
    ModelError,
    ModelTimeout,
    Overloaded,
    RateLimited,
    ServerError,
    StreamInterrupted,
)

__all__ = ["HttpModel", "RetryPolicy", "SseEvent", "classify_status", "error_for_status", "shared_ssl_context"]

_ssl_lock = threading.Lock()
_ssl_context: ssl.SSLContext | None = None


_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], httpx.AsyncClient]] = \
    weakref.WeakKeyDictionary()


def pooled_client(base_url: str, timeout: float, transport: httpx.AsyncBaseTransport | None) -> httpx.AsyncClient:
    """The one ``httpx.AsyncClient`` of this event loop for a provider endpoint (its
    base URL, timeout and transport): model calls reuse its open connections instead
    of paying a TCP (and TLS) handshake each. A run worker has one loop for its life, so
    one client per endpoint per process; :func:`close_pooled_clients` closes them."""
    loop = asyncio.get_running_loop()
    key = (base_url, timeout, id(transport) if transport is not None else None)
    clients = _clients.setdefault(loop, {})
    client = clients.get(key)
    if client is None or client.is_closed:
        client = clients[key] = httpx.AsyncClient(timeout=timeout, transport=transport,
                                                  verify=shared_ssl_context())
    return client


async def close_pooled_clients() -> None:
    """Close the pooled clients of the running loop (a run worker does it as it stops)."""
    for client in _clients.pop(asyncio.get_running_loop(), {}).values():
        await client.aclose()


def shared_ssl_context() -> ssl.SSLContext:
    """One verifying SSL context per process: httpx builds (and loads certificates
    for) a new one per client otherwise, ~20 ms on every model call."""
    global _ssl_context
    with _ssl_lock:
        if _ssl_context is None:
            _ssl_context = ssl.create_default_context()
        return _ssl_context


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 3
    base_delay: float = 1.0
    max_delay: float = 30.0

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None) -> float:
        """Seconds to wait before attempt ``attempt + 1`` (attempts count from 1)."""
        if retry_after is not None:
            return max(0.0, retry_after)
        return rng.uniform(0.0, min(self.max_delay, self.base_delay * 2 ** (attempt - 1)))


@dataclass(frozen=True)
class SseEvent:
    event: str
    data: str


def _retry_after(headers: httpx.Headers) -> float | None:
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    seconds = headers.get("retry-after")
    if seconds:
        try:
            return float(seconds)
        except ValueError:
            return None
    return None


def _message(body: bytes) -> str:
    try:
        data = json.loads(body)
    except ValueError:
        return body[:300].decode(errors="replace")
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error or data)[:300]


def classify_status(status: int, body: bytes, headers: httpx.Headers) -> ModelError:
    """A provider's HTTP error answer as our typed error (:func:`error_for_status`), its
    message without secrets (a 401 body may echo the key)."""
    return error_for_status(status, redact(f"HTTP {status}: {_message(body)}"), _retry_after(headers))


def error_for_status(status: int, message: str, retry_after: float | None) -> ModelError:
    """The typed error for a provider's HTTP status: 429 rate limited, 529 overloaded,
    401/403 refused credentials, 5xx a server error (these three told when to ask again
    when the provider said), any other a bad request."""
    if status == 429:
        return RateLimited(message, status=status, retry_after=retry_after)
    if status == 529:
        return Overloaded(message, status=status, retry_after=retry_after)
    if status in (401, 403):
        return AuthenticationError(message, status=status)
    if status >= 500:
        return ServerError(message, status=status, retry_after=retry_after)
    return BadRequestError(message, status=status)


class HttpModel:
    """Base of the provider connectors; subclasses map the wire format."""

    provider = "http"

    def __init__(
        self,
        name: str,
        *,
        base_url: str,
        api_key: str | None,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.name = name
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        register_secret(api_key)
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.sleep = sleep
        self.rng = rng or random.Random()
        self.transport = transport
        self.slept: list[float] = []  # the waits taken, for tests and logs

    def __repr__(self) -> str:  # never shows the key
        return f"{type(self).__name__}({self.name!r}, base_url={self.base_url!r})"

    # -- for subclasses ------------------------------------------------------------------

    def endpoint(self, stream: bool) -> str:
        raise NotImplementedError

    def headers(self) -> dict[str, str]:
        return {}

    def payload(self, request: LlmRequest, stream: bool) -> dict[str, Any]:
        raise NotImplementedError

    def parse(self, data: dict[str, Any]) -> LlmResponse:
        raise NotImplementedError

    def stream_parser(self) -> StreamParser:
        raise NotImplementedError

    # -- the loop ----------------------------------------------------------------------------

    async def generate(self, request: LlmRequest, *, stream: bool = False) -> AsyncIterator[LlmResponse]:
        async for response in self.send(self.payload(request, stream), stream=stream):
            yield response

    async def send(self, payload: dict[str, Any], *, stream: bool = False) -> AsyncIterator[LlmResponse]:
        """POST a built payload with the retry loop above; yield what it answers."""
        attempt = 0
        while True:
            attempt += 1
            yielded = False
            try:
                client = pooled_client(self.base_url, self.timeout, self.transport)
                if not stream:
                    response = await client.post(self.endpoint(False), json=payload, headers=self.headers())
                    if response.status_code >= 400:
                        raise classify_status(response.status_code, response.content, response.headers)
                    try:
                        data = response.json()
                    except ValueError as exc:
                        raise MalformedResponse(f"the provider sent invalid JSON: {exc}") from None
                    yield self.parse(data)
                    return
                async with client.stream("POST", self.endpoint(True), json=payload,
                                         headers=self.headers()) as response:
                    if response.status_code >= 400:
                        body = await response.aread()
                        raise classify_status(response.status_code, body, response.headers)
                    parser = self.stream_parser()
                    async for event in _sse(response):
                        for item in parser.feed(event):
                            yielded = True
                            yield item
                    final = parser.finish()
                    yielded = True
                    yield final
                    return
            except httpx.TimeoutException as exc:
                error: ModelError = ModelTimeout(redact(f"no answer from {self.provider} within {self.timeout} s: {exc}"))
            except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
                if yielded:
                    raise StreamInterrupted(redact(f"the {self.provider} stream broke mid-way: {exc}")) from None
                error = ConnectionFailed(redact(f"{self.provider} connection failed: {exc}"))
            except httpx.TransportError as exc:
                error = ConnectionFailed(redact(f"{self.provider} connection failed: {exc}"))
            except ModelError as exc:
                error = exc
            if yielded and not isinstance(error, StreamInterrupted):
                raise StreamInterrupted(f"the {self.provider} stream failed mid-way: {error}") from None
            retryable = getattr(error, "retryable", False)
            if not retryable or attempt >= self.retry.max_attempts:
                raise error
            wait = self.retry.delay(attempt, self.rng, getattr(error, "retry_after", None))
            self.slept.append(wait)
            await self.sleep(wait)


class StreamParser:
    """Turns SSE events into partial responses and, at the end, the aggregated final one."""

    def feed(self, event: SseEvent) -> list[LlmResponse]:
        raise NotImplementedError

    def finish(self) -> LlmResponse:
        raise NotImplementedError


async def _sse(response: httpx.Response) -> AsyncIterator[SseEvent]:
    event, data = "message", list[str]()
    async for line in response.aiter_lines():
        if line == "":
            if data:
                yield SseEvent(event, "\n".join(data))
            event, data = "message", []
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
    if data:
        yield SseEvent(event, "\n".join(data))


def loads(data: str, provider: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        raise MalformedResponse(f"{provider} sent an event that is not JSON: {data[:200]!r}") from None
