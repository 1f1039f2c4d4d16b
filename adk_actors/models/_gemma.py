"""``Gemma``: google-adk's class for Gemma 3 on the Gemini API, with its
function-calling shim (Gemma 3 has no native function calling or system instruction).

A call, in order: a model name that is not ``gemma-*`` is a ValueError; then, on a
copy of the request, each function call in the history becomes a model turn holding
the call as JSON text and each function response a user turn ``Invoking tool `name`
produced: `{...}`.``; the tools are described in the system instruction (their
declarations as JSON, then the answer format ``{"name": ..., "parameters": {...}}``)
and taken out of the request; the system instruction becomes the first user turn.
The Gemini API is always used (never Vertex AI). Each complete answer that is one
text part holding such a JSON object (in a ```json / ```tool_code block, else the
last JSON object in the text) becomes that function call; any other text stays text.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import AsyncIterator
from typing import Any

from pydantic import AliasChoices, BaseModel, Field, ValidationError

from .._types import Content, FunctionCall, FunctionDeclaration, LlmRequest, LlmResponse, Part
from ._gemini import GeminiModel
from ._http import HttpModel
from ._providers import Gemini
from ._registry import gemini_connector

__all__ = ["Gemma", "GemmaFunctionCallModel", "GemmaModel"]

_log = logging.getLogger("adk_actors.models.gemma")
_BLOCK = re.compile(r"```(?:(json|tool_code))?\s*(.*?)\s*```", re.DOTALL)


class GemmaFunctionCallModel(BaseModel):
    """A function call as Gemma writes it: ``name`` (or ``function``) and
    ``parameters`` (or ``args``)."""

    name: str = Field(validation_alias=AliasChoices("name", "function"))
    parameters: dict[str, Any] = Field(validation_alias=AliasChoices("parameters", "args"))


def _declaration_json(tool: FunctionDeclaration) -> str:
    """A declaration as google.genai's ``FunctionDeclaration`` dumps it (no nulls)."""
    fields: dict[str, Any] = {"description": tool.description or None, "name": tool.name,
                              "parameters_json_schema": tool.parameters_schema}
    return json.dumps({k: v for k, v in fields.items() if v is not None}, separators=(",", ":"),
                      ensure_ascii=False)


def tools_instruction(tools: list[FunctionDeclaration]) -> str:
    """The text that describes the tools to Gemma (empty with no tools)."""
    if not tools:
        return ""
    listed = ",\n".join(_declaration_json(t) for t in tools)
    return (f"You have access to the following functions:\n[{listed}\n]\n"
            'When you call a function, you MUST respond in the format of: {"name": function name, "parameters": '
            "dictionary of argument name and its value}\n"
            "When you call a function, you MUST NOT include any other text in the response.\n")


def _call_text(call: FunctionCall, *, framework_ids: bool = False) -> str:
    """A function call as google.genai's ``FunctionCall`` dumps it; the ids the
    framework made (``adk-...``) are not sent to a model unless ``framework_ids`` (as
    in google-adk: its Gemini path drops them, its litellm path keeps them)."""
    keep = call.id and (framework_ids or not call.id.startswith("adk-"))
    fields: dict[str, Any] = {"id": call.id if keep else None,
                              "args": call.args, "name": call.name}
    return json.dumps({k: v for k, v in fields.items() if v is not None}, separators=(",", ":"), ensure_ascii=False)


def _as_text(content: Content, *, framework_ids: bool = False) -> Content | None:
    """A content with function calls or responses as its text form (None when nothing
    is left), others as they are (``framework_ids``: see :func:`_call_text`)."""
    parts: list[Part] = []
    responded = called = False
    for part in content.parts:
        if part.function_response is not None:
            responded = True
            response = part.function_response
            parts.append(Part(text=f"Invoking tool `{response.name}` produced: `{json.dumps(response.response)}`."))
        elif part.function_call is not None:
            called = True
            parts.append(Part(text=_call_text(part.function_call, framework_ids=framework_ids)))
        else:
            parts.append(part)
    if responded:
        return Content(role="user", parts=tuple(parts)) if parts else None
    if called:
        return Content(role="model", parts=tuple(parts)) if parts else None
    return content


def _last_json(text: str) -> str | None:
    """The last whole JSON value that starts at a ``{`` in ``text``."""
    decoder = json.JSONDecoder()
    found, start = None, 0
    while (brace := text.find("{", start)) >= 0:
        try:
            _, length = decoder.raw_decode(text[brace:])
        except json.JSONDecodeError:
            start = brace + 1
            continue
        found, start = text[brace:brace + length], brace + length
    return found


def function_call_from(response: LlmResponse) -> LlmResponse:
    """``response`` with its one text part read as a function call when it is one."""
    if response.partial or response.content is None or len(response.content.parts) != 1:
        return response
    text = response.content.parts[0].text
    if not text:
        return response
    block = _BLOCK.search(text)
    candidate = block.group(2).strip() if block else _last_json(text)
    if not candidate:
        return response
    try:
        parsed = GemmaFunctionCallModel.model_validate_json(candidate)
    except (ValidationError, ValueError) as exc:
        _log.debug("Gemma's answer is not a function call, kept as text: %s", exc)
        return response
    call = Part(function_call=FunctionCall(name=parsed.name, args=parsed.parameters))
    return response.model_copy(update={"content": Content(role=response.content.role, parts=(call,))})


def shimmed(request: LlmRequest, *, instruction_as_user_turn: bool = True, framework_ids: bool = False
            ) -> LlmRequest:
    """A copy of ``request`` in the form Gemma 3 takes (see the module); with
    ``instruction_as_user_turn`` false the system instruction stays one (litellm sends
    it as the system prompt); ``framework_ids``: see :func:`_call_text`."""
    request = request.model_copy(deep=True)
    request.contents = [c for c in (_as_text(c, framework_ids=framework_ids) for c in request.contents)
                        if c is not None]
    if request.tools:
        request.append_instructions([tools_instruction(list(request.tools))])
        request.tools = []
    if request.system_instruction and instruction_as_user_turn:
        first = Content(role="user", parts=(Part(text=request.system_instruction),))
        if request.contents and request.contents[0] != first:
            request.contents = [first, *request.contents]
        request.system_instruction = ""
    return request


class GemmaModel(GeminiModel):
    """Gemini's REST connector with the shim around each call (the engine's breaker
    and retries guard it as any connector)."""

    provider = "gemma"

    async def generate(self, request: LlmRequest, *, stream: bool = False) -> AsyncIterator[LlmResponse]:
        model = request.model or self.name
        if not model.startswith("gemma-"):
            raise ValueError(f"Requesting a non-Gemma model ({model}) with the Gemma LLM is not supported.")
        async for response in super().generate(shimmed(request), stream=stream):
            yield function_call_from(response)


class Gemma(Gemini):
    """Gemma 3 on the Gemini API with google-adk's function-calling shim (see the
    module). Gemma 4 and later call functions natively: use ``Gemini``."""

    model: str = "gemma-3-27b-it"

    def __repr__(self) -> str:
        return f'{type(self).__name__}(model="{self.model}")'

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"gemma-.*"]

    def build_connector(self) -> HttpModel:
        """Gemini's REST connector with the shim (Gemma is served on the Gemini API
        only: its key and endpoint as ``Gemini``'s, never Vertex AI)."""
        plain = gemini_connector(self.model, os.environ, base_url=self.base_url)
        connector = GemmaModel(self.model, base_url=plain.base_url, api_key=plain.api_key)
        if self.api_version:
            connector.api_version = self.api_version
        return connector
