"""The requests for input a session still waits for: what a client (the CLI, the REPL,
the console) shows and lets a human answer.

:func:`waiting_inputs` reads a session's events in order: each ``adk_request_input``
call that an event names in its ``long_running_tool_ids`` is a request asked; a user's
function response with its id answers the newest request of that id still open, by
the workflow's own rule (an answer its ``response_schema`` refuses answers nothing, as
the graph refuses it). What is left is waiting, oldest first.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .._types import Event
from ._errors import WorkflowDataError
from ._input import REQUEST_INPUT_FUNCTION_CALL_NAME, _checked, _unwrap

__all__ = ["WaitingInput", "waiting_inputs"]


@dataclass(frozen=True)
class WaitingInput:
    """One request for input not answered yet: its ``interrupt_id`` (the id an answer's
    function response carries), ``message``, ``payload``, ``response_schema`` (a JSON
    schema, or None: any value), and where it was asked: ``path`` (the node's
    ``nodeInfo.path``), ``author``, ``event_id`` and ``invocation_id``."""

    interrupt_id: str
    message: str | None
    payload: Any
    response_schema: dict[str, Any] | None
    path: str | None
    author: str
    event_id: str
    invocation_id: str

    def to_dict(self) -> dict[str, Any]:
        """As JSON (camelCase, as the events name these fields)."""
        return {"interruptId": self.interrupt_id, "message": self.message, "payload": self.payload,
                "response_schema": self.response_schema, "path": self.path, "author": self.author,
                "eventId": self.event_id, "invocationId": self.invocation_id}


def waiting_inputs(events: Iterable[Event]) -> list[WaitingInput]:
    """The requests for input of ``events`` (a session's, in order) still open (see the
    module)."""
    open_asks: dict[str, list[WaitingInput]] = {}
    order: list[WaitingInput] = []
    for event in events:
        if event.content is None:
            continue
        if event.author == "user":
            for response in event.content.function_responses:
                pending = open_asks.get(response.id or "")
                if not pending:
                    continue
                try:
                    _checked(_unwrap(response.response), pending[-1].response_schema, response.id or "")
                except WorkflowDataError:
                    continue  # refused: the request is still open
                order.remove(pending.pop())
            continue
        long_running = set(event.long_running_tool_ids or ())
        for call in event.content.function_calls:
            if call.name != REQUEST_INPUT_FUNCTION_CALL_NAME or not call.id or call.id not in long_running:
                continue
            args = call.args or {}
            schema = args.get("response_schema")
            ask = WaitingInput(interrupt_id=call.id, message=args.get("message"), payload=args.get("payload"),
                               response_schema=schema if isinstance(schema, dict) else None,
                               path=event.node_info.path if event.node_info is not None else None,
                               author=event.author, event_id=event.id, invocation_id=event.invocation_id)
            open_asks.setdefault(call.id, []).append(ask)
            order.append(ask)
    return order
