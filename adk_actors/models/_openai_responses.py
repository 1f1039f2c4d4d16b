"""OpenAI's Responses API (``POST {base}/responses``): the connector behind
``OpenAIResponsesLlm`` / ``AzureOpenAIResponsesLlm``, with google-adk 2.13's mapping.

Request side: the system instruction is ``instructions``; each content becomes
``input`` items in order: a user turn's texts and media one ``message`` (``input_text``,
``input_image`` with a data URL or the file's URI, ``input_file``), each model text
its own ``assistant`` message, a function call a ``function_call`` item (``call_id``,
``name``, ``arguments`` as a JSON string), a tool's result a ``function_call_output``
item with the same ``call_id`` (its ``result`` or ``content`` text, else its JSON);
thoughts are not sent back. A call id the API would refuse (other than letters,
digits, ``_`` and ``-``) is replaced, the same in the call and its result, by
``call_adk_fallback_<n>``. Tools are ``{"type": "function", "name", "description",
"parameters", "strict": false}``; the function-calling mode is ``tool_choice``
(``ANY`` required, ``NONE`` none, ``AUTO`` auto); ``temperature``, ``top_p``,
``max_output_tokens`` as given (a reasoning model's non-default temperature/top_p
dropped with a warning); stop sequences as ``stop``; an output schema as ``text.format``
``json_schema`` (strict: every object closed, every property required). The
model-level options (``store``, ``include``, ``reasoning``, ``parallel_tool_calls``,
``truncation``, ``service_tier``) and ``extra_request_args`` are laid over that.

Response side: ``output_text`` parts as text, a ``refusal`` as text prefixed
``OpenAI refusal: ``, ``function_call`` items as calls (``call_id``), reasoning
summaries as thoughts; ``usage`` as usage metadata (cached and reasoning tokens
included); status ``completed`` is finish reason ``STOP``, ``incomplete`` is
``MAX_TOKENS`` (or ``OTHER``) with the content kept (google-adk also sets
``error_code``, which our engine would turn into an error event without the text).
A ``failed`` or ``cancelled`` response, a ``response.failed`` or ``error`` stream
event, are typed errors; so are call arguments that are not a JSON object (a
:class:`MalformedResponse`; google-adk logs them and calls with no arguments). Streaming yields
each ``response.output_text.delta`` (and reasoning delta) as a partial response, and
a function call's start and each piece of its arguments as a partial call (id and
name; as google-adk relays them, the call is made from the final response only); it
joins ``response.function_call_arguments`` deltas per output item and ends with the
``response.completed`` response (its output, else what the stream gave); a stream
that ends before it is a :class:`MalformedResponse` (truncated), which the request
loop turns into :class:`StreamInterrupted` once partials were yielded.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import inspect
import json
import logging
import re
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import urlencode

from .._secrets import redact, register_secret
from .._types import Content, FunctionCall, LlmRequest, LlmResponse, Part, UsageMetadata
from ._base import ModelError
from ._errors import BadRequestError, MalformedResponse, RateLimited, ServerError
from ._http import HttpModel, SseEvent, StreamParser, loads

__all__ = ["CallIds", "OpenAIResponsesModel", "failure", "input_items", "lowercase_types", "response_of",
           "strict_schema", "text_format", "tool_choice"]

_log = logging.getLogger(__name__)

REFUSAL_PREFIX = "OpenAI refusal: "
_CALL_ID = re.compile(r"[a-zA-Z0-9_-]+")


class CallIds:
    """The call ids of one request as the API takes them (see the module)."""

    def __init__(self) -> None:
        self.replaced: dict[str, str] = {}
        self.count = 0

    def __call__(self, call_id: str | None) -> str:
        if call_id and _CALL_ID.fullmatch(call_id):
            return call_id
        if call_id and call_id in self.replaced:
            return self.replaced[call_id]
        fresh = f"call_adk_fallback_{self.count}"
        self.count += 1
        if call_id:
            self.replaced[call_id] = fresh
        return fresh


def _tool_output(value: Any) -> str:
    """A tool's result as the ``output`` string: its ``content`` texts (a list's items
    one per line), else its ``result`` (a string as is, else JSON), else all of it as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        content = value.get("content")
        if isinstance(content, list) and content:
            return "\n".join(str(item["text"]) if isinstance(item, dict) and item.get("type") == "text"
                             and "text" in item else str(item) for item in content)
        if isinstance(content, str) and content:
            return content
        if value.get("result") is not None:
            result = value["result"]
            return result if isinstance(result, str) else json.dumps(result, default=str)
    return json.dumps(value, default=str)


def _media(part: Part) -> dict[str, Any] | None:
    if part.inline_data is not None:
        blob = part.inline_data
        url = f"data:{blob.mime_type};base64,{base64.b64encode(blob.data).decode()}"
        if blob.mime_type.startswith("image/"):
            return {"type": "input_image", "detail": "auto", "image_url": url}
        return {"type": "input_file", "filename": blob.display_name or "inline_data", "file_data": url}
    if part.file_data is not None:
        uri, mime = part.file_data.file_uri or "", part.file_data.mime_type or ""
        if mime.startswith("image/"):
            return {"type": "input_image", "detail": "auto", "image_url": uri}
        return {"type": "input_file", "file_id": uri} if uri.startswith("file-") else \
            {"type": "input_file", "file_url": uri}
    return None


def _code_text(part: Part) -> str | None:
    if part.executable_code is not None:
        return f"Code:```python\n{part.executable_code.code}\n```"
    if part.code_execution_result is not None:
        return f"Execution Result:```code_output\n{part.code_execution_result.output or ''}\n```"
    return None


def input_items(content: Content, ids: CallIds) -> list[dict[str, Any]]:
    """One content as ``input`` items (see the module)."""
    role = "assistant" if content.role in ("model", "assistant") else \
        content.role if content.role in ("system", "developer") else "user"
    items: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []

    def flush() -> None:
        if pending:
            items.append({"type": "message", "role": role, "content": list(pending)})
            pending.clear()

    for part in content.parts:
        text = part.text if part.text else _code_text(part)
        if part.function_response is not None:
            flush()
            result = part.function_response
            items.append({"type": "function_call_output", "call_id": ids(result.id),
                          "output": _tool_output(result.response)})
        elif part.function_call is not None:
            flush()
            call = part.function_call
            items.append({"type": "function_call", "call_id": ids(call.id), "name": call.name,
                          "arguments": json.dumps(call.args or {})})
        elif part.thought and (part.text or part.thought_signature):
            flush()  # a thought cannot be sent back without the API's own reasoning item id
        elif text:
            if role == "assistant":
                flush()
                items.append({"type": "message", "role": "assistant", "content": text})
            else:
                pending.append({"type": "input_text", "text": text})
        elif (media := _media(part)) is not None:
            if role == "assistant":
                _log.warning("media in a model turn is not sent to the Responses API")
                continue
            pending.append(media)
    flush()
    return items


def lowercase_types(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) else
                    [t.lower() if isinstance(t, str) else t for t in v] if k == "type" and isinstance(v, list)
                    else lowercase_types(v)) for k, v in schema.items()}
    if isinstance(schema, list):
        return [lowercase_types(v) for v in schema]
    return schema


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (a copy) as OpenAI's strict structured output takes it: a ``$ref``
    alone; every object with properties closed (``additionalProperties`` false) and all
    of them required, in its definitions, properties, ``anyOf``/``oneOf``/``allOf``
    and ``items`` too."""
    schema = copy.deepcopy(schema)

    def visit(node: Any) -> None:
        if not isinstance(node, dict):
            return
        if "$ref" in node:
            for key in [k for k in node if k != "$ref"]:
                del node[key]
            return
        if node.get("type") == "object" and "properties" in node:
            node["additionalProperties"] = False
            node["required"] = sorted(node["properties"])
        for child in [*node.get("$defs", {}).values(), *node.get("properties", {}).values(),
                      *(c for key in ("anyOf", "oneOf", "allOf") for c in node.get(key, []))]:
            visit(child)
        if isinstance(node.get("items"), dict):
            visit(node["items"])

    visit(schema)
    return schema


def text_format(config: dict[str, Any]) -> dict[str, Any] | None:
    schema = config.get("response_schema")
    if isinstance(schema, dict) and schema:
        found = lowercase_types(schema)
        name = re.sub(r"[^a-zA-Z0-9_-]", "_", str(found.get("title") or "dict")) or "schema"
        return {"format": {"type": "json_schema", "name": name, "strict": True, "schema": strict_schema(found)}}
    if config.get("response_mime_type") == "application/json":
        return {"format": {"type": "json_object"}}
    return None


def tool_choice(config: dict[str, Any]) -> Any:
    """The ``tool_choice`` of the request's config: its ``tool_config``'s
    function-calling mode (google-adk's rule: ANY required, NONE none, AUTO auto), else
    our ``tool_choice`` setting ("any", "none", "auto" or ``{"name": ...}``); None when
    neither chooses."""
    tool_config = config.get("tool_config")
    calling = tool_config.get("function_calling_config") if isinstance(tool_config, dict) else \
        getattr(tool_config, "function_calling_config", None)
    mode = calling.get("mode") if isinstance(calling, dict) else getattr(calling, "mode", None)
    mode = str(getattr(mode, "value", mode) or "").upper()
    if mode in ("ANY", "NONE", "AUTO"):
        return {"ANY": "required", "NONE": "none", "AUTO": "auto"}[mode]
    choice = config.get("tool_choice")
    if choice in ("any", "none", "auto"):
        return {"any": "required", "none": "none", "auto": "auto"}[choice]
    if isinstance(choice, dict) and "name" in choice:
        return {"type": "function", "name": choice["name"]}
    return None


def _usage(usage: Any) -> UsageMetadata | None:
    if not isinstance(usage, dict) or not usage:
        return None
    counted = UsageMetadata.counted(usage.get("input_tokens"), usage.get("output_tokens"), usage.get("total_tokens"))
    cached = (usage.get("input_tokens_details") or {}).get("cached_tokens")
    thoughts = (usage.get("output_tokens_details") or {}).get("reasoning_tokens")
    return counted.model_copy(update={"cached_content_token_count": cached if isinstance(cached, int) else None,
                                      "thoughts_token_count": thoughts if isinstance(thoughts, int) else None})


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if not raw:
        return {}
    try:
        parsed = json.loads(raw)
    except ValueError:
        raise MalformedResponse(f"function call arguments are not JSON: {str(raw)[:200]!r}") from None
    if not isinstance(parsed, dict):
        raise MalformedResponse(f"function call arguments are not a JSON object: {str(raw)[:200]!r}")
    return parsed


def _output_parts(item: dict[str, Any]) -> list[Part]:
    """One ``output`` item as parts: a message's texts and refusals, a function call,
    a reasoning item's summary and content texts as thoughts (its encrypted content
    as their signature)."""
    kind = item.get("type")
    if kind == "message":
        parts = []
        for piece in item.get("content") or []:
            if piece.get("type") == "output_text" and piece.get("text"):
                parts.append(Part(text=piece["text"]))
            elif piece.get("type") == "refusal" and (piece.get("refusal") or piece.get("text")):
                parts.append(Part(text=REFUSAL_PREFIX + (piece.get("refusal") or piece.get("text"))))
        return parts
    if kind == "function_call":
        return [Part(function_call=FunctionCall(id=item.get("call_id") or item.get("id"), name=item.get("name") or "",
                                                args=_arguments(item.get("arguments"))))]
    if kind == "reasoning":
        signature = item["encrypted_content"].encode() if item.get("encrypted_content") else None
        texts = [p.get("text") for p in [*(item.get("summary") or []), *(item.get("content") or [])] if p.get("text")]
        parts = [Part(text=t, thought=True, thought_signature=signature) for t in texts]
        return parts or ([Part(thought=True, thought_signature=signature)] if signature else [])
    return []


def failure(error: Any, what: str) -> ModelError:
    """A failed response's (or an ``error`` event's) ``error`` as our typed error: a
    rate limit as RateLimited, an invalid request as BadRequestError, any other as a
    ServerError; its message without secrets."""
    error = error if isinstance(error, dict) else {}
    code = str(error.get("code") or error.get("type") or "")
    message = redact(f"{what}: {code or 'error'}: {error.get('message') or ''}".rstrip(": "))
    if code in ("rate_limit_exceeded", "rate_limit_error"):
        return RateLimited(message)
    if code.startswith("invalid"):
        return BadRequestError(message)
    return ServerError(message)


def response_of(data: dict[str, Any], parts: list[Part] | None = None) -> LlmResponse:
    """A Responses API response object as our final response (see the module); with
    ``parts``, those instead of its output's (a stream's own, when its completed
    response lists no output)."""
    status = data.get("status")
    if status in ("failed", "cancelled"):
        raise failure(data.get("error") or {"code": status}, f"the response {status}")
    if parts is None:
        output = data.get("output")
        if not isinstance(output, list):
            raise MalformedResponse(f"no output in the answer: {str(data)[:200]}")
        parts = [p for item in output if isinstance(item, dict) for p in _output_parts(item)]
    finish = None
    if status == "completed":
        finish = "STOP"
    elif status == "incomplete":
        reason = (data.get("incomplete_details") or {}).get("reason")
        finish = "MAX_TOKENS" if reason in ("max_output_tokens", "max_tokens") else "OTHER"
    return LlmResponse(content=Content(role="model", parts=tuple(parts)), finish_reason=finish, turn_complete=True,
                       usage_metadata=_usage(data.get("usage")), model_version=data.get("model"))


class OpenAIResponsesModel(HttpModel):
    """The Responses API connector; ``body_of`` (the model class's) builds each body.
    ``key_source``, when given, is called for the key at each call (a refreshed
    credential); ``extra_headers`` are sent as they are, ``query`` as the URL's
    query parameters."""

    provider = "openai"

    def __init__(self, name: str, *, body_of: Callable[[LlmRequest, bool], dict[str, Any]],
                 key_source: Callable[[], Any] | None = None, extra_headers: dict[str, str] | None = None,
                 query: dict[str, Any] | None = None, **options: Any) -> None:
        super().__init__(name, **options)
        self.body_of = body_of
        self.key_source = key_source
        self.extra_headers = dict(extra_headers or {})
        self.query = dict(query or {})

    def endpoint(self, stream: bool) -> str:
        return f"{self.base_url}/responses" + (f"?{urlencode(self.query)}" if self.query else "")

    def headers(self) -> dict[str, str]:
        return {**self.extra_headers, **({"Authorization": f"Bearer {self.api_key}"} if self.api_key else {})}

    async def generate(self, request: LlmRequest, *, stream: bool = False) -> AsyncIterator[LlmResponse]:
        """In order: the key from ``key_source`` when there is one (an async function
        awaited, a plain one run in a worker thread, as it may block; registered as a
        secret, so no error or event shows it; what it raises propagates), the body
        (a ValueError for an effort the model does not take), then the request loop of
        :class:`HttpModel` (retries, typed errors, SSE)."""
        if self.key_source is not None:
            source = self.key_source
            key = await source() if inspect.iscoroutinefunction(source) else await asyncio.to_thread(source)
            if inspect.isawaitable(key):
                key = await key
            self.api_key = str(key)
            register_secret(self.api_key)
        async for response in self.send(self.body_of(request, stream), stream=stream):
            yield response

    def payload(self, request: LlmRequest, stream: bool) -> dict[str, Any]:
        return self.body_of(request, stream)

    def parse(self, data: dict[str, Any]) -> LlmResponse:
        if "error" in data and data.get("error") and "output" not in data:
            raise failure(data["error"], "the provider answered an error")
        return response_of(data)

    def stream_parser(self) -> StreamParser:
        return _ResponsesStream()


class _ResponsesStream(StreamParser):
    """The Responses API's stream events (see the module)."""

    def __init__(self) -> None:
        self.texts: dict[Any, list[str]] = {}
        self.calls: dict[Any, dict[str, Any]] = {}
        self.done_items: dict[Any, dict[str, Any]] = {}
        self.order: list[Any] = []
        self.response: dict[str, Any] | None = None

    def _key(self, payload: dict[str, Any]) -> Any:
        key = payload.get("output_index")
        key = key if isinstance(key, int) else payload.get("item_id") or payload.get("call_id") or 0
        if key not in self.order:
            self.order.append(key)
        return key

    def _call(self, key: Any, item: dict[str, Any]) -> dict[str, Any]:
        call = self.calls.setdefault(key, {"name": "", "call_id": None, "arguments": "", "shown": False})
        call["name"] = item.get("name") or call["name"]
        call["call_id"] = call["call_id"] or item.get("call_id")
        return call

    @staticmethod
    def _partial_call(call: dict[str, Any]) -> LlmResponse:
        """A call as it starts, and at each piece of its arguments: its id and name (as
        google-adk relays it; the call is made from the final response only)."""
        part = Part(function_call=FunctionCall(id=call["call_id"], name=call["name"]))
        return LlmResponse(content=Content(role="model", parts=(part,)), partial=True)

    def _first_arguments(self, call: dict[str, Any]) -> list[LlmResponse]:
        """The partial for a call's arguments that came whole (no delta showed them)."""
        if not call["arguments"] or call["shown"]:
            return []
        call["shown"] = True
        return [self._partial_call(call)]

    def feed(self, event: SseEvent) -> list[LlmResponse]:
        payload = loads(event.data, "openai")
        if not isinstance(payload, dict):
            raise MalformedResponse(f"openai sent an event that is not an object: {event.data[:200]!r}")
        kind = payload.get("type") or event.event
        if kind == "error":
            raise failure(payload.get("error") or payload, "error in the stream")
        if kind == "response.failed":
            raise failure((payload.get("response") or {}).get("error"), "the response failed")
        if kind in ("response.completed", "response.incomplete"):
            self.response = payload.get("response") or {}
        elif kind == "response.output_text.delta" and payload.get("delta"):
            self.texts.setdefault(self._key(payload), []).append(payload["delta"])
            return [LlmResponse(content=Content(role="model", parts=(Part(text=payload["delta"]),)), partial=True)]
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta") \
                and payload.get("delta"):
            return [LlmResponse(content=Content(role="model", parts=(Part(text=payload["delta"], thought=True),)),
                                partial=True)]
        elif kind in ("response.output_item.added", "response.output_item.done"):
            item = payload.get("item") or {}
            key = self._key(payload)
            if kind == "response.output_item.done":
                self.done_items[key] = item
            if item.get("type") == "function_call":
                call = self._call(key, item)
                call["arguments"] = item.get("arguments") or call["arguments"]
                if kind == "response.output_item.added":
                    return [self._partial_call(call)]
                return self._first_arguments(call)
        elif kind == "response.function_call_arguments.delta":
            call = self._call(self._key(payload), payload)
            call["arguments"] += payload.get("delta") or ""
            if payload.get("delta"):
                call["shown"] = True
                return [self._partial_call(call)]
        elif kind == "response.function_call_arguments.done":
            call = self._call(self._key(payload), payload)
            if payload.get("arguments") is not None:
                call["arguments"] = payload["arguments"]
            return self._first_arguments(call)
        return []

    def finish(self) -> LlmResponse:
        if self.response is None:
            raise MalformedResponse("the stream ended without response.completed (truncated)")
        if self.response.get("output"):
            return response_of(self.response)
        parts: list[Part] = []
        for key in self.order:
            if key in self.done_items:
                parts.extend(_output_parts(self.done_items[key]))
            elif key in self.calls:
                call = self.calls[key]
                parts.append(Part(function_call=FunctionCall(id=call["call_id"], name=call["name"],
                                                             args=_arguments(call["arguments"]))))
            elif self.texts.get(key):
                parts.append(Part(text="".join(self.texts[key])))
        return response_of(self.response, parts)
