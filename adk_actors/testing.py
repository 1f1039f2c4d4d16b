"""Test doubles shipped with adk-actors: a provider stub server that speaks real HTTP,
and a real PostgreSQL server owned by the test run (:class:`TemporaryPostgres`).

``StubServer`` is a real HTTP/1.1 server on 127.0.0.1 (a free port, a background
thread). Script its answers in order with :class:`StubResponse`: JSON bodies, error
statuses with headers (``Retry-After``), server-sent-event streams written chunk by
chunk (with delays), streams cut off mid-way (a chunked body that never ends
properly), malformed bodies, and delays longer than a client's timeout. Every request
is recorded (path, headers, JSON body) so tests assert on the exact wire payload.
Or give it ``respond``, a function from each request to its answer, for a stand-in
that answers by what it is asked (``gemini_answers`` makes one from a function of a
``generateContent`` body, for the plain and the streamed route alike).

The builders below produce each provider's documented response shapes: OpenAI Chat
Completions (plain and streamed, tool-call deltas by index), Anthropic Messages (plain
and the full SSE event sequence, ``input_json_delta`` included) and Gemini
``generateContent`` / ``streamGenerateContent?alt=sse``.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ._temporary_postgres import PostgresUnavailable, TemporaryPostgres

__all__ = [
    "PostgresUnavailable",
    "RecordedRequest",
    "StubResponse",
    "StubServer",
    "TemporaryPostgres",
    "anthropic_error",
    "anthropic_message",
    "anthropic_stream",
    "gemini_answers",
    "gemini_cached_content",
    "gemini_error",
    "gemini_response",
    "gemini_stream",
    "openai_chat",
    "openai_error",
    "openai_stream",
]


@dataclass
class StubResponse:
    status: int = 200
    json: Any = None
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    sse: list[str] | None = None  # each item is one event's text, e.g. "data: {...}"
    delay: float = 0.0
    chunk_delay: float = 0.0
    truncate: bool = False  # stop the stream without ending the body properly


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    peer: tuple[str, int] | None = None  # the client's address: one per TCP connection


class StubServer:
    """See the module. ``respond``: answer each request by it instead of the scripted
    answers (each request is still recorded first)."""

    def __init__(self, respond: Callable[[RecordedRequest], StubResponse] | None = None) -> None:
        self.responses: deque[StubResponse] = deque()
        self.respond = respond
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                # Stream chunks as they are written (no Nagle / delayed-ACK stalls).
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = raw
                request = RecordedRequest("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body,
                                          (str(self.client_address[0]), int(self.client_address[1])))
                with server._lock:
                    server.requests.append(request)
                    scripted = None if server.respond else server.responses.popleft() if server.responses else \
                        StubResponse(status=500, json={"error": {"message": "the stub has no scripted response left"}})
                if scripted is None:
                    assert server.respond is not None
                    scripted = server.respond(request)
                if scripted.delay:
                    time.sleep(scripted.delay)
                try:
                    if scripted.sse is not None:
                        self._stream(scripted)
                    else:
                        self._plain(scripted)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_DELETE(self) -> None:  # Gemini's cachedContents delete: recorded, answered {}
                with server._lock:
                    server.requests.append(RecordedRequest("DELETE", self.path, {k.lower(): v for k, v in
                                                                               self.headers.items()}, None))
                self._plain(StubResponse(json={}))

            def _plain(self, scripted: StubResponse) -> None:
                payload = scripted.body if scripted.body is not None else json.dumps(scripted.json).encode()
                self.send_response(scripted.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for key, value in scripted.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)

            def _stream(self, scripted: StubResponse) -> None:
                self.send_response(scripted.status)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                for key, value in scripted.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                assert scripted.sse is not None
                for item in scripted.sse:
                    data = (item + "\n\n").encode()
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                    if scripted.chunk_delay:
                        time.sleep(scripted.chunk_delay)
                if scripted.truncate:
                    self.wfile.write(b"20\r\ndata: {\"cut\": tr")  # half a chunk, then the connection drops
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(b"0\r\n\r\n")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="stub-server", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def add(self, *responses: StubResponse) -> StubServer:
        with self._lock:
            self.responses.extend(responses)
        return self

    def start(self) -> StubServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _data(payload: Any) -> str:
    return "data: " + json.dumps(payload)


# -- OpenAI Chat Completions ------------------------------------------------------------------


def openai_chat(text: str | None = None, tool_calls: list[tuple[str, str, dict[str, Any]]] = (),  # type: ignore[assignment]
                finish: str | None = None, model: str = "gpt-test") -> StubResponse:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                                 for i, n, a in tool_calls]
    return StubResponse(json={
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": model,
        "choices": [{"index": 0, "message": message,
                     "finish_reason": finish or ("tool_calls" if tool_calls else "stop")}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}})


def openai_stream(pieces: list[str] = (), tool_calls: list[tuple[str, str, list[str]]] = (),  # type: ignore[assignment]
                  finish: str | None = None, **kwargs: Any) -> StubResponse:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test"}
    events = [_data({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                          "finish_reason": None}]})]
    events += [_data({**base, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]})
               for p in pieces]
    for index, (call_id, name, arg_pieces) in enumerate(tool_calls):
        events.append(_data({**base, "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}]},
            "finish_reason": None}]}))
        events += [_data({**base, "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": index, "function": {"arguments": a}}]}, "finish_reason": None}]}) for a in arg_pieces]
    events.append(_data({**base, "choices": [{"index": 0, "delta": {},
                                              "finish_reason": finish or ("tool_calls" if tool_calls else "stop")}]}))
    events.append(_data({**base, "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3,
                                                          "total_tokens": 8}}))
    events.append("data: [DONE]")
    return StubResponse(sse=events, **kwargs)


def openai_error(status: int, message: str = "error", kind: str = "server_error", **headers: str) -> StubResponse:
    return StubResponse(status=status, json={"error": {"message": message, "type": kind, "code": None}},
                        headers={k.replace("_", "-"): v for k, v in headers.items()})


# -- Anthropic Messages ------------------------------------------------------------------------------


def anthropic_message(text: str | None = None, tool_uses: list[tuple[str, str, dict[str, Any]]] = (),  # type: ignore[assignment]
                      stop_reason: str | None = None, cache_read: int | None = None,
                      cache_creation: int | None = None) -> StubResponse:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in tool_uses]
    return StubResponse(json={
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": content,
        "stop_reason": stop_reason or ("tool_use" if tool_uses else "end_turn"), "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 6,
                  **({"cache_read_input_tokens": cache_read} if cache_read is not None else {}),
                  **({"cache_creation_input_tokens": cache_creation} if cache_creation is not None else {})}})


def _event(kind: str, payload: dict[str, Any]) -> str:
    return f"event: {kind}\ndata: " + json.dumps({"type": kind, **payload})


def anthropic_stream(pieces: list[str] = (), tool_use: tuple[str, str, list[str]] | None = None,  # type: ignore[assignment]
                     stop_reason: str | None = None, **kwargs: Any) -> StubResponse:
    events = [_event("message_start", {"message": {"id": "msg_1", "type": "message", "role": "assistant",
                                                   "model": "claude-test", "content": [], "stop_reason": None,
                                                   "usage": {"input_tokens": 12, "output_tokens": 1}}})]
    index = 0
    if pieces:
        events.append(_event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}))
        events.append("event: ping\ndata: {\"type\": \"ping\"}")
        events += [_event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": p}})
                   for p in pieces]
        events.append(_event("content_block_stop", {"index": 0}))
        index = 1
    if tool_use is not None:
        call_id, name, json_pieces = tool_use
        events.append(_event("content_block_start", {"index": index, "content_block": {
            "type": "tool_use", "id": call_id, "name": name, "input": {}}}))
        events += [_event("content_block_delta", {"index": index, "delta": {"type": "input_json_delta",
                                                                              "partial_json": p}})
                   for p in json_pieces]
        events.append(_event("content_block_stop", {"index": index}))
    events.append(_event("message_delta", {"delta": {"stop_reason": stop_reason or (
        "tool_use" if tool_use else "end_turn"), "stop_sequence": None}, "usage": {"output_tokens": 9}}))
    events.append(_event("message_stop", {}))
    return StubResponse(sse=events, **kwargs)


def anthropic_error(status: int, kind: str = "api_error", message: str = "error", **headers: str) -> StubResponse:
    return StubResponse(status=status, json={"type": "error", "error": {"type": kind, "message": message}},
                        headers={k.replace("_", "-"): v for k, v in headers.items()})


# -- Gemini ----------------------------------------------------------------------------------------------


def gemini_response(text: str | None = None, function_calls: list[tuple[str, dict[str, Any]]] = (),  # type: ignore[assignment]
                    finish: str = "STOP", block_reason: str | None = None, prompt_tokens: int = 10,
                    cached_tokens: int | None = None) -> StubResponse:
    if block_reason:
        return StubResponse(json={"promptFeedback": {"blockReason": block_reason}})
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    parts += [{"functionCall": {"name": n, "args": a}} for n, a in function_calls]
    return StubResponse(json={
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}],
        "usageMetadata": {"promptTokenCount": prompt_tokens, "candidatesTokenCount": 5,
                          "totalTokenCount": prompt_tokens + 5,
                          **({"cachedContentTokenCount": cached_tokens} if cached_tokens is not None else {})},
        "modelVersion": "gemini-test"})


def gemini_cached_content(name: str = "cachedContents/stub-cache-1", model: str = "models/gemini-test",
                          ttl_seconds: int = 1800) -> StubResponse:
    """Gemini's answer to ``POST .../cachedContents``: the CachedContent resource made."""
    now = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now))
    expire = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now + ttl_seconds))
    return StubResponse(json={"name": name, "model": model, "displayName": "stub", "createTime": stamp + "Z",
                              "updateTime": stamp + "Z", "expireTime": expire + "Z",
                              "usageMetadata": {"totalTokenCount": 2100}})


def gemini_answers(answer: Callable[[Any], Any]) -> Callable[[RecordedRequest], StubResponse]:
    """A ``StubServer`` ``respond`` function from ``answer``, a function from a
    ``generateContent`` request body to its response body: that body as JSON, or as one
    server-sent event on the ``streamGenerateContent`` route."""
    def respond(request: RecordedRequest) -> StubResponse:
        reply = answer(request.body)
        if "streamGenerateContent" in request.path:
            return StubResponse(sse=[f"data: {json.dumps(reply)}"])
        return StubResponse(json=reply)
    return respond


def gemini_stream(pieces: list[str], finish: str = "STOP", **kwargs: Any) -> StubResponse:
    events = []
    for i, piece in enumerate(pieces):
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": piece}]}, "index": 0}
        if i == len(pieces) - 1:
            candidate["finishReason"] = finish
        events.append(_data({"candidates": [candidate], "modelVersion": "gemini-test",
                             "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": i + 1}}))
    return StubResponse(sse=events, **kwargs)


def gemini_error(status: int, message: str = "error", state: str = "INTERNAL", **headers: str) -> StubResponse:
    return StubResponse(status=status, json={"error": {"code": status, "message": message, "status": state}},
                        headers={k.replace("_", "-"): v for k, v in headers.items()})
