"""Anthropic Messages (``POST {base}/v1/messages``, ``anthropic-version: 2023-06-01``).

Request side: ``system`` carries the instruction; turns alternate user/assistant
(consecutive same-role turns are merged); tool calls are ``tool_use`` blocks (ids
kept, Anthropic pairs by id) and results ``tool_result`` blocks in a user turn
(with the media a tool returned as blocks of their own, see :func:`_media_block`);
images are base64 ``image`` blocks; ``max_tokens`` is required (default 4096); a
response schema goes in ``output_config.format`` (``json_schema``) and an
``AnthropicGenerateContentConfig``'s ``effort`` in ``output_config.effort``; sampling
parameters (temperature, top_p) are not sent: the current API takes none.
Response side: text and ``tool_use`` blocks; streamed ``text_delta`` and
``input_json_delta`` are joined per content block; ``stop_reason`` ``refusal`` is a
:class:`ContentBlocked` error; an ``error`` event mid-stream raises its typed error.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from .._types import (
    Content,
    FunctionCall,
    FunctionResponsePart,
    LlmRequest,
    LlmResponse,
    Part,
    UsageMetadata,
)
from ._context_cache import anthropic_breakpoints
from ._errors import (
    ContentBlocked,
    MalformedResponse,
    ModelError,
    Overloaded,
    RateLimited,
    ServerError,
)
from ._http import HttpModel, SseEvent, StreamParser, loads
from ._open_calls import with_open_calls_answered

__all__ = ["AnthropicModel"]

API_VERSION = "2023-06-01"


def _blocks(content: Content) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in content.parts:
        if part.text is not None and not part.thought:
            if part.text:
                blocks.append({"type": "text", "text": part.text})
        elif part.inline_data is not None:
            blocks.append({"type": "image", "source": {"type": "base64", "media_type": part.inline_data.mime_type,
                                                        "data": base64.b64encode(part.inline_data.data).decode()}})
        elif part.function_call is not None:
            call = part.function_call
            blocks.append({"type": "tool_use", "id": call.id or call.name, "name": call.name, "input": call.args})
        elif part.function_response is not None:
            result = part.function_response
            text = json.dumps(result.response, default=str)
            blocks.append({"type": "tool_result", "tool_use_id": result.id or result.name,
                           "content": [{"type": "text", "text": text}, *map(_media_block, result.parts)]
                           if result.parts else text,
                           **({"is_error": True} if "error" in result.response else {})})
    return blocks


def _media_block(media: FunctionResponsePart) -> dict[str, Any]:
    """A tool's media as a block of its ``tool_result``: inline bytes as a base64
    ``image`` block (an ``image/*`` type) or ``document`` block (a PDF); a URI as an
    ``image`` / ``document`` ``url`` block when it is ``http(s)``; anything else, which
    Anthropic cannot take, as a text block that names what was left out."""
    blob, file = media.inline_data, media.file_data
    if blob is not None:
        kind = "image" if blob.mime_type.startswith("image/") else \
            "document" if blob.mime_type == "application/pdf" else None
        if kind is not None:
            return {"type": kind, "source": {"type": "base64", "media_type": blob.mime_type,
                                             "data": base64.b64encode(blob.data).decode()}}
        return {"type": "text", "text": f"[the tool returned {blob.mime_type} data, not sent: Anthropic does not "
                                        f"take it]"}
    uri, mime = (file.file_uri or "", file.mime_type or "") if file is not None else ("", "")
    kind = "image" if mime.startswith("image/") else "document" if mime == "application/pdf" else None
    if kind is not None and uri.startswith(("https://", "http://")):
        return {"type": kind, "source": {"type": "url", "url": uri}}
    return {"type": "text", "text": f"[the tool returned a file, not sent: {mime or 'no type'} at {uri}]"}


def _messages(request: LlmRequest) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for content in with_open_calls_answered(request.contents):  # Anthropic refuses a call left open
        role = "assistant" if content.role == "model" else "user"
        blocks = _blocks(content)
        if not blocks:
            continue
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})
    return messages


def _stream_error(payload: dict[str, Any]) -> ModelError:
    error = payload.get("error") or {}
    kind, message = error.get("type", "error"), error.get("message", str(error))
    if kind == "overloaded_error":
        return Overloaded(message)
    if kind == "rate_limit_error":
        return RateLimited(message)
    return ServerError(f"{kind}: {message}")


def _usage(usage: dict[str, Any]) -> UsageMetadata:
    """Anthropic's counts as google-adk reads them: the prompt count includes the
    tokens read from and written to the prompt cache; ``cached_content_token_count`` is
    ``cache_read_input_tokens`` (a part of the prompt count)."""
    read = usage.get("cache_read_input_tokens")
    prompt = sum(v for v in (usage.get("input_tokens"), read, usage.get("cache_creation_input_tokens"))
                 if isinstance(v, int)) if isinstance(usage.get("input_tokens"), int) else None
    counted = UsageMetadata.counted(prompt, usage.get("output_tokens"))
    if isinstance(read, int):
        return counted.model_copy(update={"cached_content_token_count": read})
    return counted


def _response(blocks: list[dict[str, Any]], stop: str | None, usage: Any, model: Any) -> LlmResponse:
    if stop == "refusal":
        raise ContentBlocked("the model refused to answer (stop_reason: refusal)")
    parts: list[Part] = []
    for block in blocks:
        if block.get("type") == "text" and block.get("text"):
            parts.append(Part(text=block["text"]))
        elif block.get("type") == "tool_use":
            parts.append(Part(function_call=FunctionCall(id=block.get("id"), name=block.get("name", ""),
                                                         args=block.get("input") or {})))
    usage_metadata = None
    if isinstance(usage, dict):
        usage_metadata = _usage(usage)
    return LlmResponse(content=Content(role="model", parts=tuple(parts)), finish_reason=stop, turn_complete=True,
                       usage_metadata=usage_metadata, model_version=model)


class AnthropicModel(HttpModel):
    provider = "anthropic"
    #: ``max_tokens`` when the request's config sets none (``Claude(max_tokens=...)`` sets it)
    max_tokens = 4096

    def endpoint(self, stream: bool) -> str:
        return f"{self.base_url}/v1/messages"

    def headers(self) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if self.api_key:
            headers["x-api-key"] = self.api_key
        return headers

    def payload(self, request: LlmRequest, stream: bool) -> dict[str, Any]:
        config = request.config
        body: dict[str, Any] = {"model": self.name, "messages": _messages(request),
                                "max_tokens": config.get("max_tokens") or config.get("max_output_tokens") or self.max_tokens}
        if request.system_instruction:
            body["system"] = request.system_instruction
        if request.tools:
            body["tools"] = [{"name": t.name, "description": t.description,
                              "input_schema": t.parameters_schema or {"type": "object", "properties": {}}}
                             for t in request.tools]
            choice = config.get("tool_choice")
            if choice == "any":
                body["tool_choice"] = {"type": "any"}
            elif isinstance(choice, dict) and "name" in choice:
                body["tool_choice"] = {"type": "tool", "name": choice["name"]}
        if "stop" in config:
            body["stop_sequences"] = config["stop"] if isinstance(config["stop"], list) else [config["stop"]]
        if "response_schema" in config:
            body["output_config"] = {"format": {"type": "json_schema", "schema": config["response_schema"]}}
        if config.get("effort"):  # AnthropicGenerateContentConfig(effort=...), as google-adk sends it
            body.setdefault("output_config", {})["effort"] = config["effort"]
        # temperature / top_p: the current Messages API takes no sampling parameters
        # (the SDK's request type has none), so they are not sent.
        anthropic_breakpoints(body, request)  # context caching (a no-op without a cache config)
        if stream:
            body["stream"] = True
        return body

    def parse(self, data: dict[str, Any]) -> LlmResponse:
        if data.get("type") == "error":
            raise _stream_error(data)
        if not isinstance(data.get("content"), list):
            raise MalformedResponse(f"no content in the answer: {str(data)[:200]}")
        return _response(data["content"], data.get("stop_reason"), data.get("usage"), data.get("model"))

    def stream_parser(self) -> StreamParser:
        return _AnthropicStream()


class _AnthropicStream(StreamParser):
    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.json_parts: dict[int, list[str]] = {}
        self.stop: str | None = None
        self.usage: dict[str, Any] = {}
        self.model: Any = None
        self.stopped = False

    def feed(self, event: SseEvent) -> list[LlmResponse]:
        if event.event == "ping":
            return []
        payload = loads(event.data, "anthropic")
        kind = payload.get("type", event.event)
        if kind == "error":
            raise _stream_error(payload)
        if kind == "message_start":
            message = payload.get("message") or {}
            self.model = message.get("model")
            self.usage.update(message.get("usage") or {})
        elif kind == "content_block_start":
            self.blocks[payload["index"]] = dict(payload.get("content_block") or {})
        elif kind == "content_block_delta":
            index, delta = payload["index"], payload.get("delta") or {}
            block = self.blocks.setdefault(index, {"type": "text", "text": ""})
            if delta.get("type") == "text_delta":
                block["text"] = block.get("text", "") + delta.get("text", "")
                return [LlmResponse(content=Content(role="model", parts=(Part(text=delta.get("text", "")),)),
                                    partial=True)]
            if delta.get("type") == "input_json_delta":
                self.json_parts.setdefault(index, []).append(delta.get("partial_json", ""))
        elif kind == "content_block_stop":
            index = payload["index"]
            if index in self.json_parts:
                raw = "".join(self.json_parts.pop(index)) or "{}"
                try:
                    self.blocks[index]["input"] = json.loads(raw)
                except ValueError:
                    raise MalformedResponse(f"tool input is not JSON: {raw[:200]!r}") from None
        elif kind == "message_delta":
            self.stop = (payload.get("delta") or {}).get("stop_reason") or self.stop
            self.usage.update(payload.get("usage") or {})
        elif kind == "message_stop":
            self.stopped = True
        return []

    def finish(self) -> LlmResponse:
        if not self.stopped:
            raise MalformedResponse("the stream ended without message_stop (truncated)")
        return _response([self.blocks[i] for i in sorted(self.blocks)], self.stop, self.usage, self.model)
