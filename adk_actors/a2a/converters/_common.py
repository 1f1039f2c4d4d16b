"""What the event converters share: the ``custom_metadata`` keys only ADK code
writes (``__adk_internal_...``, never sent to nor taken from a peer), an agent's
A2A message and status, the parts of a content through a part converter, and the
long-running mark of a function call's data part."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from a2a.types import Message, Part, Role, TaskStatus, TaskStatusUpdateEvent
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.struct_pb2 import Struct

from .part_converter import (
    A2A_DATA_PART_METADATA_IS_LONG_RUNNING_KEY,
    A2A_DATA_PART_METADATA_TYPE_FUNCTION_CALL,
    A2A_DATA_PART_METADATA_TYPE_KEY,
    part_metadata,
    set_part_metadata,
)
from .utils import _get_adk_metadata_key

INTERNAL_PREFIX = "__adk_internal_"
TYPE_KEY = _get_adk_metadata_key(A2A_DATA_PART_METADATA_TYPE_KEY)
LONG_RUNNING_KEY = _get_adk_metadata_key(A2A_DATA_PART_METADATA_IS_LONG_RUNNING_KEY)
#: google-adk's name of the call asking the user for a credential
REQUEST_CREDENTIAL = "adk_request_credential"


def without_internal(metadata: Any) -> Any:
    """``metadata`` without its internal keys (anything not a mapping as it is)."""
    if not isinstance(metadata, Mapping):
        return metadata
    return {k: v for k, v in metadata.items() if not (isinstance(k, str) and k.startswith(INTERNAL_PREFIX))}


def public(metadata: Any) -> Any:
    """As :func:`without_internal`, None when nothing is left of a mapping."""
    kept = without_internal(metadata)
    return (kept or None) if isinstance(metadata, Mapping) else kept


def as_dict(metadata: Any) -> dict[str, Any]:
    """An A2A object's metadata (a protobuf Struct, or a dict) as a dict ({} for none)."""
    if metadata is None:
        return {}
    if hasattr(metadata, "DESCRIPTOR"):
        return dict(MessageToDict(metadata))
    return dict(metadata) if isinstance(metadata, dict) else {}


def set_metadata(target: Any, metadata: dict[str, Any]) -> None:
    """Replace ``target.metadata`` (a Struct) with ``metadata``; nothing when it is empty."""
    if metadata:
        target.metadata.CopyFrom(ParseDict(dict(metadata), Struct()))


def message_or_none(message: Message | None) -> Message | None:
    """A status's message, None when it is the empty one protobuf gives (no id)."""
    return message if message is not None and message.message_id else None


def status(state: int, message: Message | None = None) -> TaskStatus:
    """A task status of ``state`` stamped now, with ``message`` if given."""
    found = TaskStatus(state=state)  # type: ignore[arg-type]
    found.timestamp.FromDatetime(datetime.now(UTC))
    if message is not None:
        found.message.CopyFrom(message)
    return found


def status_update(task_id: str | None, context_id: str | None, state: int, message: Message | None = None,
                  metadata: dict[str, Any] | None = None) -> TaskStatusUpdateEvent:
    """A status update of the task, its metadata set when given (even empty)."""
    fields: dict[str, Any] = {"task_id": task_id, "context_id": context_id, "status": status(state, message)}
    if metadata is not None:
        fields["metadata"] = metadata
    return TaskStatusUpdateEvent(**fields)


def agent_text(text: str, metadata: dict[str, Any] | None = None) -> Message:
    """An agent's message of one text part, with a fresh id."""
    return Message(message_id=str(uuid.uuid4()), role=Role.ROLE_AGENT, parts=[Part(text=text)], metadata=metadata)


def converted(parts: Iterable[Any], converter: Callable[[Any], Any]) -> list[Any]:
    """Each part through ``converter`` (which gives one, a list, or None), flattened."""
    found: list[Any] = []
    for part in parts:
        got = converter(part)
        found.extend(got if isinstance(got, list) else [got] if got else [])
    return found


def is_call(part: Part) -> bool:
    """Whether an A2A part is a function call's data part."""
    return part.WhichOneof("content") == "data" and part_metadata(part).get(TYPE_KEY) == (
        A2A_DATA_PART_METADATA_TYPE_FUNCTION_CALL)


def mark_long_running(part: Part) -> None:
    """Mark a function call's data part long-running (``adk_is_long_running``)."""
    set_part_metadata(part, {**part_metadata(part), LONG_RUNNING_KEY: True})


def is_long_running_call(part: Part) -> bool:
    return is_call(part) and part_metadata(part).get(LONG_RUNNING_KEY) is True


def call_name(part: Part) -> Any:
    """The name in a function call's data part."""
    data = MessageToDict(part.data)
    return data.get("name") if isinstance(data, dict) else None


