"""google-adk's ``request_input`` tool (``google.adk.tools.request_input``): the model
asks the user a question and the turn waits for the answer.

A :class:`LongRunningFunctionTool` of a function named ``adk_request_input`` (the name
google-adk's workflows and clients know a question by) with ``message`` (the question,
a string) and an optional ``response_schema`` (a JSON schema of the answer expected).
A call logs the question and returns None: as for any long-running tool, the call's
event lists it in ``long_running_tool_ids`` and the turn ends; the user answers with a
function response named ``adk_request_input`` carrying the call's id, and the model
is asked again with that answer.
"""

from __future__ import annotations

import logging
from typing import Any

from ._function import LongRunningFunctionTool

__all__ = ["REQUEST_INPUT_FUNCTION_CALL_NAME", "request_input"]

_log = logging.getLogger("adk_actors.tools.request_input")

REQUEST_INPUT_FUNCTION_CALL_NAME = "adk_request_input"


def _ask_the_user(message: str, response_schema: dict[str, Any] | None = None) -> None:
    """Put a question to the user and wait for the answer.

    Call it when something must be clarified, or more information is needed, before
    going on.

    Args:
      message: The question to show the user.
      response_schema: A JSON schema of the answer expected: {"type": "string"} for
        free text, {"type": "boolean"} for yes or no, or an object schema for a
        structured answer.

    Returns:
      None: the call waits for the user's answer.
    """
    _log.info("request_input asks: %s", message)


_ask_the_user.__name__ = REQUEST_INPUT_FUNCTION_CALL_NAME

request_input = LongRunningFunctionTool(_ask_the_user)
