"""google-adk's transfer tool, at its import path: ``transfer_to_agent`` and
``TransferToAgentTool``.

The engine answers a model's ``transfer_to_agent`` call by its name (``_flow_tools``:
an unknown target is an error result naming the targets there are); this tool object
is what a step's ``LlmRequest.tools_dict`` holds under that name when the agent can
transfer, as google-adk's does, so that a ``before_model_callback`` or a plugin finds
it there beside the agent's own tools. Its declaration is the compiler's (the seeds'
wording), its ``agent_name`` limited to the agents it was made with.
"""

from __future__ import annotations

from functools import lru_cache

from .._types import FunctionDeclaration, LlmRequest
from ..compiler._tools import TRANSFER_TO_AGENT, transfer_declaration
from ._base import ToolContext
from ._function import FunctionTool

__all__ = ["TransferToAgentTool", "add_transfer_tool", "transfer_to_agent", "transfer_tool"]


def transfer_to_agent(agent_name: str, tool_context: ToolContext, *, transfer_reason: str = "") -> None:
    """Hand the conversation to another agent (``agent_name``) better suited to answer it.

    Records the transfer on the call's actions (``actions.transfer_to_agent``), as
    google-adk's does; ``transfer_reason`` is taken and not kept (our events carry no
    reason)."""
    tool_context.actions.transfer_to_agent = agent_name


class TransferToAgentTool(FunctionTool):
    """``transfer_to_agent`` as a tool whose declaration limits ``agent_name`` to
    ``agent_names`` (google-adk's; ``include_transfer_reason`` is taken and ignored: the
    declaration never offers a reason)."""

    def __init__(self, agent_names: list[str], include_transfer_reason: bool = False) -> None:
        super().__init__(transfer_to_agent)
        self._agent_names = list(agent_names)
        self._include_transfer_reason = include_transfer_reason
        self._declaration = transfer_declaration(self._agent_names)
        self.description = self._declaration.description

    def _get_declaration(self) -> FunctionDeclaration | None:
        """The compiler's declaration (a copy: a caller may change it)."""
        return self._declaration.model_copy(deep=True)


@lru_cache(maxsize=256)
def transfer_tool(agent_names: tuple[str, ...]) -> TransferToAgentTool:
    """The transfer tool for ``agent_names``, made once per set of names (a step's
    request shares it: ``tools_dict`` never copies its tools)."""
    return TransferToAgentTool(list(agent_names))


def add_transfer_tool(request: LlmRequest) -> None:
    """When ``request`` declares ``transfer_to_agent`` and its ``tools_dict`` has no tool
    of that name: the transfer tool for the agents the declaration offers put there."""
    declared = next((d for d in request.tools if d.name == TRANSFER_TO_AGENT), None)
    if declared is None or TRANSFER_TO_AGENT in request.tools_dict:
        return
    names = ((declared.parameters_schema or {}).get("properties") or {}).get("agent_name", {}).get("enum") or ()
    request.tools_dict[TRANSFER_TO_AGENT] = transfer_tool(tuple(names))
