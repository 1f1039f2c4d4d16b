"""OpenAI-compatible Chat Completions (``POST {base}/chat/completions``).

Also what a LiteLLM proxy, Ollama, vLLM, OpenRouter and Azure-style endpoints speak,
through ``base_url``. Mapping, request side: the system instruction is the first
``system`` message; a model turn with tool calls is an ``assistant`` message with
``tool_calls`` (arguments as a JSON string, ids kept); each tool result is a ``tool``
message with its ``tool_call_id``, the inline media its tool returned (a function
response's ``parts``) following the tool messages in a ``user`` message (a file URI
is not sent); images are ``image_url`` data URLs; tools are
``{"type": "function", "function": {...}}``; ``response_schema`` becomes
``response_format`` (``json_schema``). Response side: text, tool calls (streamed
argument deltas are joined by index), finish reason, usage; ``content_filter`` is a
:class:`ContentBlocked` error, not an empty answer.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from .._types import Content, FunctionCall, LlmRequest, LlmResponse, Part, UsageMetadata
from ._errors import ContentBlocked, MalformedResponse
from ._http import HttpModel, SseEvent, StreamParser, loads
from ._open_calls import with_open_calls_answered

__all__ = ["OpenAIModel"]


def _messages(request: LlmRequest) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if request.system_instruction:
        messages.append({"role": "system", "content": request.system_instruction})
    for content in with_open_calls_answered(request.contents):  # OpenAI refuses a call left open
        calls = [p.function_call for p in content.parts if p.function_call is not None]
        results = [p.function_response for p in content.parts if p.function_response is not None]
        pieces: list[dict[str, Any]] = []
        # a tool's media cannot ride in its ``tool`` message (text only): it follows the
        # tool messages in the user message, as google-adk's LiteLlm sends it
        shown = [m for p in content.parts for m in ([p] if p.function_response is None else
                                                    [Part(inline_data=r.inline_data)
                                                     for r in p.function_response.parts or ()
                                                     if r.inline_data is not None])]
        for part in shown:
            if part.text is not None and not part.thought:
                pieces.append({"type": "text", "text": part.text})
            elif part.inline_data is not None:
                encoded = base64.b64encode(part.inline_data.data).decode()
                pieces.append({"type": "image_url",
                               "image_url": {"url": f"data:{part.inline_data.mime_type};base64,{encoded}"}})
        for result in results:
            messages.append({"role": "tool", "tool_call_id": result.id or result.name,
                             "content": json.dumps(result.response, default=str)})
        if content.role == "model":
            message: dict[str, Any] = {"role": "assistant",
                                       "content": "".join(p["text"] for p in pieces if p["type"] == "text") or None}
            if calls:
                message["tool_calls"] = [{"id": c.id or c.name, "type": "function",
                                          "function": {"name": c.name, "arguments": json.dumps(c.args)}}
                                         for c in calls]
            if message["content"] is not None or calls:
                messages.append(message)
        elif pieces:
            only_text = all(p["type"] == "text" for p in pieces)
            messages.append({"role": "user",
                             "content": "".join(p["text"] for p in pieces) if only_text else pieces})
    return messages


def _tool_choice(choice: Any) -> Any:
    if choice in (None, "auto"):
        return None
    if choice == "any":
        return "required"
    if choice == "none":
        return "none"
    if isinstance(choice, dict) and "name" in choice:
        return {"type": "function", "function": {"name": choice["name"]}}
    return None


def _usage(usage: Any) -> UsageMetadata | None:
    if not isinstance(usage, dict):
        return None
    return UsageMetadata.counted(usage.get("prompt_tokens"), usage.get("completion_tokens"), usage.get("total_tokens"))


def _response(text: str, calls: list[FunctionCall], finish: str | None, usage: Any, model: Any) -> LlmResponse:
    if finish == "content_filter":
        raise ContentBlocked("the provider's content filter blocked the answer")
    parts = ([Part(text=text)] if text else []) + [Part(function_call=c) for c in calls]
    return LlmResponse(content=Content(role="model", parts=tuple(parts)), finish_reason=finish, turn_complete=True,
                       usage_metadata=_usage(usage), model_version=model)


def _call(tool_call: dict[str, Any]) -> FunctionCall:
    function = tool_call.get("function") or {}
    raw = function.get("arguments") or "{}"
    try:
        args = json.loads(raw) if isinstance(raw, str) else dict(raw)
    except ValueError:
        raise MalformedResponse(f"tool call arguments are not JSON: {raw[:200]!r}") from None
    return FunctionCall(id=tool_call.get("id"), name=function.get("name", ""), args=args)


class OpenAIModel(HttpModel):
    provider = "openai"

    def endpoint(self, stream: bool) -> str:
        return f"{self.base_url}/chat/completions"

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def payload(self, request: LlmRequest, stream: bool) -> dict[str, Any]:
        config = request.config
        body: dict[str, Any] = {"model": self.name, "messages": _messages(request)}
        if request.tools:
            body["tools"] = [{"type": "function", "function": {
                "name": t.name, "description": t.description,
                "parameters": t.parameters_schema or {"type": "object", "properties": {}}}} for t in request.tools]
            choice = _tool_choice(config.get("tool_choice"))
            if choice is not None:
                body["tool_choice"] = choice
        for ours, theirs in (("temperature", "temperature"), ("top_p", "top_p"), ("max_tokens", "max_tokens"),
                             ("max_output_tokens", "max_tokens"), ("stop", "stop"), ("seed", "seed")):
            if ours in config:
                body[theirs] = config[ours]
        if "response_schema" in config:
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": "response", "schema": config["response_schema"]}}
        elif config.get("response_mime_type") == "application/json":
            body["response_format"] = {"type": "json_object"}
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def parse(self, data: dict[str, Any]) -> LlmResponse:
        try:
            choice = data["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError):
            raise MalformedResponse(f"no choices in the answer: {str(data)[:200]}") from None
        calls = [_call(c) for c in message.get("tool_calls") or []]
        return _response(message.get("content") or "", calls, choice.get("finish_reason"), data.get("usage"),
                         data.get("model"))

    def stream_parser(self) -> StreamParser:
        return _OpenAIStream()


class _OpenAIStream(StreamParser):
    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: Any = None
        self.model: Any = None
        self.done = False

    def feed(self, event: SseEvent) -> list[LlmResponse]:
        if event.data.strip() == "[DONE]":
            self.done = True
            return []
        chunk = loads(event.data, "openai")
        if isinstance(chunk, dict) and "error" in chunk:
            raise MalformedResponse(f"error in the stream: {chunk['error']}")
        self.model = chunk.get("model", self.model)
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        out: list[LlmResponse] = []
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                self.text.append(delta["content"])
                out.append(LlmResponse(content=Content(role="model", parts=(Part(text=delta["content"]),)),
                                       partial=True))
            for tool_delta in delta.get("tool_calls") or []:
                slot = self.calls.setdefault(int(tool_delta.get("index", 0)), {"id": None, "name": "", "args": ""})
                slot["id"] = tool_delta.get("id") or slot["id"]
                function = tool_delta.get("function") or {}
                slot["name"] += function.get("name") or ""
                slot["args"] += function.get("arguments") or ""
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return out

    def finish(self) -> LlmResponse:
        if not self.done and self.finish_reason is None:
            raise MalformedResponse("the stream ended without [DONE] or a finish reason (truncated)")
        calls = [_call({"id": c["id"], "function": {"name": c["name"], "arguments": c["args"] or "{}"}})
                 for _, c in sorted(self.calls.items())]
        return _response("".join(self.text), calls, self.finish_reason, self.usage, self.model)
