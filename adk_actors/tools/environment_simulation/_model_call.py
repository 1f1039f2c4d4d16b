"""What the simulator's two model users share: the model made from its name, one
prompt sent as one user message, the answer's text, and that text read as JSON.

:func:`simulator_model` makes the model through the model registry (a name no model
class serves is the registry's ``ValueError``). :func:`ask` sends the prompt with no
system instruction and no tools, the config's generation settings as the request's
config, without streaming, and joins the text of every part of every response (an
exception from the model is raised on). :func:`parsed_json` drops one Markdown code
fence around the text (an opening line like ```` ```json ```` and a closing
```` ``` ```` line) and reads the rest as JSON (a ``json.JSONDecodeError`` when it is
not). :func:`declaration_json` is a tool's declaration as google-adk's simulator
shows it to the model.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

from ..._types import Content, LlmRequest, LlmResponse, Part
from ...models._llm_registry import LLMRegistry
from ...types import GenerateContentConfig, generate_config_of

__all__ = ["ask", "declaration_json", "parsed_json", "simulator_model"]

_OPENING_FENCE = re.compile(r"^```[a-zA-Z]*\n")
_CLOSING_FENCE = re.compile(r"\n```$")


def simulator_model(name: str) -> Any:
    """The model called ``name``, made by the model registry."""
    return LLMRegistry.new_llm(name)


async def ask(model: Any, name: str, settings: GenerateContentConfig | None, prompt: str) -> str:
    """The text ``model`` answers to ``prompt`` (see the module); ``name`` is the
    request's model name."""
    request = LlmRequest(model=name, contents=[Content(role="user", parts=[Part(text=prompt)])],
                         config=generate_config_of(settings) if settings is not None else {})
    texts: list[str] = []
    responses: AsyncIterator[LlmResponse] = model.generate(request, stream=False)
    try:
        async for response in responses:
            if response.content is None:
                continue
            texts.extend(part.text for part in response.content.parts if part.text)
    finally:
        close: Callable[[], Any] | None = getattr(responses, "aclose", None)
        if close is not None:
            await close()
    return "".join(texts)


def parsed_json(text: str) -> object:
    """``text`` without a Markdown fence around it, read as JSON (see the module)."""
    unfenced = _CLOSING_FENCE.sub("", _OPENING_FENCE.sub("", text))
    value: object = json.loads(unfenced.strip())
    return value


def declaration_json(tool: Any) -> dict[str, Any] | None:
    """``tool``'s declaration as a JSON-ready dict, its unset fields left out and its
    fields in google.genai's order (by name), or None when it declares nothing. A tool
    of ours gives it by ``declaration()``, a bare google-adk-style tool by
    ``_get_declaration()``; a declaration that is not a pydantic model counts as none."""
    declare = getattr(tool, "declaration", None)
    if not callable(declare):
        declare = getattr(tool, "_get_declaration", None)
    declared = declare() if callable(declare) else None
    dump = getattr(declared, "model_dump", None)
    if not callable(dump):
        return None
    fields: dict[str, Any] = dump(mode="json", exclude_none=True)
    return {key: fields[key] for key in sorted(fields)}
