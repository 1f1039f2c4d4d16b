"""Gemini's JSON parts, both ways: shared by generateContent and the Live API."""

from __future__ import annotations

import base64
from typing import Any

from .._types import (
    Blob,
    CodeExecutionResult,
    Content,
    ExecutableCode,
    FileData,
    FunctionCall,
    FunctionResponse,
    FunctionResponsePart,
    Part,
)

__all__ = ["function_response_name", "function_response_scheduling", "gemini_parts", "to_parts"]


def gemini_parts(content: Content) -> list[dict[str, Any]]:
    """``content``'s parts in Gemini's JSON (each with its thought signature, base64; a
    function response with its ``scheduling`` and the media its tool returned as its ``parts``, whose keys are
    snake_case as google-genai sends them: ``inline_data`` / ``mime_type``, which the
    API takes as it takes camelCase)."""
    parts: list[dict[str, Any]] = []
    for part in content.parts:
        size = len(parts)
        if part.text is not None:
            parts.append({"text": part.text, **({"thought": True} if part.thought else {})})
        elif part.inline_data is not None:
            parts.append({"inlineData": {"mimeType": part.inline_data.mime_type,
                                         "data": base64.b64encode(part.inline_data.data).decode()}})
        elif part.file_data is not None:
            parts.append({"fileData": part.file_data.model_dump(mode="json", by_alias=True, exclude_none=True)})
        elif part.function_call is not None:
            call = part.function_call
            parts.append({"functionCall": {"name": call.name, "args": call.args, **({"id": call.id} if call.id else {})}})
        elif part.function_response is not None:
            result = part.function_response
            parts.append({"functionResponse": {**function_response_name(result), "response": result.response,
                                               **({"id": result.id} if result.id else {}),
                                               **function_response_scheduling(result),
                                               **({"parts": [_response_media(media) for media in result.parts]}
                                                  if result.parts else {})}})
        elif part.executable_code is not None:
            parts.append({"executableCode": part.executable_code.model_dump(mode="json", by_alias=True,
                                                                            exclude_none=True)})
        elif part.code_execution_result is not None:
            parts.append({"codeExecutionResult": part.code_execution_result.model_dump(mode="json", by_alias=True,
                                                                                       exclude_none=True)})
        if part.thought_signature is not None and len(parts) > size:
            parts[-1]["thoughtSignature"] = base64.b64encode(part.thought_signature).decode()
    return parts


def function_response_name(result: FunctionResponse) -> dict[str, Any]:
    """A function response's ``name``, or nothing when it has none (google-genai sends no
    unset field: a response given by ``id`` only goes without one)."""
    return {"name": result.name} if result.name is not None else {}


def function_response_scheduling(result: FunctionResponse) -> dict[str, Any]:
    """A function response's ``scheduling`` as google-genai sends it (its name, under
    ``scheduling``), or nothing when it has none."""
    return {"scheduling": str(result.scheduling)} if result.scheduling is not None else {}


def _response_media(media: FunctionResponsePart) -> dict[str, Any]:
    """One media part of a function response in google-genai's JSON of it (snake_case
    keys, bytes in URL-safe base64 as google-genai encodes them, no unset field)."""
    out: dict[str, Any] = {}
    if media.inline_data is not None:
        blob = media.inline_data
        out["inline_data"] = {"mime_type": blob.mime_type, "data": base64.urlsafe_b64encode(blob.data).decode(),
                              **({"display_name": blob.display_name} if blob.display_name is not None else {})}
    if media.file_data is not None:
        out["file_data"] = media.file_data.model_dump(mode="json", exclude_none=True)
    return out


def to_parts(raw: list[dict[str, Any]]) -> list[Part]:
    """Gemini's JSON parts as ours (text, function calls, inline data, file data, and
    the code the model ran with its code execution tool and what it gave, each with its
    thought signature; others dropped)."""
    parts: list[Part] = []
    for item in raw:
        size = len(parts)
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
        elif isinstance(item.get("fileData"), dict):
            parts.append(Part(file_data=FileData.model_validate(item["fileData"])))
        elif isinstance(item.get("executableCode"), dict):
            parts.append(Part(executable_code=ExecutableCode.model_validate(item["executableCode"])))
        elif isinstance(item.get("codeExecutionResult"), dict):
            parts.append(Part(code_execution_result=CodeExecutionResult.model_validate(item["codeExecutionResult"])))
        signature = item.get("thoughtSignature")
        if isinstance(signature, str) and len(parts) > size:
            parts[-1].thought_signature = base64.b64decode(signature)
    return parts
