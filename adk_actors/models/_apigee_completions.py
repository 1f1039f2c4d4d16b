"""google-adk's ``apigee_llm.CompletionsHTTPClient`` and ``ChatCompletionsResponseHandler``:
OpenAI's Chat Completions behind an Apigee proxy, for code that calls the proxy
itself (``ApigeeLlm`` keeps its own connector, :class:`ApigeeOpenAIModel`).

:class:`ChatCompletionsResponseHandler` reads Chat Completions answers into our
:class:`LlmResponse`, by google-adk's rules:

* ``process_response(body)``: a whole answer. No ``choices`` is a ValueError; of
  several, the first is read (the rest logged). The answer's content is one text part
  (its ``content``; a ``refusal`` after it on a new line, marked ``[[REFUSAL]]: ``),
  then a function call part per tool call (and the legacy ``function_call``), in
  index order, arguments parsed as JSON (not JSON: ValueError); the role ``assistant``
  is ``model``; the usage's prompt, completion and total counts (0 when absent) and
  its reasoning tokens as ``thoughts_token_count``; ``finish_reason`` mapped
  (``stop`` and ``tool_calls``: ``STOP``, ``length``: ``MAX_TOKENS``,
  ``content_filter``: ``SAFETY``, others ``FINISH_REASON_UNSPECIFIED``); ``model`` as
  the ``model_version``.
* ``process_chunk(chunk)``: one streamed chunk, kept on the handler (text, tool-call
  argument pieces by index, usage, model). It yields a partial response with the
  chunk's own text (a chunk without choices: a partial with the model and usage so
  far), and, on the chunk with a ``finish_reason``, the whole answer so far as the
  final response. Tool-call pieces are gathered, not yielded as partial parts (our
  ``FunctionCall`` carries whole arguments only): each call comes whole, its pieces
  joined and parsed, in the final response.

A Gemini ``thought_signature`` on a tool call (``extra_content.google``, base64) is
kept on its part. Logprobs are gathered on the handler (``logprobs``) and the
answer's ``id``, ``created``, ``model``, ``service_tier`` and ``object`` in
``custom_metadata``; our ``LlmResponse`` carries neither.

:class:`CompletionsHTTPClient` posts google-adk's request to
``{base_url}/chat/completions`` (the URL as it is when it ends so) on our HTTP model
loop (see :mod:`._http`) and reads the answer with the handler above.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

from .._types import Content, FunctionCall, LlmRequest, LlmResponse, Part, UsageMetadata
from ._apigee import ApigeeOpenAIModel, model_id
from ._errors import MalformedResponse
from ._http import RetryPolicy, SseEvent, StreamParser, loads

__all__ = ["ChatCompletionsResponseHandler", "CompletionsHTTPClient"]

_log = logging.getLogger(__name__)

REFUSAL_MARK = "[[REFUSAL]]: "
_METADATA_KEYS = ("id", "created", "model", "service_tier", "object")
_FINISH = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY"}


def finish_reason_of(reason: Any) -> str:
    """A Chat Completions finish reason as Gemini's (see the module)."""
    return _FINISH.get(reason, "FINISH_REASON_UNSPECIFIED") if isinstance(reason, str) else \
        "FINISH_REASON_UNSPECIFIED"


def _arguments(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise ValueError(f"a tool call's arguments are not JSON: {text[:200]!r}") from None


def _signature(tool_call: dict[str, Any]) -> bytes | None:
    """A tool call's Gemini thought signature (``extra_content.google``), decoded."""
    raw = ((tool_call.get("extra_content") or {}).get("google") or {}).get("thought_signature")
    if not raw:
        return None
    if isinstance(raw, bytes):
        return raw
    try:
        return base64.b64decode(raw)
    except (binascii.Error, ValueError):
        raise ValueError("a tool call's thought_signature is not base64") from None


class _Call:
    """One tool call being gathered: id, name, whole arguments or their pieces."""

    def __init__(self) -> None:
        self.id: str | None = None
        self.name = ""
        self.args: dict[str, Any] = {}
        self.pieces: list[str] = []
        self.signature: bytes | None = None

    def joined_args(self) -> dict[str, Any]:
        """The arguments: the whole ones, else the pieces joined and parsed; pieces that
        do not parse joined are parsed one by one and merged (none parsing: ValueError)."""
        if self.args or not "".join(self.pieces).strip():
            return self.args
        try:
            return dict(_arguments("".join(self.pieces)))
        except ValueError:
            merged: dict[str, Any] = {}
            for piece in self.pieces:
                try:
                    value = json.loads(piece) if piece.strip() else None
                except ValueError:
                    _log.warning("a tool call's argument piece is not JSON: %r", piece[:200])
                    continue
                if isinstance(value, dict):
                    merged.update(value)
            if not merged:
                raise
            return merged

    def part(self) -> Part:
        return Part(function_call=FunctionCall(id=self.id, name=self.name, args=self.joined_args()),
                    thought_signature=self.signature)


class ChatCompletionsResponseHandler:
    """Chat Completions answers, whole or streamed, as our responses (see the module).
    One handler per answer: a stream's chunks are gathered on it."""

    def __init__(self) -> None:
        self.content_parts = ""
        self.calls: dict[int, _Call] = {}
        self.role = ""
        self.streaming_complete = False
        self.model = ""
        self.usage: dict[str, Any] = {}
        self.logprobs: dict[str, Any] = {}
        self.custom_metadata: dict[str, Any] = {}
        self._refused = False

    # -- whole answers ------------------------------------------------------------------

    def process_response(self, response: dict[str, Any]) -> LlmResponse:
        """A whole answer's first choice as one response (see the module); no choices:
        ValueError."""
        choices = response.get("choices") or []
        if not choices:
            raise ValueError("the chat completion has no choices")
        if len(choices) > 1:
            _log.error("the chat completion has %d choices; the first is read", len(choices))
        choice = choices[0]
        message = choice.get("message") or {}
        for tool_call in message.get("tool_calls") or []:
            self._add_call(tool_call, streamed=False)
        if message.get("function_call"):
            self._add_call({"type": "function", "function": message["function_call"]}, streamed=False)
        self._add_text(message)
        self._set_role(message.get("role") or "model")
        self.logprobs = dict(choice.get("logprobs") or {})
        self._keep_metadata(response)
        usage = response.get("usage") or {}
        reasoning = (usage.get("completion_tokens_details") or {}).get("reasoning_tokens") or None
        counts = UsageMetadata(prompt_token_count=usage.get("prompt_tokens", 0),
                               candidates_token_count=usage.get("completion_tokens", 0),
                               total_token_count=usage.get("total_tokens", 0), thoughts_token_count=reasoning)
        return LlmResponse(content=Content(role=self.role, parts=tuple(self._whole_parts())), usage_metadata=counts,
                           finish_reason=finish_reason_of(choice.get("finish_reason")),
                           model_version=response.get("model"))

    # -- streamed answers ---------------------------------------------------------------

    def process_chunk(self, chunk: dict[str, Any]) -> Iterator[LlmResponse]:
        """One streamed chunk: a partial response with its text; on its finish reason,
        the whole answer as the final response (see the module)."""
        if "model" in chunk:
            self.model = chunk["model"]
        if chunk.get("usage"):
            self.usage.update(chunk["usage"])
        self._keep_metadata(chunk)
        usage = UsageMetadata(prompt_token_count=self.usage.get("prompt_tokens", 0),
                              candidates_token_count=self.usage.get("completion_tokens", 0),
                              total_token_count=self.usage.get("total_tokens", 0)) if self.usage else None
        choices = chunk.get("choices") or []
        if not choices:
            if usage is not None or self.custom_metadata:
                yield LlmResponse(partial=True, model_version=self.model, usage_metadata=usage)
            return
        if len(choices) > 1:
            _log.error("a streamed chunk has %d choices; the first is read", len(choices))
        choice = choices[0]
        for key, values in (choice.get("logprobs") or {}).items():
            if values:
                self.logprobs.setdefault(key, []).extend(values)
        delta = choice.get("delta") or {}
        for tool_call in delta.get("tool_calls") or []:
            self._add_call(tool_call, streamed=True)
        text = self._add_text(delta)
        self._set_role(delta.get("role") or "model")
        parts = (Part(text=text),) if text else ()
        yield LlmResponse(partial=True, content=Content(role=self.role, parts=parts), model_version=self.model,
                          usage_metadata=usage)
        if choice.get("finish_reason"):
            self.streaming_complete = True
            yield LlmResponse(content=Content(role=self.role, parts=tuple(self._whole_parts())),
                              finish_reason=finish_reason_of(choice["finish_reason"]), model_version=self.model,
                              usage_metadata=usage)

    # -- gathering ----------------------------------------------------------------------

    def _keep_metadata(self, data: dict[str, Any]) -> None:
        self.custom_metadata.update({k: data[k] for k in _METADATA_KEYS if data.get(k) is not None})

    def _add_text(self, message: dict[str, Any]) -> str:
        """Add a message's (or delta's) content and refusal; the text it adds. Content
        after a refusal began is dropped (logged)."""
        content, refusal = message.get("content") or "", message.get("refusal") or ""
        if content and self._refused:
            _log.warning("content after a refusal is dropped")
            content = ""
        text = content
        if refusal and not self._refused:
            self._refused = True
            text += ("\n" if self.content_parts or text else "") + REFUSAL_MARK
        text += refusal
        self.content_parts += text
        return text

    def _add_call(self, tool_call: dict[str, Any], *, streamed: bool) -> None:
        """Add a tool call, or a streamed piece of one (by its ``index``; an answer's
        calls without one in turn). A type other than ``function``: ValueError."""
        kind = tool_call.get("type")
        if kind is not None and kind != "function":
            raise ValueError(f"tool calls of type {kind!r} are not read")
        index = tool_call.get("index")
        call = self.calls.setdefault(len(self.calls) if index is None else index, _Call())
        function = tool_call.get("function") or {}
        arguments = function.get("arguments") or ""
        if streamed and arguments:
            call.pieces.append(arguments)
        elif arguments:
            call.args.update(_arguments(arguments))
        call.name = function.get("name") or call.name
        call.id = tool_call.get("id") or call.id
        call.signature = _signature(tool_call) or call.signature

    def _set_role(self, role: str) -> None:
        if not self.role:
            self.role = "model" if role == "assistant" else role

    def _whole_parts(self) -> list[Part]:
        parts = [Part(text=self.content_parts)] if self.content_parts else []
        return parts + [self.calls[index].part() for index in sorted(self.calls)]


class _HandlerStream(StreamParser):
    """Our SSE loop's parser for the handler: every response it yields, in order; the
    final one is already among them, so the end gives a marker the client drops."""

    def __init__(self, end: LlmResponse) -> None:
        self.handler = ChatCompletionsResponseHandler()
        self.end = end
        self.done = False

    def feed(self, event: SseEvent) -> list[LlmResponse]:
        if event.data.strip() == "[DONE]":
            self.done = True
            return []
        chunk = loads(event.data, "apigee")
        if not isinstance(chunk, dict):
            return []
        return list(self.handler.process_chunk(chunk))

    def finish(self) -> LlmResponse:
        if not self.done and not self.handler.streaming_complete:
            raise MalformedResponse("the stream ended without [DONE] or a finish reason (truncated)")
        return self.end


class _CompletionsConnector(ApigeeOpenAIModel):
    """The proxy's Chat Completions connector, its answers read by the handler."""

    end = LlmResponse()

    def payload(self, request: LlmRequest, stream: bool) -> dict[str, Any]:
        """Our Chat Completions body, with the settings google-adk's client also sends:
        the penalties, and ``candidate_count`` as ``n``."""
        body = super().payload(request, stream)
        config = request.config
        for ours, theirs in (("frequency_penalty", "frequency_penalty"), ("presence_penalty", "presence_penalty"),
                             ("candidate_count", "n")):
            if config.get(ours) is not None:
                body[theirs] = config[ours]
        return body

    def parse(self, data: dict[str, Any]) -> LlmResponse:
        return ChatCompletionsResponseHandler().process_response(data)

    def stream_parser(self) -> StreamParser:
        return _HandlerStream(self.end)


def retry_policy(retry_options: Any) -> RetryPolicy:
    """google.genai's ``HttpRetryOptions`` as our policy: none is one attempt; an unset
    field is google.genai's default (5 attempts, 1 s first wait, 60 s longest)."""
    if retry_options is None:
        return RetryPolicy(max_attempts=1)
    attempts, first, longest = (getattr(retry_options, name, None) for name in ("attempts", "initial_delay",
                                                                               "max_delay"))
    return RetryPolicy(max_attempts=attempts if attempts is not None else 5,
                       base_delay=first if first is not None else 1.0, max_delay=longest if longest is not None
                       else 60.0)


class CompletionsHTTPClient:
    """google-adk's Chat Completions client for an Apigee proxy (see the module).

    ``base_url``: the proxy (``/chat/completions`` is added unless it ends so);
    ``headers``: sent with every request (no credentials of its own); ``retry_options``:
    google.genai's ``HttpRetryOptions`` (none: one attempt). Connections come from the
    event loop's shared pool; :meth:`close` / :meth:`aclose` end this client's use of it
    (a later call raises RuntimeError), leaving other models' connections open."""

    def __init__(self, base_url: str, headers: dict[str, str] | None = None, retry_options: Any = None) -> None:
        self._base_url = base_url
        self._headers = dict(headers or {})
        self.retry_options = retry_options
        self._closed = False

    def close(self) -> None:
        self._closed = True

    async def aclose(self) -> None:
        self._closed = True

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncIterator[LlmResponse]:
        """In order: a closed client raises RuntimeError, no model on the request or
        no base URL a ValueError; then the request (the model id: the model string's
        last component) is posted with the retries of ``retry_options``; yielded: the
        whole answer, or, streamed, each chunk's partial response and the final one
        (see the module). A refused or failed call is our typed ModelError (a 503:
        ServerError...), after the retries."""
        if self._closed:
            raise RuntimeError("this CompletionsHTTPClient is closed")
        if not llm_request.model:
            raise ValueError("the request names no model")
        if not self._base_url:
            raise ValueError("the client has no base URL")
        connector = _CompletionsConnector(model_id(llm_request.model), base_url=self._base_url,
                                          custom_headers=self._headers, timeout=600.0,
                                          retry=retry_policy(self.retry_options))
        async for response in connector.generate(llm_request, stream=stream):
            if response is not connector.end:
                yield response
