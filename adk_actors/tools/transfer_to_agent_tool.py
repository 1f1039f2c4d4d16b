"""google-adk's transfer tool, at its import path: ``transfer_to_agent`` and
``TransferToAgentTool``.

The engine answers a model's ``transfer_to_agent`` call by its name (``_flow_tools``:
an unknown target is an error result naming the targets there are); this tool object
is what a step's ``LlmRequest.tools_dict`` holds under that name when the agent can
transfer, as google-adk's does, so that a ``before_model_callback`` or a plugin finds
it there beside the agent's own tools.

Its declaration is google-adk 2.13's shape: a plain JSON schema under
``parameters_json_schema`` (pydantic's schema of :func:`transfer_to_agent`'s
parameters, titles included: ``transfer_to_agentParams``, ``Agent Name``), its
``agent_name`` limited to the agents it was made with, ``transfer_reason`` left out;
the description is the compiler's (the seeds' wording, not google-adk's docstring).
:func:`add_transfer_tool` puts that declaration in a step's request in place of the
compiler's, first among its declarations, where google-adk's request has it.
"""

from __future__ import annotations

import copy
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
    ``agent_names`` (google-adk's). ``include_transfer_reason`` keeps the optional
    ``transfer_reason`` string in the declaration (google-adk's flow never asks for it;
    the reason is taken and not kept)."""

    def __init__(self, agent_names: list[str], include_transfer_reason: bool = False) -> None:
        """The function's own declaration (``parameters_json_schema``, see the module),
        then: its description the compiler's; ``enum`` of the agent names on
        ``agent_name``; ``transfer_reason`` dropped unless ``include_transfer_reason``."""
        super().__init__(transfer_to_agent)
        self._agent_names = list(agent_names)
        self._include_transfer_reason = include_transfer_reason
        schema = copy.deepcopy(self._declaration.parameters_json_schema) if self._declaration else {}
        properties = schema.setdefault("properties", {})
        properties.setdefault("agent_name", {"type": "string"})["enum"] = list(self._agent_names)
        if not include_transfer_reason:
            properties.pop("transfer_reason", None)
        self.description = transfer_declaration(self._agent_names).description
        self._declaration = FunctionDeclaration(name=TRANSFER_TO_AGENT, description=self.description,
                                                parameters_json_schema=schema)

    def _get_declaration(self) -> FunctionDeclaration | None:
        """Its declaration (a copy: a caller may change it)."""
        return self._declaration.model_copy(deep=True) if self._declaration is not None else None


@lru_cache(maxsize=256)
def transfer_tool(agent_names: tuple[str, ...]) -> TransferToAgentTool:
    """The transfer tool for ``agent_names``, made once per set of names (a step's
    request shares it: ``tools_dict`` never copies its tools)."""
    return TransferToAgentTool(list(agent_names))


def add_transfer_tool(request: LlmRequest) -> None:
    """When ``request`` declares ``transfer_to_agent`` (the compiler's declaration) and
    its ``tools_dict`` has no tool of that name, in order: the transfer tool for the
    agents the declaration offers is put there; the compiler's declaration is taken out
    of ``request.tools`` and a copy of the tool's own (google-adk's shape, see the
    module) put first in its place. A request that declares no transfer, or whose map
    already has such a tool (a caller's own), is left as it is."""
    declared = next((d for d in request.tools if d.name == TRANSFER_TO_AGENT), None)
    if declared is None or TRANSFER_TO_AGENT in request.tools_dict:
        return
    names = ((declared.parameters_schema or {}).get("properties") or {}).get("agent_name", {}).get("enum") or ()
    tool = request.tools_dict[TRANSFER_TO_AGENT] = transfer_tool(tuple(names))
    own = tool._get_declaration()
    if own is not None:
        request.tools = [own, *(d for d in request.tools if d is not declared)]
