"""``LiteLlm``: google-adk's model class on the ``litellm`` library (the ``litellm``
extra), behind our retries, breaker and streaming rules.

A call, in order:

1. the request becomes litellm's OpenAI-shaped arguments as google-adk's ``LiteLlm``
   makes them (:func:`completion_args`): the system instruction first; each content a
   ``user`` or ``assistant`` message (function results as ``tool`` messages, Gemma 4's
   as ``tool_responses``; calls as ``tool_calls`` with their arguments as JSON;
   thoughts as ``reasoning_content``; images, video, audio and files as content
   blocks; ollama_chat's text as one string); a call left without a result gets a
   placeholder result; the function declarations as ``{"type": "function", ...}``
   tools; ``response_schema`` as a strict ``json_schema`` response format; the
   sampling settings under litellm's names (``max_output_tokens`` as
   ``max_completion_tokens``, ``stop``); ``thinking_config`` as ``thinking`` or
   ``reasoning_effort`` for a model litellm says reasons (google-adk's rules, by what
   litellm says the model takes; Claude then without the settings Anthropic refuses);
   ``tool_choice`` ``"required"`` / ``"none"`` for the modes any / none; the
   constructor's extra arguments (``api_base``, ``api_key``...), which the request's
   settings override;
2. ``acompletion`` of the model's ``llm_client`` (litellm's own by default) is awaited,
   streamed or not. litellm is told not to retry (``max_retries=0``) and to give up
   after the connector's ``timeout``, unless the constructor set them;
3. the answer becomes one LlmResponse (text, tool calls, thoughts unless
   ``include_thoughts`` is false, usage with cached and reasoning tokens, the finish
   reason in google.genai's words: ``STOP``, ``MAX_TOKENS``, ``SAFETY``, ``OTHER``,
   with ``error_code`` set when it is not ``STOP``); calls a model wrote into its text
   as JSON (``{"name": ..., "arguments": ...}``) are read as calls; a tool call whose
   arguments do not parse (JSON, a Python literal, either in a code fence) is left
   out and the response says ``MALFORMED_FUNCTION_CALL``. Streamed, each text and
   thought delta is a partial response first, and one final response carries all.

Failure: litellm's exceptions become our typed errors (429 ``RateLimited``, 5xx
``ServerError``, 529 ``Overloaded``, 401/403 ``AuthenticationError``, timeouts,
connection failures, a content policy violation ``ContentBlocked``, other 4xx
``BadRequestError``), so our retry policy (before any output was yielded) and the
breaker treat them as any provider's; a stream that fails after output was yielded is
``StreamInterrupted``. Error texts have every known secret (the ``api_key`` given,
the ``*_API_KEY`` variables) blanked out. A history litellm cannot be sent (a file
the provider takes only as an upload, a MIME type no block holds, a call without a
name) is a ``BadRequestError`` before any call.

Not as google-adk (see docs/models.md): no partial responses for tool-call
arguments while they stream; no file uploads, ``file_data`` parts, thought
signatures, prompt-cache injection points or DeepSeek's inline call tokens; the
texts added to a request (a user turn when it ends with the model's, a placeholder
tool result) are worded here.

Without litellm installed the class imports; making one raises
``ModuleNotFoundError`` naming the extra and its pip command.
"""

from __future__ import annotations

import ast
import base64
import copy
import importlib
import importlib.util
import json
import os
import re
import uuid
from collections.abc import AsyncIterator, Iterable
from typing import Any

from pydantic import Field, PrivateAttr

from .._extras import extra_hint
from .._secrets import redact, register_secret
from .._types import Content, FunctionCall, LlmRequest, LlmResponse, Part, UsageMetadata
from ._errors import (
    BadRequestError,
    ConnectionFailed,
    ContentBlocked,
    ModelError,
    ModelTimeout,
    StreamInterrupted,
)
from ._gemini import ANSWER_THE_INSTRUCTION, GO_ON
from ._http import HttpModel, error_for_status
from ._llm_registry import LITE_LLM_MODELS
from ._providers import _HttpLlm

__all__ = ["LiteLLMClient", "LiteLlm", "LiteLlmModel", "completion_args", "load_litellm", "response_of"]

#: a tool call's result when the history has none (its run was cut short)
NO_TOOL_RESULT = "Error: this tool call has no recorded result (its run may have been interrupted)."

_FINISH_REASONS = {"length": "MAX_TOKENS", "stop": "STOP", "tool_calls": "STOP", "function_call": "STOP",
                   "content_filter": "SAFETY"}
_FILE_MIME_TYPES = frozenset({
    "application/pdf", "application/msword", "application/json", "application/x-sh",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
})
#: providers that take a file only as an uploaded file's id
_UPLOAD_PROVIDERS = frozenset({"openai", "azure"})
_SAMPLING = {"temperature": "temperature", "max_output_tokens": "max_completion_tokens", "top_p": "top_p",
             "top_k": "top_k", "seed": "seed", "stop": "stop", "presence_penalty": "presence_penalty",
             "frequency_penalty": "frequency_penalty"}
#: the constructor's arguments that the class manages itself (never passed on)
_MANAGED = ("llm_client", "messages", "tools", "stream")


def load_litellm() -> Any:
    """The ``litellm`` module, imported on the first call with safe defaults: no
    ``.env`` loaded by it (``LITELLM_MODE=PRODUCTION``, as google-adk), its bundled
    model-cost map instead of a download at import (``LITELLM_LOCAL_MODEL_COST_MAP``),
    no "get help" banner printed on errors; each default is only set when the
    variable is unset. Functions go into the prompt for models without native
    function calling (google-adk's setting). Not installed: ``ModuleNotFoundError``
    naming the ``litellm`` extra and its pip command."""
    if importlib.util.find_spec("litellm") is None:
        raise ModuleNotFoundError(f"LiteLlm needs litellm: {extra_hint('litellm')}", name="litellm")
    os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    litellm: Any = importlib.import_module("litellm")
    litellm.add_function_to_prompt = True
    litellm.suppress_debug_info = True
    return litellm


class LiteLLMClient:
    """What ``LiteLlm`` calls (google-adk's ``LiteLLMClient``): litellm's
    ``acompletion`` / ``completion``. A test or a program may give its own."""

    async def acompletion(self, model: Any, messages: Any, tools: Any, **kwargs: Any) -> Any:
        return await load_litellm().acompletion(model=model, messages=messages, tools=tools, **kwargs)

    def completion(self, model: Any, messages: Any, tools: Any, stream: bool = False, **kwargs: Any) -> Any:
        return load_litellm().completion(model=model, messages=messages, tools=tools, stream=stream, **kwargs)


# -- the request ------------------------------------------------------------------------------------


def _unproxied(model: str) -> str:
    """``model`` without a ``litellm_proxy/`` prefix when a provider follows it (the
    prefix names the transport; the next segment the provider that answers)."""
    if model.lower().startswith("litellm_proxy/") and "/" in model[len("litellm_proxy/"):]:
        return model[len("litellm_proxy/"):]
    return model


def provider_of(model: str) -> str:
    """The provider a litellm model name routes to (``openai`` of ``openai/gpt-4o``)."""
    name = _unproxied(model)
    if "/" in name:
        return name.split("/", 1)[0].lower()
    lowered = name.lower()
    if "azure" in lowered:
        return "azure"
    return "openai" if lowered.startswith(("gpt-", "o1")) else ""


def _anthropic_model(model: str) -> bool:
    """Claude reached through litellm: ``anthropic/...``, a Bedrock Anthropic model,
    Claude on Vertex AI."""
    lowered = _unproxied(model.lower())
    family, _, rest = lowered.partition("/")
    return family == "anthropic" or (family == "bedrock" and ("anthropic" in rest or "claude" in rest)) or \
        (family == "vertex_ai" and "claude" in rest)


def _anthropic_route(provider: str, model: str) -> bool:
    """Whether ``provider`` (a custom one) reaches Claude with ``model``."""
    provider = provider.lower()
    if provider not in ("anthropic", "bedrock", "vertex_ai"):
        return False
    if provider == "anthropic":
        return True
    name = model[len("litellm_proxy/"):] if model.lower().startswith("litellm_proxy/") else model
    return _anthropic_model(name if "/" in name else f"{provider}/{name}")


def _gemini_name(model: str) -> bool:
    last = model.rsplit("/", 1)[-1] if "/" in model and not model.startswith("projects/") else model
    return last.removeprefix("models/").startswith("gemini-")


def _gemma4(model: str, custom_provider: Any) -> bool:
    """Gemma 4 (not behind an OpenAI-compatible endpoint) takes tool results as
    ``tool_responses`` messages."""
    provider = next((p for p in (str(custom_provider or "").strip().lower(), provider_of(model))
                     if p and p != "litellm_proxy"), "")
    return provider not in ("openai", "azure", "lm_studio") and re.search(r"gemma-?4", model.lower()) is not None


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, OverflowError, RecursionError):
        return str(value)


def _mime(mime_type: str) -> str:
    return mime_type.split(";", 1)[0].strip().lower()


def _decoded(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1", errors="replace")


def _audio_format(mime_type: str) -> str:
    subtype = _mime(mime_type).split("/", 1)[1].removeprefix("x-")
    return {"mpeg": "mp3", "wave": "wav", "vnd.wave": "wav"}.get(subtype, subtype)


def _blocks(parts: list[Part], provider: str) -> Any:
    """A message's content: one text part as its string, else a list of blocks (an
    empty list when no part carries anything a block holds). A file the provider
    takes only as an upload, or a MIME type no block holds, is a BadRequestError."""
    if len(parts) == 1:
        only = parts[0]
        if only.text:
            return only.text
        if only.inline_data is not None and only.inline_data.data and _mime(only.inline_data.mime_type).startswith("text/"):
            return _decoded(only.inline_data.data)
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if part.text:
            blocks.append({"type": "text", "text": part.text})
            continue
        blob = part.inline_data
        if blob is None or not blob.data or not blob.mime_type:
            continue
        mime = _mime(blob.mime_type)
        if mime.startswith("text/"):
            blocks.append({"type": "text", "text": _decoded(blob.data)})
            continue
        encoded = base64.b64encode(blob.data).decode()
        major = mime.split("/", 1)[0]
        if major == "audio":
            blocks.append({"type": "input_audio", "input_audio": {"data": encoded, "format": _audio_format(mime)}})
        elif major in ("image", "video"):
            kind = f"{major}_url"
            blocks.append({"type": kind, kind: {"url": f"data:{mime};base64,{encoded}"}})
        elif mime in _FILE_MIME_TYPES:
            if provider in _UPLOAD_PROVIDERS:
                raise BadRequestError(f"LiteLlm: a {mime} file for {provider} must be uploaded first (its file id "
                                      "sent), which is not built here; send it as text or an image instead")
            blocks.append({"type": "file", "file": {"file_data": f"data:{mime};base64,{encoded}"}})
        else:
            raise BadRequestError(f"LiteLlm takes no content part with MIME type {blob.mime_type}")
    return blocks


def _message(content: Content, provider: str, tool_role: str = "tool") -> list[dict[str, Any]]:
    """The messages of one content: its function results as ``tool`` messages, then
    the rest as a ``user`` or ``assistant`` message (see the module)."""
    parts = list(content.parts)
    if not parts:
        return []
    results = [{"role": tool_role, "tool_call_id": p.function_response.id or "",
                "content": _json(p.function_response.response)}
               for p in parts if p.function_response is not None]
    # a tool's inline media cannot ride in its tool message (text only): it follows,
    # with the content's other parts, as google-adk's LiteLlm sends it (a URI is not sent)
    rest = [m for p in parts for m in ([p] if p.function_response is None else
                                       [Part(inline_data=r.inline_data) for r in p.function_response.parts or ()
                                        if r.inline_data is not None])]
    if results:
        return results + (_message(Content(role=content.role, parts=rest), provider, tool_role) if rest else [])
    if content.role not in ("model", "assistant"):
        return [{"role": "user", "content": _blocks([p for p in parts if not p.thought], provider) or None}]
    calls: list[dict[str, Any]] = []
    said: list[Part] = []
    thoughts: list[str] = []
    for part in parts:
        if part.function_call is not None:
            if not part.function_call.name:
                raise BadRequestError("LiteLlm: a function call in the history has no name")
            calls.append({"type": "function", "id": part.function_call.id or "",
                          "function": {"name": part.function_call.name, "arguments": _json(part.function_call.args)}})
        elif part.thought:
            if part.text:
                thoughts.append(part.text)
        else:
            said.append(part)
    text = _blocks(said, provider) if said else None
    if isinstance(text, list):
        texts = [block["text"] for block in text if block["type"] == "text"]
        if texts:
            text = "\n".join(texts)
    return [{"role": "assistant", "content": text, "tool_calls": calls or None,
             "reasoning_content": "\n".join(thoughts) or None}]


def _with_tool_results(messages: list[dict[str, Any]], tool_role: str) -> list[dict[str, Any]]:
    """``messages`` with a placeholder tool message for every call not answered
    before the next other message (providers refuse such a history)."""
    healed: list[dict[str, Any]] = []
    pending: list[str] = []
    for message in messages:
        role = message.get("role")
        if pending and role != tool_role:
            healed.extend({"role": tool_role, "tool_call_id": i, "content": NO_TOOL_RESULT} for i in pending)
            pending = []
        if role == "assistant":
            pending = [c["id"] for c in message.get("tool_calls") or [] if c.get("id")]
        elif role == tool_role and message.get("tool_call_id") in pending:
            pending.remove(message["tool_call_id"])
        healed.append(message)
    healed.extend({"role": tool_role, "tool_call_id": i, "content": NO_TOOL_RESULT} for i in pending)
    return healed


def _flat_for_ollama(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Ollama's chat endpoint takes text content as a string: a list of text blocks
    is joined by newlines (one with media is kept for litellm to convert)."""
    flat = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and not any(isinstance(b, dict) and b.get("type") in
                                                 ("image_url", "video_url", "audio_url") for b in content):
            texts = [b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text"
                     and isinstance(b.get("text"), str) and b["text"]]
            message = {**message, "content": "\n".join(texts) if texts else _json(content)}
        elif isinstance(content, dict):
            message = {**message, "content": _json(content)}
        flat.append(message)
    return flat


def _lowercase_types(schema: Any) -> None:
    if isinstance(schema, list):
        for item in schema:
            _lowercase_types(item)
        return
    if not isinstance(schema, dict):
        return
    kind = schema.get("type")
    if isinstance(kind, str):
        schema["type"] = kind.lower()
    elif isinstance(kind, list):
        schema["type"] = [k.lower() if isinstance(k, str) else k for k in kind]
    for key in ("$defs", "definitions", "defs", "dependentSchemas", "patternProperties", "properties"):
        if isinstance(schema.get(key), dict):
            for child in schema[key].values():
                _lowercase_types(child)
    for key in ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames"):
        _lowercase_types(schema.get(key))
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        _lowercase_types(schema.get(key))


def _strict(schema: Any) -> None:
    """OpenAI's strict structured output: no siblings beside ``$ref``; every object
    closed (``additionalProperties: false``) with all its properties required."""
    if not isinstance(schema, dict):
        return
    if "$ref" in schema:
        for key in [k for k in schema if k != "$ref"]:
            del schema[key]
        return
    if schema.get("type") == "object" and "properties" in schema:
        schema["additionalProperties"] = False
        schema["required"] = sorted(schema["properties"])
    for child in (*schema.get("$defs", {}).values(), *schema.get("properties", {}).values()):
        _strict(child)
    for key in ("anyOf", "oneOf", "allOf"):
        for child in schema.get(key, []):
            _strict(child)
    if isinstance(schema.get("items"), dict):
        _strict(schema["items"])


def _response_format(schema: Any, model: str) -> dict[str, Any] | None:
    """``response_schema`` as litellm's ``response_format``: a ``json_object`` /
    ``json_schema`` format as given; for a Gemini model ``json_object`` with the
    schema; else a strict ``json_schema`` named by the schema's title (or
    ``response``). A pydantic class gives its JSON schema and its name."""
    name = "response"
    if isinstance(schema, type) and hasattr(schema, "model_json_schema"):
        body: Any = schema.model_json_schema()
        name = schema.__name__
    elif isinstance(schema, dict):
        if isinstance(schema.get("type"), str) and schema["type"].lower() in ("json_object", "json_schema"):
            return schema
        body = copy.deepcopy(schema)
        if "title" in body:
            name = str(body["title"])
    else:
        return None
    stripped = model.removeprefix("litellm_proxy/")
    if stripped.startswith("gemini/") or (stripped.startswith("vertex_ai/") and "gemini" in stripped):
        return {"type": "json_object", "response_schema": body}
    _lowercase_types(body)
    _strict(body)
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": body}}


def _tool(declaration: Any) -> dict[str, Any]:
    parameters = copy.deepcopy(declaration.parameters_schema) if declaration.parameters_schema else \
        {"type": "object", "properties": {}}
    _lowercase_types(parameters)
    return {"type": "function", "function": {"name": declaration.name, "description": declaration.description or "",
                                             "parameters": parameters}}


def _without_thinking_rejects(args: dict[str, Any]) -> None:
    """Anthropic refuses some sampling settings while it thinks: drop them then."""
    thinking = args.get("thinking")
    if args.get("reasoning_effort") in (None, "none") and not (
            isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")):
        return
    if args.get("temperature") != 1:
        args.pop("temperature", None)
    args.pop("top_k", None)
    if args.get("top_p") is not None and args["top_p"] < 0.95:
        args.pop("top_p")


def _is_anthropic(model: str, custom_provider: Any) -> bool:
    return _anthropic_model(model) or "claude" in _unproxied(model).lower() or \
        bool(custom_provider and _anthropic_route(str(custom_provider), model))


_ANTHROPIC_MIN_BUDGET = 1024
_ANTHROPIC_EFFORT_BUDGETS = {"minimal": 1024, "low": 1024, "medium": 2048, "high": 4096}
_CLAUDE_4_6 = ("opus-4-6", "opus_4_6", "opus-4.6", "opus_4.6", "sonnet-4-6", "sonnet_4_6", "sonnet-4.6",
               "sonnet_4.6")
_CLAUDE_4_7 = ("opus-4-7", "opus_4_7", "opus-4.7", "opus_4.7")
_GEMINI_MIN_BUDGETS = {"gemini-2.5-pro": 128, "gemini-2.5-flash-lite": 512}


def _reason(sampling: dict[str, Any], thinking: dict[str, Any], model: str, custom_provider: Any, max_tokens: Any,
            constructor_reasoning: bool, litellm: Any) -> None:
    """Into ``sampling``: ``thinking_config`` as litellm's ``thinking`` /
    ``reasoning_effort`` (and, for Claude, without what Anthropic refuses then), for a
    model litellm says reasons (else nothing), by what litellm says it takes (see
    google-adk's rules: a level becomes an effort, or an Anthropic budget under the
    token limit; a budget of 0 turns thinking off; a positive budget is kept, at least
    the provider's floor and under Anthropic's token limit, or becomes an effort; with
    neither, ``include_thoughts`` asks for thinking)."""
    stripped = _unproxied(model)
    custom = str(custom_provider) if custom_provider and str(custom_provider).strip().lower() != "litellm_proxy" \
        else None
    if not thinking or not litellm.supports_reasoning(model=stripped, custom_llm_provider=custom):
        return
    takes = litellm.get_supported_openai_params(model=stripped, custom_llm_provider=custom) or ()
    try:
        info = litellm.get_model_info(model=stripped, custom_llm_provider=custom)
    except Exception:  # a model litellm has no card for
        info = None
    lowered = stripped.lower()
    anthropic = _is_anthropic(model, custom) or bool(info and info.get("litellm_provider") == "anthropic")
    claude_4_7 = anthropic and any(s in lowered for s in _CLAUDE_4_7)
    adaptive = anthropic and (claude_4_7 or any(s in lowered for s in _CLAUDE_4_6)
                              or bool(info and info.get("supports_adaptive_thinking")))
    gemini = _gemini_name(lowered)
    gemini_3 = gemini and "gemini-3" in lowered
    level = thinking.get("thinking_level")
    level = None if not level or str(getattr(level, "value", level)) == "THINKING_LEVEL_UNSPECIFIED" else level
    budget = thinking.get("thinking_budget")
    out: dict[str, Any] = {}
    if level is not None:
        effort = str(getattr(level, "value", level)).lower()
        if anthropic and not adaptive:
            effort_budget = _ANTHROPIC_EFFORT_BUDGETS.get(effort)
            if max_tokens is not None and max_tokens <= _ANTHROPIC_MIN_BUDGET:
                pass
            elif effort == "minimal" or (max_tokens is not None and effort_budget is not None
                                         and max_tokens <= effort_budget):
                if "thinking" in takes:
                    out["thinking"] = {"type": "enabled", "budget_tokens": min(effort_budget, max_tokens - 1)
                                       if max_tokens is not None and effort_budget is not None
                                       else _ANTHROPIC_MIN_BUDGET}
            elif "reasoning_effort" in takes:
                out["reasoning_effort"] = effort
        elif "reasoning_effort" in takes and (effort != "minimal" or "thinking" in takes
                                              or bool(info and info.get("supports_minimal_reasoning_effort"))):
            out["reasoning_effort"] = effort
    elif budget == 0:
        if "thinking" in takes and not gemini_3:
            if not gemini:
                out["thinking"] = {"type": "disabled"}
            elif "gemini-2.5-pro" not in lowered:
                out["thinking"] = {"type": "enabled", "budget_tokens": 0}
        elif "reasoning_effort" in takes and (gemini_3 or bool(info and info.get("supports_none_reasoning_effort"))):
            out["reasoning_effort"] = "none"
    elif budget and budget > 0:
        if "thinking" in takes and not gemini_3 and not claude_4_7:
            floor = _ANTHROPIC_MIN_BUDGET if anthropic else \
                next((f for name, f in _GEMINI_MIN_BUDGETS.items() if name in lowered), 0) if gemini else 0
            tokens: int | None = max(floor, budget)
            if anthropic and max_tokens is not None:
                tokens = min(max(floor, budget), max_tokens - 1) if max_tokens > _ANTHROPIC_MIN_BUDGET else None
            if tokens is not None:
                out["thinking"] = {"type": "enabled", "budget_tokens": tokens}
        elif "reasoning_effort" in takes:
            out["reasoning_effort"] = "low" if budget <= 1024 else "medium" if budget <= 2048 else "high"
    if not out and level is None and (budget is None or budget < 0) and not constructor_reasoning:
        include = thinking.get("include_thoughts")
        if include is True and "thinking" in takes and not gemini_3:
            if not anthropic:
                out["thinking"] = {"type": "enabled"}
            elif claude_4_7:
                out["thinking"] = {"type": "adaptive"}
            elif max_tokens is None or max_tokens > _ANTHROPIC_MIN_BUDGET:
                out["thinking"] = {"type": "enabled", "budget_tokens": _ANTHROPIC_MIN_BUDGET}
        elif include is False and gemini and "thinking" in takes:
            out["thinking"] = {"type": "disabled"}
    sampling.update(out)
    if anthropic:
        _without_thinking_rejects(sampling)


def completion_args(request: LlmRequest, model: str, extra: dict[str, Any], *, stream: bool,
                    litellm: Any = None) -> dict[str, Any]:
    """litellm's ``acompletion`` arguments for ``request`` (see the module), the
    constructor's ``extra`` arguments among them. The request is not changed.
    ``litellm`` (the module) answers what a model takes for its thinking settings."""
    model = request.model or model
    provider = provider_of(model)
    custom = extra.get("custom_llm_provider")
    tool_role = "tool_responses" if _gemma4(model, custom) else "tool"
    contents = list(request.contents)
    if not contents:
        contents.append(Content(role="user", parts=[Part(text=ANSWER_THE_INSTRUCTION)]))
    elif contents[-1].role != "user":
        contents.append(Content(role="user", parts=[Part(text=GO_ON)]))
    last_user = next((c for c in reversed(contents) if c.role == "user"), None)
    if last_user is not None and not any(p.text or (p.inline_data is not None and p.inline_data.data)
                                         or p.function_response is not None for p in last_user.parts):
        contents[contents.index(last_user)] = Content(role="user",
                                                      parts=[*last_user.parts, Part(text=ANSWER_THE_INSTRUCTION)])
    messages = [m for content in contents for m in _message(content, provider, tool_role)]
    if request.system_instruction:
        messages.insert(0, {"role": "system", "content": request.system_instruction})
    messages = _with_tool_results(messages, tool_role)
    if str(custom or "").strip().lower() == "ollama_chat" or model.strip().lower().startswith("ollama_chat"):
        messages = _flat_for_ollama(messages)
    tools: list[dict[str, Any]] | None = [_tool(t) for t in request.tools] or None
    config = request.config
    response_format = _response_format(config["response_schema"], model) if config.get("response_schema") else None
    sampling = {theirs: config[ours] for ours, theirs in _SAMPLING.items() if config.get(ours) is not None}
    if "max_output_tokens" not in config and config.get("max_tokens") is not None:
        sampling["max_completion_tokens"] = config["max_tokens"]  # ours by its other name
    if config.get("thinking_config") and litellm is not None:
        limit = sampling.get("max_completion_tokens")
        if limit is None:
            limit = extra.get("max_completion_tokens", extra.get("max_tokens"))
        _reason(sampling, dict(config["thinking_config"]), model, custom, limit,
                extra.get("thinking") is not None or extra.get("reasoning_effort") is not None, litellm)
    wanted = config.get("tool_choice")
    choice = {"any": "required", "none": "none"}.get(wanted) if isinstance(wanted, str) else None
    if "functions" in extra:
        tools, choice = None, None
    args: dict[str, Any] = {"model": model, "messages": messages, "tools": tools,
                            "response_format": response_format, **extra}
    if sampling:
        if "max_completion_tokens" in sampling:
            args.pop("max_tokens", None)
        if "thinking" in sampling:
            args.pop("reasoning_effort", None)
        if "reasoning_effort" in sampling:
            args.pop("thinking", None)
        args.update(sampling)
    if _is_anthropic(model, custom):
        _without_thinking_rejects(args)
    if choice is not None and tools:
        args["tool_choice"] = choice
    if stream:
        args["stream"] = True
        args["stream_options"] = {"include_usage": True}
    return args


# -- the answer --------------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """A litellm object (pydantic) or a dict as plain dicts and lists."""
    if hasattr(value, "model_dump"):
        return value.model_dump()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _arguments(raw: Any) -> Any:
    """A tool call's arguments: JSON, else a Python literal, else either inside a
    Markdown code fence. None when nothing parses."""
    if not raw:
        return {}
    if not isinstance(raw, str):
        return raw
    candidates = [raw]
    fenced = raw.strip()
    if len(fenced) >= 6 and fenced.startswith("```") and fenced.endswith("```"):
        inner = fenced[3:-3].strip()
        candidates.append(inner[4:].strip() if inner.lower().startswith("json") else inner)
    for text in candidates:
        try:
            return json.loads(text)
        except ValueError:
            pass
        try:
            return ast.literal_eval(text)
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
            pass
    return None


def _thoughts(message: dict[str, Any]) -> list[Part]:
    value = message.get("thinking_blocks")
    if value is None:
        value = message.get("reasoning_content")
    if value is None:
        value = message.get("reasoning")
    texts: list[str] = []

    def walk(item: Any) -> None:
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, list):
            for inner in item:
                walk(inner)
        elif isinstance(item, dict):
            if item.get("type") == "redacted":
                return
            if item.get("type") == "thinking":
                texts.append(item.get("thinking") or "")
                return
            for key in ("text", "content", "reasoning", "reasoning_content"):
                if isinstance(item.get(key), str):
                    texts.append(item[key])
    walk(value)
    return [Part(text=t, thought=True) for t in texts if t]


def _usage(usage: Any) -> UsageMetadata | None:
    usage = _plain(usage)
    if not usage or not isinstance(usage, dict):
        return None
    cached = 0
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict) and isinstance(details.get("cached_tokens"), int):
        cached = details["cached_tokens"]
    else:
        for key in ("cached_prompt_tokens", "cached_tokens", "cache_read_input_tokens"):
            if isinstance(usage.get(key), int):
                cached = usage[key]
                break
    reasoning = (usage.get("completion_tokens_details") or {}).get("reasoning_tokens")
    return UsageMetadata(prompt_token_count=usage.get("prompt_tokens") or 0,
                         candidates_token_count=usage.get("completion_tokens") or 0,
                         total_token_count=usage.get("total_tokens") or 0, cached_content_token_count=cached,
                         thoughts_token_count=reasoning if isinstance(reasoning, int) and reasoning else None)


def _inline_calls(text: str) -> tuple[list[dict[str, Any]], str | None]:
    """Tool calls a model wrote into its text as JSON objects with a ``name`` and
    ``arguments`` (each given an id when it has none), and the text around them."""
    calls: list[dict[str, Any]] = []
    rest: list[str] = []
    cursor = 0
    decoder = json.JSONDecoder()
    while cursor < len(text):
        brace = text.find("{", cursor)
        if brace == -1:
            rest.append(text[cursor:])
            break
        rest.append(text[cursor:brace])
        try:
            found, end = decoder.raw_decode(text, brace)
        except ValueError:
            rest.append("{")
            cursor = brace + 1
            continue
        if isinstance(found, dict) and isinstance(found.get("name"), str) and found.get("arguments") is not None:
            arguments = found["arguments"]
            calls.append({"type": "function", "id": str(found.get("id") or f"call_{uuid.uuid4().hex}"),
                          "function": {"name": found["name"],
                                       "arguments": arguments if isinstance(arguments, str) else _json(arguments)}})
        else:
            rest.append(text[brace:end])
        cursor = end
    return calls, "".join(rest).strip() or None


def _answer(text: Any, tool_calls: Iterable[dict[str, Any]], thoughts: list[Part], finish: Any, usage: Any,
            model: Any, *, include_thoughts: bool | None = None) -> LlmResponse:
    """One final response (see the module for the finish reason and the malformed
    calls). A text without tool calls is searched for calls written into it as JSON;
    ``include_thoughts=False`` leaves the thoughts out."""
    tool_calls = list(tool_calls)
    if not tool_calls and isinstance(text, str):
        written, rest = _inline_calls(text)
        if written:
            tool_calls, text = written, rest
    parts = [] if include_thoughts is False else list(thoughts)
    if isinstance(text, str) and text:
        parts.append(Part(text=text))
    malformed: list[str] = []
    for call in tool_calls:
        if call.get("type", "function") != "function":
            continue
        function = call.get("function") or {}
        args = _arguments(function.get("arguments"))
        if not isinstance(args, dict):
            malformed.append(str(function.get("name") or "<unnamed>"))
            continue
        parts.append(Part(function_call=FunctionCall(id=call.get("id"), name=function.get("name") or "", args=args)))
    response = LlmResponse(content=Content(role="model", parts=parts), partial=False, model_version=model)
    reason = _FINISH_REASONS.get(str(finish).lower(), "OTHER") if finish else None
    if malformed:
        response.finish_reason = response.error_code = "MALFORMED_FUNCTION_CALL"
        response.error_message = "the arguments of these tool calls are not a JSON object: " + ", ".join(malformed)
    if reason is not None and not (malformed and reason in ("STOP", "OTHER")):
        earlier = response.error_message if malformed else None
        response.finish_reason = reason
        if reason == "STOP":
            response.error_code = response.error_message = None
        else:
            response.error_code = reason
            response.error_message = "the answer reached its token limit" if reason == "MAX_TOKENS" else \
                f"the answer ended with {reason}"
            if earlier:
                response.error_message += "; " + earlier
    response.usage_metadata = _usage(usage)
    return response


def response_of(answer: Any, *, include_thoughts: bool | None = None) -> LlmResponse:
    """A non-streamed litellm answer (``ModelResponse``) as one LlmResponse."""
    data = _plain(answer)
    choices = data.get("choices") or []
    message = (choices[0].get("message") if choices else None) or {}
    finish = choices[0].get("finish_reason") if choices else None
    return _answer(message.get("content"), message.get("tool_calls") or [], _thoughts(message), finish,
                   data.get("usage"), data.get("model"), include_thoughts=include_thoughts)


class _Stream:
    """Streamed chunks in, partial responses out; :meth:`finish` is the one final
    response with all the text, thoughts and tool calls (by index), the last finish
    reason and the usage. With ``include_thoughts=False`` thoughts are not passed on."""

    def __init__(self, model: str, include_thoughts: bool | None = None) -> None:
        self.model = model
        self.include_thoughts = include_thoughts
        self.text: list[str] = []
        self.thoughts: list[Part] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: Any = None
        self.usage: Any = None

    def feed(self, chunk: Any) -> list[LlmResponse]:
        data = _plain(chunk)
        self.model = data.get("model") or self.model
        if data.get("usage"):
            self.usage = data["usage"]
        choice = next((c for c in data.get("choices") or [] if not c.get("index")), None)
        if choice is None:
            return []
        if choice.get("finish_reason"):
            self.finish_reason = choice["finish_reason"]
        delta = choice.get("delta") or {}
        out: list[LlmResponse] = []
        thoughts = _thoughts(delta)
        if thoughts:
            self.thoughts.extend(thoughts)
        if thoughts and self.include_thoughts is not False:
            out.append(LlmResponse(content=Content(role="model", parts=thoughts), partial=True,
                                   model_version=data.get("model")))
        if isinstance(delta.get("content"), str) and delta["content"]:
            self.text.append(delta["content"])
            out.append(LlmResponse(content=Content(role="model", parts=[Part(text=delta["content"])]), partial=True,
                                   model_version=data.get("model")))
        for position, call in enumerate(delta.get("tool_calls") or []):
            function = call.get("function") or {}
            if not function.get("name") and not function.get("arguments"):
                continue
            index = call.get("index")
            index = position if index is None else int(index)
            slot = self.calls.setdefault(index, {"id": None, "name": "", "arguments": []})
            slot["id"] = call.get("id") or slot["id"]
            slot["name"] += function.get("name") or ""
            if function.get("arguments"):
                slot["arguments"].append(function["arguments"])
        return out

    def finish(self) -> LlmResponse:
        merged: list[Part] = []
        for part in self.thoughts:  # one thought part, not one per delta
            if merged and part.text is not None and merged[-1].text is not None:
                merged[-1] = Part(text=merged[-1].text + part.text, thought=True)
            else:
                merged.append(part)
        calls = [{"type": "function", "id": slot["id"] or str(index),
                  "function": {"name": slot["name"], "arguments": "".join(slot["arguments"])}}
                 for index, slot in sorted(self.calls.items())]
        return _answer("".join(self.text) or None, calls, merged,
                       self.finish_reason or ("tool_calls" if calls else "stop"), self.usage, self.model,
                       include_thoughts=self.include_thoughts)


# -- errors ------------------------------------------------------------------------------------------


def _retry_after(error: Exception) -> float | None:
    headers = getattr(getattr(error, "response", None), "headers", None)
    if headers is None:
        return None
    for key, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(key)
        if value:
            try:
                return float(value) / scale
            except ValueError:
                return None
    return None


def provider_error(error: Exception, litellm: Any) -> ModelError | None:
    """litellm's exception as our typed error (see the module), its text without
    secrets; None for an exception that is not a provider's (a bug is not retried)."""
    status = getattr(error, "status_code", None)
    text = redact(f"litellm: {type(error).__name__}: {error}")
    if isinstance(error, litellm.Timeout):
        return ModelTimeout(text, status=status)
    if isinstance(error, litellm.APIConnectionError):
        return ConnectionFailed(text, status=status)
    if isinstance(error, litellm.ContentPolicyViolationError):
        return ContentBlocked(text, status=status)
    if not isinstance(status, int):
        return None
    return error_for_status(status, text, _retry_after(error))


# -- the connector and the class ------------------------------------------------------------------


class LiteLlmModel(HttpModel):
    """The connector of a ``LiteLlm``: :meth:`payload` is litellm's arguments,
    :meth:`send` calls ``acompletion`` under our retry policy (see the module)."""

    provider = "litellm"

    def __init__(self, name: str, *, client: Any, extra: dict[str, Any], **options: Any) -> None:
        super().__init__(name, base_url=str(extra.get("api_base") or extra.get("base_url") or ""),
                         api_key=extra.get("api_key") if isinstance(extra.get("api_key"), str) else None, **options)
        self.client = client
        self.extra = extra

    def payload(self, request: LlmRequest, stream: bool) -> dict[str, Any]:
        args = completion_args(request, self.name, self.extra, stream=stream, litellm=load_litellm())
        args.setdefault("max_retries", 0)  # our retry policy retries, not the provider's SDK underneath
        args.setdefault("timeout", self.timeout)
        return args

    async def generate(self, request: LlmRequest, *, stream: bool = False) -> AsyncIterator[LlmResponse]:
        thinking = request.config.get("thinking_config") or {}
        include = thinking.get("include_thoughts") if isinstance(thinking, dict) else \
            getattr(thinking, "include_thoughts", None)
        async for response in self.send(self.payload(request, stream), stream=stream, include_thoughts=include):
            yield response

    async def send(self, payload: dict[str, Any], *, stream: bool = False,
                   include_thoughts: bool | None = None) -> AsyncIterator[LlmResponse]:
        """Call ``acompletion`` with ``payload``; on a retryable error before any
        output, wait (our retry policy) and call again, up to its attempts; yield
        what it answers (see the module)."""
        litellm = load_litellm()
        attempt = 0
        while True:
            attempt += 1
            yielded = False
            try:
                answer = await self.client.acompletion(**payload)
                if not stream:
                    yield response_of(answer, include_thoughts=include_thoughts)
                    return
                collected = _Stream(str(payload.get("model") or self.name), include_thoughts)
                async for chunk in answer:
                    for item in collected.feed(chunk):
                        yielded = True
                        yield item
                final = collected.finish()
                yielded = True
                yield final
                return
            except ModelError as exc:
                error: ModelError = exc
            except Exception as exc:
                mapped = provider_error(exc, litellm)
                if mapped is None:
                    raise
                error = mapped
            if yielded:
                raise StreamInterrupted(f"the litellm stream failed mid-way: {error}") from None
            if not getattr(error, "retryable", False) or attempt >= self.retry.max_attempts:
                raise error
            wait = self.retry.delay(attempt, self.rng, getattr(error, "retry_after", None))
            self.slept.append(wait)
            await self.sleep(wait)


class LiteLlm(_HttpLlm):
    """google-adk's ``LiteLlm``: any model litellm reaches (``openai/gpt-4o-mini``,
    ``anthropic/...``, ``ollama_chat/...``), the keyword arguments (``api_base``,
    ``api_key``, ``custom_llm_provider``, ``drop_params``...) passed on to each call
    except ``messages``, ``tools``, ``stream`` and ``llm_client``, which the class
    manages. ``llm_client`` is what is called (litellm's by default). The arguments
    never show in its repr or dump. Without litellm: ``ModuleNotFoundError`` (see
    the module)."""

    llm_client: LiteLLMClient = Field(default_factory=LiteLLMClient, exclude=True)
    _additional_args: dict[str, Any] = PrivateAttr(default_factory=dict)

    @classmethod
    def available(cls) -> bool:
        """Whether the ``litellm`` library is installed (LLMRegistry skips LiteLlm without it)."""
        return importlib.util.find_spec("litellm") is not None

    def __init__(self, model: str, **kwargs: Any) -> None:
        """In order: litellm installed (else ``ModuleNotFoundError`` naming the extra);
        ``llm_client`` taken as the field; the other arguments kept for the calls
        (less ``messages``, ``tools`` and ``stream``); a string ``api_key`` known as
        a secret of this process."""
        if not self.available():
            raise ModuleNotFoundError(f"LiteLlm({model!r}) needs litellm: {extra_hint('litellm')}", name="litellm")
        client = kwargs.pop("llm_client", None)
        super().__init__(model=model, **({"llm_client": client} if client is not None else {}))
        self._additional_args = {k: v for k, v in kwargs.items() if k not in _MANAGED}
        if isinstance(kwargs.get("api_key"), str):
            register_secret(kwargs["api_key"])  # blanked out of errors and events from now on

    @classmethod
    def supported_models(cls) -> list[str]:
        return list(LITE_LLM_MODELS)

    def build_connector(self) -> HttpModel:
        return LiteLlmModel(self.model, client=self.llm_client, extra=dict(self._additional_args))
