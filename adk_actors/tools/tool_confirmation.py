"""google-adk's ``ToolConfirmation``: a human's answer to a tool call that asked to be
confirmed (``tool_context.request_confirmation``, or a tool made with
``require_confirmation``), carried by the ``adk_request_confirmation`` call the run
emits and by the user's function response to it."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, alias_generators

__all__ = ["REQUEST_CONFIRMATION_FUNCTION_CALL_NAME", "ToolConfirmation"]

#: the name of the function call that asks the client for a confirmation (google-adk's)
REQUEST_CONFIRMATION_FUNCTION_CALL_NAME = "adk_request_confirmation"


class ToolConfirmation(BaseModel):
    """A confirmation asked for (``hint``, ``payload``) or given (``confirmed``, and the
    user's ``payload``). Fields are camelCase on the wire, snake_case in Python; an
    unknown field is a ``ValidationError``."""

    model_config = ConfigDict(extra="forbid", alias_generator=alias_generators.to_camel, populate_by_name=True)

    hint: str = ""
    confirmed: bool = False
    payload: Any | None = None

    @classmethod
    def from_response_dict(cls, response: dict[str, Any]) -> ToolConfirmation:
        """The confirmation a function response carries: either the fields themselves, or
        (what adk-web sends) one ``response`` key holding them as a JSON string. A
        malformed one raises ``ValidationError`` (or ``json.JSONDecodeError``)."""
        if response and len(response) == 1 and "response" in response:
            return cls.model_validate(json.loads(response["response"]))
        return cls.model_validate(response)
