"""What the steps of an LlmAgent's flow share: the outcome each step ends with, which
the flow's loop (``_flow._loop``) matches on, the attributes of a step's spans, and
the value an answer leaves under the agent's ``output_key``.

A step is a small object: the loop relays the events of its ``events()`` (each is
committed by the caller as it is yielded), then reads its ``outcome``:

* :class:`StepOutcome` ``NEXT``: the loop goes on with its next step;
* ``END``: the agent's flow ends here;
* ``LIVE`` (a replayed step only): nothing of this step's model call is on record,
  so the model step runs now;
* :class:`ToolCalls` (the model step only): the model's answer called tools; the
  tool step runs them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from typing import Any

from .._schema import model_class, validate_output
from .._types import FunctionCall
from ._context import InvocationContext

__all__ = ["StepOutcome", "ToolCalls", "output_value", "span_meta"]


class StepOutcome(Enum):
    """How a step of the flow ended, when it called no tool."""

    NEXT = "next"  #: the loop goes on: the next step
    END = "end"  #: the agent's flow ends
    LIVE = "live"  #: replay only: the model step runs now


@dataclass(frozen=True)
class ToolCalls:
    """The model's answer called tools: its ``calls`` (with ids), and the step's
    ``tools`` by name."""

    calls: tuple[FunctionCall, ...]
    tools: dict[str, Any]


def span_meta(agent: Any, ctx: InvocationContext, **extra: Any) -> dict[str, Any]:
    """The attributes of a model or tool span: the agent, the invocation, the branch,
    the session's address, then ``extra``."""
    session = ctx.session
    return {"agent": agent.name, "invocation_id": ctx.invocation_id, "branch": ctx.branch,
            "app": session.app_name, "user": session.user_id, "session": session.session_id, **extra}


def output_value(agent: Any, text: str) -> Any:
    """What an answer's ``text`` leaves under the agent's ``output_key``: the text, or
    with an ``output_schema`` the JSON it holds (the text when it holds none); for a
    typing type (``list[Model]``, ``list[str]``, ...) that JSON validated by pydantic, a
    list of models stored as a list of dicts (:func:`validate_output`), the plain JSON
    when it does not validate."""
    schema = agent.output_schema
    if schema is None:
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(schema, dict) or model_class(schema) is not None:
        return value
    try:
        return validate_output(schema, value)
    except ValueError:
        return value


#: The start of google-adk's runner's refusal of a message answering no call of the
#: session (raised before its node runs, so with no error event: ``_node_run``)
UNMATCHED_ANSWER = "Function call not found for function response ids:"


def unmatched_answer(ids: Any) -> ValueError:
    """google-adk's refusal (a ``ValueError``, its words) of answers ``ids`` to no call."""
    return ValueError(f"{UNMATCHED_ANSWER} {ids}. Ensure each function response ID matches an existing "
                      "function call in the session history.")
