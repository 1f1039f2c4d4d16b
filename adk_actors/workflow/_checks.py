"""The checks a graph run makes of the data that enters and leaves its nodes and
itself, as google-adk 2.13's graph makes them (see ``_run``), and the error event a
failed node run or a failed graph run makes.

* :func:`checked_input`: a node's input as the node takes it, checked before the node
  starts: a function node's (a join's) by its own check, a workflow's or an agent's
  against its ``input_schema`` (see ``_node_data``; none: as it is); no input (None)
  as it is. Refused, it raises pydantic's ValidationError titled ``dynamic node
  '<name>'``, with the errors of the check.
* :func:`checked_output`: a workflow's output (its terminal node's) checked against its
  ``output_schema``; refused, pydantic's ValidationError as the check raised it.
* :func:`error_event`: the event of an error: ``error_code`` the exception's class
  name, ``error_message`` its text, with the state given.
* :data:`INPUT_REFUSED`: the mark (an attribute set True) of the error of a root
  workflow whose own ``input_schema`` refused the run's input: google-adk checks that
  input before its node runner starts, so the run fails with no event at all (the
  engine makes no error event for it, see ``engine/_node_run``).
"""

from __future__ import annotations

from typing import Any, cast

from pydantic import ValidationError
from pydantic_core import InitErrorDetails

from .._types import Event
from ._node_data import validate_node_data
from ._nodes import BaseNode, node_event

__all__ = ["INPUT_REFUSED", "checked_input", "checked_output", "error_event"]

INPUT_REFUSED = "_adk_actors_input_refused"


def checked_input(node: Any, data: Any) -> Any:
    """``data`` as ``node`` takes it (see the module), in order: None as it is; a
    BaseNode's check (``_validate_input_data``); a workflow's or an agent's
    ``input_schema`` (none: as it is). A refusal is raised as pydantic's
    ValidationError titled ``dynamic node '<node name>'``, the check's own error its
    cause."""
    if data is None:
        return data
    try:
        if isinstance(node, BaseNode):
            return node._validate_input_data(data)
        return validate_node_data(getattr(node, "input_schema", None), data)
    except ValidationError as exc:
        raise ValidationError.from_exception_data(
            title=f"dynamic node '{node.name}'",
            line_errors=cast(list[InitErrorDetails], exc.errors())) from exc


def checked_output(workflow: Any, data: Any) -> Any:
    """A workflow's output checked and coerced against its ``output_schema`` (see
    ``_node_data``); refused: pydantic's ValidationError."""
    return validate_node_data(getattr(workflow, "output_schema", None), data)


def error_event(error: BaseException, state: dict[str, Any] | None = None) -> Event:
    """The error event of ``error`` (author, path and invocation filled in when it is
    committed): its class name and text, with ``state`` as its state delta."""
    return node_event(state=state).model_copy(update={
        "error_code": type(error).__name__, "error_message": str(error)})
