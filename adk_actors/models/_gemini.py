"""Gemini ``generateContent`` / ``streamGenerateContent?alt=sse`` (API key in ``x-goog-api-key``).

Request side: ``systemInstruction``; each content's role as given (user, model, or
another such as system; contents that end with one other than user's get a user
turn, :data:`GO_ON`, after them, as google-adk does; no contents at all, one user
turn, :data:`ANSWER_THE_INSTRUCTION`); ``functionCall`` /
``functionResponse`` parts (ids kept when present); ``inlineData`` images; tool
parameters adapted to Gemini's OpenAPI subset (``$ref`` inlined, unsupported keys
such as ``additionalProperties``, ``title`` and ``$defs`` dropped), a declaration's
``parameters_json_schema`` sent as given under that key (as google-genai sends it), its
``behavior`` (``NON_BLOCKING``, live conversations) as google-genai sends it;
``generationConfig`` with ``responseMimeType`` / ``responseSchema``; Gemini's own
tools (``request.builtin_tools``: ``googleSearch``, ``urlContext``, ``codeExecution``...)
as entries of ``tools`` after the function declarations (those only Vertex AI takes,
``enterpriseWebSearch`` and ``retrieval``, refused on the Gemini API with an
InvalidRequestError before sending, as google-genai refuses them). ``connect`` opens a Live API conversation (``_gemini_live``). Response side:
candidate parts (``executableCode`` / ``codeExecutionResult`` included),
``finishReason``, ``usageMetadata``, ``groundingMetadata``; a ``SAFETY``-type finish or a
``promptFeedback.blockReason`` is a :class:`ContentBlocked` error.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import Any, ClassVar

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel

from .._exceptions import InvalidRequestError
from .._types import Content, GroundingMetadata, LlmRequest, LlmResponse, Part, UsageMetadata
from ._context_cache import GeminiContextCache
from ._errors import ContentBlocked, MalformedResponse
from ._gemini_live import GeminiLiveConnection, live_url, open_gemini_live, setup_message
from ._gemini_wire import gemini_parts, to_parts
from ._http import HttpModel, SseEvent, StreamParser, loads, pooled_client

__all__ = ["ANSWER_THE_INSTRUCTION", "GO_ON", "GeminiModel", "gemini_schema"]

#: the user turn that follows contents ending with the model's, so that the model goes
#: on from there (Gemini answers a user turn; google-adk adds one too, in its words)
GO_ON = "Go on from your last turn as instructed; if nothing is left to do, give your final answer."
#: the user turn of a request with no contents at all (a session whose only message was
#: an answer to no call): the API refuses empty contents, so one user turn points at the
#: system instruction, as google-adk sends one (in our words); not in live runs
ANSWER_THE_INSTRUCTION = "Answer as your system instruction asks."

#: Gemini's tool entries only Gemini on Vertex AI takes -> how an error names them
_VERTEX_ONLY_TOOLS = {"enterpriseWebSearch": "enterprise_web_search",
                      "retrieval": "Retrieval (Vertex AI Search, Vertex AI RAG)"}
_BLOCKING = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}
_DROP = {"additionalProperties", "title", "$defs", "definitions", "$schema", "default", "examples", "const"}


def gemini_schema(schema: Any, defs: dict[str, Any] | None = None) -> Any:
    """A JSON schema in Gemini's dialect: refs inlined, unsupported keys dropped, a
    nullable type (``["string", "null"]``) as the type and ``nullable: true``."""
    if isinstance(schema, list):
        return [gemini_schema(s, defs) for s in schema]
    if not isinstance(schema, dict):
        return schema
    defs = {**(defs or {}), **schema.get("$defs", {}), **schema.get("definitions", {})}
    if "$ref" in schema:
        target = defs.get(str(schema["$ref"]).split("/")[-1], {})
        return gemini_schema(target, defs)
    kinds = schema.get("type")
    if isinstance(kinds, list) and "null" in kinds and len(kinds) == 2:
        schema = {**schema, "type": next(k for k in kinds if k != "null"), "nullable": True}
    return {k: gemini_schema(v, defs) for k, v in schema.items() if k not in _DROP}


def _camel_json(value: Any) -> Any:
    """A config object (ours, google.genai's, or a dict) as Gemini's JSON: unset fields
    left out, names in camelCase, enums as their values."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, dict):
        return {to_camel(str(key)): _camel_json(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_camel_json(item) for item in value]
    return getattr(value, "value", value)


def _check_blocked(data: dict[str, Any]) -> None:
    feedback = data.get("promptFeedback") or {}
    if feedback.get("blockReason"):
        raise ContentBlocked(f"the prompt was blocked: {feedback['blockReason']}")
    for candidate in data.get("candidates") or []:
        if candidate.get("finishReason") in _BLOCKING:
            raise ContentBlocked(f"the answer was blocked: {candidate['finishReason']}")


def _grounding(candidate: dict[str, Any]) -> GroundingMetadata | None:
    """A candidate's ``groundingMetadata`` as ours (None when absent); one that does
    not parse is a MalformedResponse."""
    found = candidate.get("groundingMetadata")
    if found is None:
        return None
    try:
        return GroundingMetadata.model_validate(found)
    except ValidationError as exc:
        raise MalformedResponse(f"groundingMetadata does not parse: {exc.errors()[0]['msg']}") from exc


def _usage(data: dict[str, Any]) -> UsageMetadata | None:
    """Gemini's ``usageMetadata`` as it came (its names are google-adk's), or its three
    counts when the rest does not parse."""
    usage = data.get("usageMetadata")
    if not isinstance(usage, dict):
        return None
    try:
        return UsageMetadata.model_validate(usage)
    except ValidationError:
        return UsageMetadata.counted(usage.get("promptTokenCount"), usage.get("candidatesTokenCount"),
                                     usage.get("totalTokenCount"))


class GeminiModel(HttpModel):
    provider = "gemini"
    #: whether requests may carry Gemini's tools that only Vertex AI takes (``_VERTEX_ONLY_TOOLS``)
    takes_vertex_only_tools: ClassVar[bool] = False
    #: the API version in the path (``Gemini(api_version=...)`` sets it)
    api_version = "v1beta"

    def endpoint(self, stream: bool) -> str:
        model = self.name if self.name.startswith("models/") else f"models/{self.name}"
        if stream:
            return f"{self.base_url}/{self.api_version}/{model}:streamGenerateContent?alt=sse"
        return f"{self.base_url}/{self.api_version}/{model}:generateContent"

    def headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self.api_key} if self.api_key else {}

    def _refuse_vertex_only_tools(self, entries: list[dict[str, Any]]) -> None:
        """On the Gemini API (not :attr:`takes_vertex_only_tools`), an
        InvalidRequestError for the first of ``entries`` only Gemini on Vertex AI
        takes, naming it (google-genai refuses the same before sending); nothing otherwise."""
        if self.takes_vertex_only_tools:
            return
        for entry in entries:
            refused = next((key for key in entry if key in _VERTEX_ONLY_TOOLS), None)
            if refused is not None:
                raise InvalidRequestError(f"{_VERTEX_ONLY_TOOLS[refused]} is Gemini's on Vertex AI only: the "
                                          "Gemini API (an API key) does not take it")

    def payload(self, request: LlmRequest, stream: bool) -> dict[str, Any]:
        config = request.config
        body: dict[str, Any] = {"contents": [{"role": c.role or "user", "parts": gemini_parts(c)}  # as given (google-genai)
                                             for c in request.contents if c.parts]}
        if body["contents"] and body["contents"][-1]["role"] != "user":  # the model goes on (a code run's result)
            body["contents"].append({"role": "user", "parts": [{"text": GO_ON}]})
        elif not body["contents"]:  # nothing to send: the API refuses that
            body["contents"].append({"role": "user", "parts": [{"text": ANSWER_THE_INSTRUCTION}]})
        if request.system_instruction:
            body["systemInstruction"] = {"parts": [{"text": request.system_instruction}]}
        if request.tools or request.builtin_tools:
            declared = [{"functionDeclarations": [
                {"name": t.name, **({"description": t.description} if t.description else {}),  # none: left out
                 **({"parameters": gemini_schema(t.parameters)} if t.parameters else {}),
                 # a full JSON schema goes as given, under google-genai's own key
                 **({"parameters_json_schema": t.parameters_json_schema} if t.parameters_json_schema is not None
                    else {}),
                 **({"response_json_schema": t.response_json_schema} if t.response_json_schema is not None
                    else {}),
                 **({"behavior": str(t.behavior)} if t.behavior is not None else {})} for t in request.tools]}]
            body["tools"] = (declared if request.tools else []) + [dict(entry) for entry in request.builtin_tools]
            self._refuse_vertex_only_tools(request.builtin_tools)
        if request.tools:
            choice = config.get("tool_choice")
            if choice in ("any", "none"):
                body["toolConfig"] = {"functionCallingConfig": {"mode": choice.upper()}}
        if config.get("tool_config") is not None:  # google-adk's llm_request.config.tool_config
            body["toolConfig"] = _camel_json(config["tool_config"])
        generation: dict[str, Any] = {}
        for ours, theirs in (("temperature", "temperature"), ("top_p", "topP"), ("max_tokens", "maxOutputTokens"),
                             ("max_output_tokens", "maxOutputTokens"), ("stop", "stopSequences"),
                             ("response_mime_type", "responseMimeType"), ("top_k", "topK"), ("seed", "seed"),
                             ("candidate_count", "candidateCount"), ("presence_penalty", "presencePenalty"),
                             ("frequency_penalty", "frequencyPenalty")):
            if ours in config:
                value = config[ours]
                generation[theirs] = [value] if theirs == "stopSequences" and isinstance(value, str) else value
        if "response_schema" in config:
            generation["responseSchema"] = gemini_schema(config["response_schema"])
        if "thinking_config" in config:
            thinking = config["thinking_config"]
            generation["thinkingConfig"] = {to_camel(key): value for key, value in thinking.items()}
        if generation:
            body["generationConfig"] = generation
        if config.get("safety_settings"):
            body["safetySettings"] = [{"category": s["category"], "threshold": s["threshold"]}
                                      for s in config["safety_settings"]]
        return body

    def parse(self, data: dict[str, Any]) -> LlmResponse:
        _check_blocked(data)
        candidates = data.get("candidates")
        if not candidates:
            raise MalformedResponse(f"no candidates in the answer: {str(data)[:200]}")
        candidate = candidates[0]
        parts = to_parts((candidate.get("content") or {}).get("parts") or [])
        return LlmResponse(content=Content(role="model", parts=tuple(parts)), finish_reason=candidate.get("finishReason"),
                           turn_complete=True, usage_metadata=_usage(data), model_version=data.get("modelVersion"),
                           grounding_metadata=_grounding(candidate))

    def stream_parser(self) -> StreamParser:
        return _GeminiStream()

    def cache_scope(self) -> dict[str, Any]:
        """The backend that owns this model's context caches (part of a cache's fingerprint)."""
        return {"backend": "gemini", "base_url": self.base_url}

    def cache_urls(self) -> tuple[str, str, str]:
        """Where caches are made, what a cache's name is appended to, and the model's
        resource name in a create request."""
        model = self.name if self.name.startswith("models/") else f"models/{self.name}"
        return f"{self.base_url}/{self.api_version}/cachedContents", f"{self.base_url}/{self.api_version}", model

    async def generate(self, request: LlmRequest, *, stream: bool = False) -> AsyncIterator[LlmResponse]:
        """Build the body; with ``request.cache_config``, let :class:`GeminiContextCache`
        reuse or make the context cache and trim the body to match (its failures leave the
        call uncached); then the call loop. Each response carries the cache's metadata."""
        body = self.payload(request, stream)
        if request.cache_config is None:
            async for response in self.send(body, stream=stream):
                yield response
            return
        collection, base, model = self.cache_urls()
        cache = GeminiContextCache(pooled_client(self.base_url, self.timeout, self.transport),
                                   collection_url=collection, resource_base=base, model=model,
                                   headers=self.headers(), scope=self.cache_scope())
        body, metadata = await cache.apply(request, body)
        async for response in self.send(body, stream=stream):
            yield response.model_copy(update={"cache_metadata": metadata})

    def connect(self, request: LlmRequest) -> AbstractAsyncContextManager[GeminiLiveConnection]:
        """A Live API conversation for ``request`` (see ``_gemini_live``); the model's
        ``timeout`` bounds the handshake and the setup."""
        payload = self.payload(request.model_copy(update={"contents": ()}), stream=True)
        return open_gemini_live(live_url(self.base_url), self.headers(), setup_message(self.name, request, payload),
                                request.contents, setup_timeout=self.timeout)


def _in_order(parts: list[Part]) -> list[Part]:
    """A stream's parts in the order they came, each run of text pieces (thoughts apart
    from the answer) joined into one part, as google-adk's progressive streaming does."""
    out: list[Part] = []
    for part in parts:
        last = out[-1] if out else None
        if part.text is not None and last is not None and last.text is not None and last.thought == part.thought:
            out[-1] = Part(text=last.text + part.text, thought=part.thought)
        else:
            out.append(part)
    return out


class _GeminiStream(StreamParser):
    def __init__(self) -> None:
        self.parts: list[Part] = []
        self.finish_reason: str | None = None
        self.usage: UsageMetadata | None = None
        self.model: Any = None
        self.grounding: GroundingMetadata | None = None  # the last a chunk gave, as google-adk keeps it

    def feed(self, event: SseEvent) -> list[LlmResponse]:
        data = loads(event.data, "gemini")
        if "error" in data:
            raise MalformedResponse(f"error in the stream: {data['error']}")
        _check_blocked(data)
        usage = _usage(data)
        self.usage = usage or self.usage
        self.model = data.get("modelVersion", self.model)
        out: list[LlmResponse] = []
        for candidate in data.get("candidates") or []:
            parts = to_parts((candidate.get("content") or {}).get("parts") or [])
            self.parts.extend(parts)
            finish = candidate.get("finishReason")
            self.finish_reason = finish or self.finish_reason
            grounding = _grounding(candidate)
            self.grounding = grounding or self.grounding
            if parts:  # each chunk as it came (text or a function call), with what it says of itself
                out.append(LlmResponse(content=Content(role="model", parts=tuple(parts)), partial=True,
                                       finish_reason=finish, usage_metadata=usage, model_version=self.model,
                                       grounding_metadata=grounding))
        return out

    def finish(self) -> LlmResponse:
        if self.finish_reason is None:
            raise MalformedResponse("the stream ended without a finish reason (truncated)")
        if any(p.executable_code is not None or p.code_execution_result is not None for p in self.parts):
            parts = _in_order(self.parts)  # a code run's parts stay between the texts around them
        else:
            text = "".join(p.text or "" for p in self.parts if p.text and not p.thought)
            parts = ([Part(text=text)] if text else []) + [p for p in self.parts if not p.text]
        return LlmResponse(content=Content(role="model", parts=tuple(parts)), finish_reason=self.finish_reason,
                           turn_complete=True, usage_metadata=self.usage, model_version=self.model,
                           grounding_metadata=self.grounding)
