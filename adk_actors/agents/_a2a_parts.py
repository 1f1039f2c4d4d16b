"""Between A2A messages and our contents, for the agents that speak A2A (google-adk's
``RemoteA2aAgent``) and the A2A server alike (:mod:`adk_actors.a2a` re-exports them).

A2A to ours: text stays text; raw bytes become inline data (their media type and
file name kept); structured data becomes its JSON text; a file by URL becomes a
line naming the URL (a run never fetches a URL a caller gave it). Ours to A2A: text
(thoughts left out) stays text, inline data becomes raw bytes, and a tool's call or
response becomes structured data tagged ``adk_type`` (``function_call`` or
``function_response``), as google-adk tags them.

The rules here are also google-adk's (:mod:`adk_actors.a2a.converters.part_converter`
calls them): bytes to a ``raw`` part (:func:`raw_part`) and back (:func:`blob_of`),
and a call, response or code to a data part of its camelCase fields tagged
``adk_type`` (:func:`tagged_part`).
"""

from __future__ import annotations

import json
from typing import Any

from a2a.types import Message, Part
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.struct_pb2 import Struct, Value
from pydantic import BaseModel

from .._types import Blob, Content
from .._types import Part as OurPart

__all__ = ["a2a_parts", "blob_of", "content_of", "data_part", "raw_part", "tagged_part"]


def content_of(message: Message) -> Content:
    """The user's Content for an A2A message."""
    parts: list[OurPart] = []
    for part in message.parts:
        kind = part.WhichOneof("content")
        if kind == "text":
            parts.append(OurPart(text=part.text))
        elif kind == "raw":
            parts.append(OurPart(inline_data=blob_of(part)))
        elif kind == "data":
            parts.append(OurPart(text=json.dumps(MessageToDict(part.data), ensure_ascii=False)))
        elif kind == "url":
            parts.append(OurPart(text=f"[a file at {part.url}" + (f" ({part.media_type})]" if part.media_type else "]")))
    return Content(role="user", parts=tuple(parts))


def a2a_parts(content: Content | None) -> list[Part]:
    """The A2A parts of an event's content (none for no content)."""
    if content is None:
        return []
    found: list[Part] = []
    for part in content.parts:
        if part.text and not part.thought:
            found.append(Part(text=part.text))
        elif part.inline_data is not None:
            found.append(raw_part(part.inline_data))
        elif part.function_call is not None:
            found.append(tagged_part(part.function_call, "function_call"))
        elif part.function_response is not None:
            found.append(tagged_part(part.function_response, "function_response"))
    return found


def blob_of(part: Part) -> Blob:
    """A ``raw`` A2A part's bytes as inline data: its media type (else
    ``application/octet-stream``) and file name kept."""
    return Blob(mime_type=part.media_type or "application/octet-stream", data=part.raw,
                display_name=part.filename or None)


def raw_part(blob: Blob) -> Part:
    """Inline data as a ``raw`` A2A part: its media type and file name kept."""
    return Part(raw=blob.data, media_type=blob.mime_type, filename=blob.display_name or "")


def tagged_part(value: BaseModel, kind: str) -> Part:
    """A call, a response or code as a data part of its set fields (camelCase, as
    google-adk sends them), tagged ``adk_type`` = ``kind``."""
    return data_part(value.model_dump(mode="json", by_alias=True, exclude_none=True), kind)


def data_part(value: dict[str, Any], kind: str) -> Part:
    """A structured-data part tagged ``adk_type`` = ``kind`` in its metadata."""
    data = Value()
    ParseDict(value, data)
    metadata = Struct()
    metadata.update({"adk_type": kind})
    return Part(data=data, metadata=metadata)
