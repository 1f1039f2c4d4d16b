"""The questions a session still waits for: what a client (the CLI, the REPL, the
console) shows and lets a human answer.

:func:`waiting_inputs` reads a session's events in order: each question call (a
request for input, ``adk_request_input``, or for a credential,
``adk_request_credential``: ``_input.QUESTIONS``) that an event names in its
``long_running_tool_ids`` is a request asked; a user's function response with its id
answers the newest request of that id still open, by the workflow's own rule (an
answer the graph refuses, by its ``response_schema`` or as a credential, answers
nothing). What is left is waiting, oldest first. A credential request is a graph
node's only (its id ``wf_auth:<node path>``; a tool's is its agent's to answer); it
shows its ``message`` and, as its payload, its ``authConfig``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .._types import Event, FunctionCall
from ._errors import WorkflowDataError
from ._input import QUESTIONS, REQUEST_CREDENTIAL_FUNCTION_CALL_NAME, _answer
from ._node_auth import AUTH_INTERRUPT_PREFIX

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
    """The questions of ``events`` (a session's, in order) still open (see the
    module)."""
    open_asks: dict[str, list[WaitingInput]] = {}
    order: list[WaitingInput] = []
    calls: dict[int, FunctionCall] = {}  # an ask (by its object's id) -> its call
    for event in events:
        if event.content is None:
            continue
        if event.author == "user":
            for response in event.content.function_responses:
                pending = open_asks.get(response.id or "")
                if not pending:
                    continue
                try:
                    _answer(response.response, calls.get(id(pending[-1])), response.id or "")
                except WorkflowDataError:
                    continue  # refused: the request is still open
                order.remove(pending.pop())
            continue
        long_running = set(event.long_running_tool_ids or ())
        for call in event.content.function_calls:
            if call.name not in QUESTIONS or not call.id or call.id not in long_running:
                continue
            credential = call.name == REQUEST_CREDENTIAL_FUNCTION_CALL_NAME
            if credential and not call.id.startswith(AUTH_INTERRUPT_PREFIX):
                continue  # a tool's credential request: its agent's flow answers it, not the graph
            args = call.args or {}
            schema = args.get("response_schema")
            ask = WaitingInput(interrupt_id=call.id, message=args.get("message"),
                               payload=args.get("authConfig") if credential else args.get("payload"),
                               response_schema=schema if isinstance(schema, dict) else None,
                               path=event.node_info.path if event.node_info is not None else None,
                               author=event.author, event_id=event.id, invocation_id=event.invocation_id)
            calls[id(ask)] = call
            open_asks.setdefault(call.id, []).append(ask)
            order.append(ask)
    return order
