"""An LlmAgent of ``mode="task"`` as a workflow node (google-adk 2.x's task mode): the
``finish_task`` tool it is given, and how its call becomes the node's output.

A task agent talks with the user over as many turns as it needs; it ends its task by
calling ``finish_task`` with its result. :class:`FinishTaskTool` declares that call:
its parameters are the agent's ``output_schema`` (a pydantic model or any type a
pydantic ``TypeAdapter`` takes; without one, an object with one string ``result``),
wrapped in an object under ``result`` when the schema is not an object's (the
schema's ``$defs`` then at the top), declared as google-adk 2.13 declares it: a plain
JSON schema, pydantic's as made (titles and defaults kept), under
``parameters_json_schema``. Before
each model call it adds a line to the system instruction saying when to call it. Run,
it checks the arguments against the schema: valid, its response is ``Task
completed.``; not valid, an ``{"error": ...}`` naming what was wrong (the model is
asked again and may call it once more). :func:`task_output` is what the node gives
as its output: the value under the wrapper key, or the arguments as they were given.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from .._types import Event, FunctionDeclaration
from ..tools._base import ToolContext
from ..tools._classes import BaseTool
from ._errors import WorkflowConfigurationError

__all__ = ["FINISH_TASK", "FINISH_TASK_DONE", "FinishTaskTool", "finish_call_args", "finished", "task_output"]

#: The tool's name (google-adk's).
FINISH_TASK = "finish_task"
#: Its response when the arguments were valid (google-adk's, which the model reads).
FINISH_TASK_DONE = "Task completed."
#: The key a schema that is not an object's is wrapped under.
_WRAPPER = "result"

_INSTRUCTION = (
    "Call `finish_task` only once the task you were given is done in full: use your tools for every "
    "part of it first, and ask the user whenever the task is not clear. When it is done, call "
    "`finish_task` alone, with no text beside it.")


class _TaskResult(BaseModel):
    """What a task agent hands back when no output schema says otherwise."""

    model_config = ConfigDict(extra="forbid")

    result: str


class FinishTaskTool(BaseTool):
    """The ``finish_task`` tool of one task agent (see the module)."""

    idempotent = True  # it changes nothing: a resumed run may simply run it again

    def __init__(self, output_schema: Any = None, agent_name: str = "") -> None:
        """Raise :class:`WorkflowConfigurationError` naming ``agent_name`` when
        ``output_schema`` is not a type pydantic can check values with."""
        description = ("Report that the task you were given is done. Call it once you have finished "
                       "that task.")
        if output_schema is not None:
            description += " Give its result in the parameters."
        super().__init__(name=FINISH_TASK, description=description)
        schema = output_schema if output_schema is not None else _TaskResult
        try:
            self._adapter: TypeAdapter[Any] = TypeAdapter(schema)
            self._schema: dict[str, Any] = self._adapter.json_schema()
        except Exception as exc:
            raise WorkflowConfigurationError(
                f"task agent {agent_name!r}: its output_schema {output_schema!r} is not a type pydantic can check "
                f"finish_task's arguments with ({exc})") from None
        self.wrapper: str | None = None if self._schema.get("type") == "object" else _WRAPPER

    def _get_declaration(self) -> FunctionDeclaration:
        schema = dict(self._schema)
        if self.wrapper is not None:
            defs = schema.pop("$defs", None)
            schema = {"type": "object", "properties": {self.wrapper: schema}, "required": [self.wrapper],
                      **({"$defs": defs} if defs else {})}
        return FunctionDeclaration(name=self.name, description=self.description, parameters_json_schema=schema)

    async def process_llm_request(self, *, tool_context: ToolContext, llm_request: Any) -> None:
        llm_request.append_instructions([_INSTRUCTION])

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        value = args.get(self.wrapper) if self.wrapper is not None else args
        try:
            self._adapter.validate_python(value)
        except ValidationError as error:
            return {"error": f"`{self.name}` was called with arguments that do not fit its parameters:\n{error}\n"
                             f"Call it again with every required parameter, each of the right type."}
        return FINISH_TASK_DONE


def finish_call_args(event: Event) -> dict[str, Any] | None:
    """The arguments of ``event``'s ``finish_task`` call, if it has one (else None)."""
    for call in event.get_function_calls():
        if call.name == FINISH_TASK:
            return dict(call.args or {})
    return None


def finished(event: Event) -> bool:
    """Is ``event`` ``finish_task``'s response to valid arguments (the task's end)?"""
    return any(r.name == FINISH_TASK and (r.response or {}).get("result") == FINISH_TASK_DONE
               for r in event.get_function_responses())


def task_output(tool: FinishTaskTool, args: dict[str, Any]) -> Any:
    """The node's output for ``finish_task``'s valid ``args``: the wrapped value, or
    the arguments as given."""
    if tool.wrapper is not None and tool.wrapper in args:
        return args[tool.wrapper]
    return args
