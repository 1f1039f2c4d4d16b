"""The ``set_model_response`` tool: how an agent with both an ``output_schema`` and
tools gives its structured answer (google-adk's ``SetModelResponseTool``).

The compiler declares the tool as google-adk does (``response_tool_parameters``: the
fields of the output schema's class, or one ``response`` object for a JSON-schema dict;
a live conversation does not declare it); the flow runs
a call of it like any other tool (before/after-tool hooks included), and when the tool
accepted the arguments it makes the answer's own event from
``actions.set_model_response`` (see ``adk_actors.engine._flow``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from .._schema import list_item_model
from .._types import FunctionDeclaration
from ..compiler._tools import (
    SET_MODEL_RESPONSE,
    SET_MODEL_RESPONSE_WORDS,
    response_tool_declaration,
)
from ._base import ToolContext
from ._classes import BaseTool

__all__ = ["SetModelResponseTool"]


class SetModelResponseTool(BaseTool):
    """Checks the model's arguments against ``output_schema`` and keeps them as the
    structured answer.

    In order: with a pydantic model class, the arguments are validated by it and the
    answer is its dump without None fields; with a JSON-schema dict, the answer is the
    ``response`` argument as given (the compiler declares that one parameter, as
    google-adk does; None when the model left it out). The
    answer is put in ``tool_context.actions.set_model_response`` and returned as the
    call's response. Arguments the model class refuses are no answer: the response is
    an ``{"error": ...}`` naming what was wrong and asking for the call again, and
    nothing is kept (the model is asked once more, as in google-adk).

    It changes nothing outside the call, so a resumed run may simply run it again
    (``idempotent``)."""

    idempotent = True

    def __init__(self, output_schema: Any) -> None:
        super().__init__(name=SET_MODEL_RESPONSE, description=SET_MODEL_RESPONSE_WORDS)
        self.output_schema = output_schema

    def _get_declaration(self) -> FunctionDeclaration:
        """What the compiler declares for this output schema (``response_tool_declaration``)."""
        return response_tool_declaration(self.output_schema)

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        schema = self.output_schema
        answer: Any
        try:
            if isinstance(schema, type) and issubclass(schema, BaseModel):
                answer = schema.model_validate(args).model_dump(mode="json", exclude_none=True)
            elif list_item_model(schema) is not None:
                items = TypeAdapter(schema).validate_python(args.get("items", []))
                answer = [item.model_dump(mode="json", exclude_none=True) for item in items]
            else:
                answer = args.get("response")
        except ValidationError as error:
            return {"error": f"The arguments of {SET_MODEL_RESPONSE} do not match the output schema:\n{error}\n"
                             f"Call {SET_MODEL_RESPONSE} again with every required field, of the right type."}
        tool_context.actions.set_model_response = answer
        return answer
