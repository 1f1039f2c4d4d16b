"""google-adk's ``a2a.converters.part_converter``: one A2A part to one of our parts,
and back, by google-adk's rules.

Ours to A2A (:func:`convert_genai_part_to_a2a_part`), by the part's first field set:
text becomes a text part (a thought marked ``adk_thought``); a file by URI a ``url``
part; inline bytes a ``raw`` part, except bytes wrapped in ``<a2a_datapart_json>``
tags (``text/plain``), which become the data part they were; a function call or
response, executable code or a code execution result becomes a data part of its
fields (camelCase), tagged ``adk_type`` (``function_call``, ...), its thought
signature in ``adk_thought_signature`` (base64). A google.genai ``Part`` is taken as
well; its ``part_metadata`` joins the A2A part's metadata.

A2A to ours (:func:`convert_a2a_part_to_genai_part`): text stays text (``adk_thought``
read back); a ``url`` part becomes file data; a ``raw`` one inline data; a data part
tagged ``adk_type`` the call, response or code it carries, and any other data part
its JSON between ``<a2a_datapart_json>`` tags as ``text/plain`` inline data.

The rules our A2A server and ``RemoteA2aAgent`` use as well (a tagged data part,
bytes to a ``raw`` part and back) are :mod:`adk_actors.agents._a2a_parts`'s, called
here. A part that cannot be converted gives None (logged); anything that is not a
part is a TypeError.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from collections.abc import Callable
from typing import Any

from a2a.types import Part
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.struct_pb2 import Struct
from pydantic import BaseModel

from ..._types import (
    Blob,
    CodeExecutionResult,
    ExecutableCode,
    FileData,
    FunctionCall,
    FunctionResponse,
)
from ..._types import Part as OurPart
from ...agents._a2a_parts import blob_of, raw_part, tagged_part
from .utils import _get_adk_metadata_key

__all__ = [
    "A2A_DATA_PART_END_TAG",
    "A2A_DATA_PART_METADATA_IS_LONG_RUNNING_KEY",
    "A2A_DATA_PART_METADATA_TYPE_CODE_EXECUTION_RESULT",
    "A2A_DATA_PART_METADATA_TYPE_EXECUTABLE_CODE",
    "A2A_DATA_PART_METADATA_TYPE_FUNCTION_CALL",
    "A2A_DATA_PART_METADATA_TYPE_FUNCTION_RESPONSE",
    "A2A_DATA_PART_METADATA_TYPE_KEY",
    "A2A_DATA_PART_START_TAG",
    "A2A_DATA_PART_TEXT_MIME_TYPE",
    "A2APartToGenAIPartConverter",
    "GenAIPartToA2APartConverter",
    "convert_a2a_part_to_genai_part",
    "convert_genai_part_to_a2a_part",
]

logger = logging.getLogger(__name__)

A2A_DATA_PART_METADATA_TYPE_KEY = "type"
A2A_DATA_PART_METADATA_IS_LONG_RUNNING_KEY = "is_long_running"
A2A_DATA_PART_METADATA_TYPE_FUNCTION_CALL = "function_call"
A2A_DATA_PART_METADATA_TYPE_FUNCTION_RESPONSE = "function_response"
A2A_DATA_PART_METADATA_TYPE_CODE_EXECUTION_RESULT = "code_execution_result"
A2A_DATA_PART_METADATA_TYPE_EXECUTABLE_CODE = "executable_code"
A2A_DATA_PART_TEXT_MIME_TYPE = "text/plain"
A2A_DATA_PART_START_TAG = b"<a2a_datapart_json>"
A2A_DATA_PART_END_TAG = b"</a2a_datapart_json>"

#: a part's function call, response or code, the ``adk_type`` of its data part, and
#: our class of it (read back)
_DATA_FIELDS: tuple[tuple[str, str, type[BaseModel]], ...] = (
    ("function_call", A2A_DATA_PART_METADATA_TYPE_FUNCTION_CALL, FunctionCall),
    ("function_response", A2A_DATA_PART_METADATA_TYPE_FUNCTION_RESPONSE, FunctionResponse),
    ("code_execution_result", A2A_DATA_PART_METADATA_TYPE_CODE_EXECUTION_RESULT, CodeExecutionResult),
    ("executable_code", A2A_DATA_PART_METADATA_TYPE_EXECUTABLE_CODE, ExecutableCode),
)

A2APartToGenAIPartConverter = Callable[[Part], "OurPart | list[OurPart] | None"]
GenAIPartToA2APartConverter = Callable[[Any], "Part | list[Part] | None"]


def part_metadata(part: Part) -> dict[str, Any]:
    """An A2A part's metadata as a dict ({} when it has none)."""
    return MessageToDict(part.metadata) if part.HasField("metadata") else {}


def set_part_metadata(part: Part, metadata: dict[str, Any]) -> None:
    """Replace an A2A part's metadata with ``metadata`` (nothing when it is empty)."""
    if metadata:
        part.metadata.CopyFrom(ParseDict(metadata, Struct()))


def ours_and_metadata(part: Any) -> tuple[OurPart, dict[str, Any]]:
    """Our part for ``part`` (ours, or a google.genai ``Part``: its fields validated as
    ours) and the google.genai part's ``part_metadata`` ({} for ours). A TypeError
    when ``part`` is not a part; a ValueError naming the fields ours has no place for
    (google.genai's ``tool_call``, ``video_metadata``, ...)."""
    if isinstance(part, OurPart):
        return part, {}
    if not isinstance(part, BaseModel) or not hasattr(part, "inline_data"):
        raise TypeError(f"expected an adk_actors or google.genai Part, got {type(part).__name__}")
    fields = part.model_dump(exclude_none=True)
    metadata = dict(fields.pop("part_metadata", None) or {})
    unknown = sorted(set(fields) - set(OurPart.model_fields))
    if unknown:
        raise ValueError(f"this part's {', '.join(unknown)} cannot be converted here (no such field on our Part)")
    return OurPart.model_validate(fields), metadata


def convert_genai_part_to_a2a_part(part: Any) -> Part | None:
    """The A2A part for one of our parts (or a google.genai one); see the module.
    None, logged, for a part with nothing to convert."""
    ours, metadata = ours_and_metadata(part)
    if ours.text is not None:
        found = Part(text=ours.text)
        meta: dict[str, Any] = {} if ours.thought is None else {_get_adk_metadata_key("thought"): ours.thought}
        set_part_metadata(found, {**meta, **metadata})
        return found
    if ours.file_data is not None:
        found = Part(url=ours.file_data.file_uri or "", media_type=ours.file_data.mime_type or "",
                     filename=ours.file_data.display_name or "")
        set_part_metadata(found, metadata)
        return found
    if ours.inline_data is not None:
        raw = ours.inline_data.data
        if (ours.inline_data.mime_type == A2A_DATA_PART_TEXT_MIME_TYPE and raw.startswith(A2A_DATA_PART_START_TAG)
                and raw.endswith(A2A_DATA_PART_END_TAG)):
            found = Part()
            ParseDict(json.loads(raw[len(A2A_DATA_PART_START_TAG):-len(A2A_DATA_PART_END_TAG)]), found.data)
            set_part_metadata(found, metadata)
            return found
        found = raw_part(ours.inline_data)  # the rule our server and RemoteA2aAgent send bytes by
        set_part_metadata(found, metadata)
        return found
    for field, kind, _ in _DATA_FIELDS:
        value = getattr(ours, field)
        if value is not None:
            found = tagged_part(value, kind)  # as our server and RemoteA2aAgent send a call or response
            extra = dict(metadata)
            if ours.thought_signature is not None:
                extra[_get_adk_metadata_key("thought_signature")] = base64.b64encode(ours.thought_signature).decode()
            found.metadata.update(extra)
            return found
    logger.warning("a part with nothing A2A can carry was left out: %r", ours)
    return None


def convert_a2a_part_to_genai_part(a2a_part: Part) -> OurPart | None:
    """Our part for an A2A part; see the module. None, logged, for a part with no
    content, or a data part tagged with a type ours does not have."""
    if not isinstance(a2a_part, Part):
        raise TypeError(f"expected an a2a.types.Part, got {type(a2a_part).__name__}")
    kind = a2a_part.WhichOneof("content")
    meta = part_metadata(a2a_part)
    if kind == "text":
        return OurPart(text=a2a_part.text, thought=meta.get(_get_adk_metadata_key("thought")))
    if kind == "url":
        return OurPart(file_data=FileData(file_uri=a2a_part.url, mime_type=a2a_part.media_type or None,
                                          display_name=a2a_part.filename or None))
    if kind == "raw":  # the rule our server and RemoteA2aAgent take bytes by
        return OurPart(inline_data=blob_of(a2a_part))
    if kind == "data":
        return _of_data(a2a_part, meta)
    logger.warning("an A2A part with no content was left out: %r", a2a_part)
    return None


def _of_data(a2a_part: Part, meta: dict[str, Any]) -> OurPart | None:
    """A data part: the call, response or code its ``adk_type`` names, else its JSON
    wrapped in tags as ``text/plain`` bytes."""
    value = MessageToDict(a2a_part.data)
    tag = meta.get(_get_adk_metadata_key(A2A_DATA_PART_METADATA_TYPE_KEY))
    for field, kind, model in _DATA_FIELDS:
        if tag == kind:
            return OurPart.model_validate({field: model.model_validate(value),
                                           "thought_signature": _signature(meta)})
    if tag in ("tool_call", "tool_response"):
        logger.warning("an A2A %s part was left out: our parts have no %s", tag, tag)
        return None
    payload = json.dumps(value).encode()
    return OurPart(inline_data=Blob(mime_type=A2A_DATA_PART_TEXT_MIME_TYPE,
                                    data=A2A_DATA_PART_START_TAG + payload + A2A_DATA_PART_END_TAG))


def _signature(meta: dict[str, Any]) -> bytes | None:
    """The thought signature in ``adk_thought_signature`` (base64), if any."""
    value = meta.get(_get_adk_metadata_key("thought_signature"))
    if isinstance(value, str):
        try:
            return base64.b64decode(value)
        except (binascii.Error, ValueError):
            logger.warning("a thought signature that is not base64 was left out")
    return None
