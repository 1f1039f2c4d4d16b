"""A value a user gives for a Gemini built-in tool's settings, as the JSON google-genai
sends for it in a Vertex AI request's ``tools``.

google-genai sends the ``retrieval`` entry (Vertex AI Search, Vertex AI RAG) as its
fields' own snake_case names, empty fields left out, and the tools here send the
same. A setting may come as google.genai's object (anything with pydantic's
``model_dump``), as a mapping (snake_case or camelCase keys), or as plain JSON values.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from pydantic.alias_generators import to_snake

__all__ = ["snake_json"]


def snake_json(value: Any) -> Any:
    """``value`` as snake_case JSON, in order: a pydantic object dumped by its field
    names (``None`` fields left out), then read as below; a mapping with each key
    snake_cased and ``None`` values left out; a list or tuple item by item; an enum
    member as its value; anything else as it is."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, Mapping):
        return {to_snake(str(key)): snake_json(item) for key, item in value.items() if item is not None}
    if isinstance(value, list | tuple):
        return [snake_json(item) for item in value]
    return value.value if isinstance(value, enum.Enum) else value
