"""Gemini's JSON parts, both ways: shared by generateContent and the Live API."""

from __future__ import annotations

import base64
from typing import Any

from .._types import Blob, Content, FunctionCall, Part

__all__ = ["gemini_parts", "to_parts"]


def gemini_parts(content: Content) -> list[dict[str, Any]]:
    """``content``'s parts in Gemini's JSON."""
    parts: list[dict[str, Any]] = []
    for part in content.parts:
        if part.text is not None:
            parts.append({"text": part.text, **({"thought": True} if part.thought else {})})
        elif part.inline_data is not None:
            parts.append({"inlineData": {"mimeType": part.inline_data.mime_type,
                                         "data": base64.b64encode(part.inline_data.data).decode()}})
        elif part.function_call is not None:
            call = part.function_call
            parts.append({"functionCall": {"name": call.name, "args": call.args, **({"id": call.id} if call.id else {})}})
        elif part.function_response is not None:
            result = part.function_response
            parts.append({"functionResponse": {"name": result.name, "response": result.response,
                                               **({"id": result.id} if result.id else {})}})
    return parts


def to_parts(raw: list[dict[str, Any]]) -> list[Part]:
    """Gemini's JSON parts as ours (text, function calls, inline data; others dropped)."""
    parts: list[Part] = []
    for item in raw:
        if "text" in item:
            parts.append(Part(text=item["text"], thought=item.get("thought") or None))
        elif "functionCall" in item:
            call = item["functionCall"]
            parts.append(Part(function_call=FunctionCall(id=call.get("id"), name=call.get("name", ""),
                                                         args=call.get("args") or {})))
        elif "inlineData" in item:
            blob = item["inlineData"]
            parts.append(Part(inline_data=Blob(mime_type=blob.get("mimeType", ""),
                                               data=base64.b64decode(blob.get("data", "")))))
    return parts
