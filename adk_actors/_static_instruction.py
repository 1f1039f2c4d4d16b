"""An LlmAgent's ``static_instruction`` (google-adk 2.x) as one Content.

google-adk takes any of google.genai's content shapes there: a string, a Part, a
Content, or a list of strings and Parts (ours or google.genai's, or their dicts). In
order: a string becomes a user Content of one text part; a Part, or a list, becomes a
user Content of those parts; a Content (or its dict) is taken as it is, its role set
to user when it has none. Anything else, or a part that is not a Part, raises
:class:`AgentDefinitionError` when the agent is built.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ._exceptions import AgentDefinitionError, InvalidRequestError
from ._types import Content, Part
from .types import ours

__all__ = ["static_content"]


def _part(item: Any) -> Part:
    return Part(text=item) if isinstance(item, str) else ours(item, Part)


def static_content(value: Any) -> Content:
    """``value`` (see the module) as one user Content."""
    try:
        if isinstance(value, str):
            return Content(role="user", parts=(Part(text=value),))
        if isinstance(value, (list, tuple)):
            return Content(role="user", parts=tuple(_part(item) for item in value))
        if not isinstance(value, (dict, BaseModel)):
            raise ValueError(f"got {type(value).__name__}")
        fields = value if isinstance(value, dict) else type(value).model_fields
        if "parts" not in fields:  # a Part, ours or google.genai's, or its dict
            return Content(role="user", parts=(_part(value),))
        content = ours(value, Content)
    except (InvalidRequestError, ValueError) as exc:
        raise AgentDefinitionError(f"static_instruction must be a string, a Part, a Content or a list of "
                                   f"strings and Parts: {exc}") from exc
    return content if content.role else content.model_copy(update={"role": "user"})
