"""google-adk's ``a2a.logs.log_utils``: A2A messages, tasks and parts as readable,
multi-line log text (for a debug log of what a remote A2A agent was sent and gave).

* :func:`build_message_part_log`: one part: a text part's first 100 characters
  (``...`` when longer), a data part's fields (a list or object longer than 100
  characters as ``<list>`` / ``<dict>``), a file part's fields without its bytes;
  then its metadata, if any;
* :func:`build_a2a_request_log`: a message sent: its id, role, task and context ids,
  metadata, and each part;
* :func:`build_a2a_response_log`: what came back, a message or a client event
  (``(Task, update)``): the task's or message's fields, its status message and its
  history, each part as above; any other object as its JSON when it has one.

The text is ours (google-adk's layout is not copied); it is for people to read,
not to parse.
"""

from __future__ import annotations

import json
from typing import Any

from a2a.types import Message, Part, Role, Task, TaskState
from google.protobuf.json_format import MessageToDict

from ..converters._common import as_dict, message_or_none
from ..converters.part_converter import part_metadata

__all__ = ["build_a2a_request_log", "build_a2a_response_log", "build_message_part_log"]

_RULE = "-" * 60
_SHOWN = 100


def _indented(text: str, by: str) -> str:
    return text.replace("\n", "\n" + by)


def build_message_part_log(part: Part) -> str:
    """One part as log text (see the module)."""
    kind = part.WhichOneof("content")
    if kind == "text":
        found = f"text: {part.text[:_SHOWN]}" + ("..." if len(part.text) > _SHOWN else "")
    elif kind == "data":
        value = MessageToDict(part.data)
        fields = value if isinstance(value, dict) else {"value": value}
        brief = {k: f"<{type(v).__name__}>" if isinstance(v, (dict, list)) and len(str(v)) > _SHOWN else v
                 for k, v in fields.items()}
        found = "data: " + json.dumps(brief, indent=2)
    else:
        fields = MessageToDict(part)
        fields.pop("raw", None)
        fields.pop("metadata", None)
        found = f"{kind or 'empty'} part: {json.dumps(fields)}"
    meta = part_metadata(part)
    if meta:
        found += "\n  metadata: " + _indented(json.dumps(meta, indent=2), "  ")
    return found


def _parts(parts: Any, by: str) -> list[str]:
    return [f"{by}part {i}: " + _indented(build_message_part_log(p), by + "  ") for i, p in enumerate(parts)] or [
        f"{by}(no parts)"]


def _message_lines(message: Message, by: str = "") -> list[str]:
    lines = [f"{by}message id: {message.message_id}", f"{by}role: {Role.Name(message.role)}",
             f"{by}task id: {message.task_id}", f"{by}context id: {message.context_id}"]
    metadata = as_dict(message.metadata)
    if metadata:
        lines.append(f"{by}metadata: " + _indented(json.dumps(metadata, indent=2), by))
    return lines + _parts(message.parts, by)


def build_a2a_request_log(req: Message) -> str:
    """A message sent to an A2A agent as log text (see the module)."""
    return "\n".join(["", "A2A request (send message)", _RULE, *_message_lines(req), _RULE, ""])


def build_a2a_response_log(resp: Any) -> str:
    """What an A2A agent gave (a message, or a ``(Task, update)`` client event) as log
    text (see the module)."""
    lines = ["", "A2A response", _RULE]
    task = resp[0] if isinstance(resp, tuple) and len(resp) == 2 and isinstance(resp[0], Task) else None
    if task is not None:
        lines += [f"type: client event (task {task.id})", f"context id: {task.context_id}",
                  f"state: {TaskState.Name(task.status.state)}",
                  f"status time: {task.status.timestamp.ToJsonString() if task.status.HasField('timestamp') else ''}",
                  f"history: {len(task.history)} message(s)", f"artifacts: {len(task.artifacts)}"]
        if as_dict(task.metadata):
            lines.append("task metadata: " + json.dumps(as_dict(task.metadata), indent=2))
        status = message_or_none(task.status.message)
        lines += [_RULE, "status message:", *(_message_lines(status, "  ") if status is not None else ["  (none)"])]
        lines += [_RULE, "history:"]
        for i, message in enumerate(task.history):
            lines += [f"  message {i + 1}:", *_message_lines(message, "    ")]
        if not task.history:
            lines.append("  (none)")
    elif isinstance(resp, Message):
        lines += ["type: message", *_message_lines(resp)]
    else:
        lines.append(f"type: {type(resp).__name__}")
        if hasattr(resp, "model_dump_json"):
            try:
                lines.append("json: " + resp.model_dump_json())
            except (TypeError, ValueError):
                lines.append("json: (not serializable)")
    return "\n".join([*lines, _RULE, ""])
