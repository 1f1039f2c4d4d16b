"""google-adk's transfer tool, at its import path: ``transfer_to_agent`` and
``TransferToAgentTool``.

The engine answers a model's ``transfer_to_agent`` call by its name (``_flow_tools``:
an unknown target is an error result naming the targets there are); this tool object
is what a step's ``LlmRequest.tools_dict`` holds under that name when the agent can
transfer, as google-adk's does, so that a ``before_model_callback`` or a plugin finds
it there beside the agent's own tools.

Its declaration is the compiler's (``compiler._tools.transfer_declaration``: google-adk
2.13's shape, a plain JSON schema under ``parameters_json_schema`` with pydantic's
titles, ``agent_name`` limited to the agents it was made with, our short description),
so a request declares the same thing on every path (a step, a live conversation, any
other reader of the compiler) and the tool in ``tools_dict`` declares it too.
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
        """In order: the function tool of :func:`transfer_to_agent`; its declaration
        replaced by the compiler's for ``agent_names`` (see the module), its description
        the compiler's; with ``include_transfer_reason``, the function's own schema of
        ``transfer_reason`` (pydantic's: a string defaulting to ``""``) added to it."""
        super().__init__(transfer_to_agent)
        self._agent_names = list(agent_names)
        self._include_transfer_reason = include_transfer_reason
        own = (self._declaration.parameters_json_schema if self._declaration is not None else None) or {}
        declared = transfer_declaration(self._agent_names)
        reason = (own.get("properties") or {}).get("transfer_reason")
        if include_transfer_reason and reason is not None:
            declared.parameters_json_schema["properties"]["transfer_reason"] = copy.deepcopy(reason)
        self.description = declared.description
        self._declaration = declared

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
    its ``tools_dict`` has no tool of that name, the transfer tool for the agents the
    declaration offers is put there; ``request.tools`` is left as it is (the compiler's
    declaration is already google-adk's shape, in google-adk's place). A request that
    declares no transfer, or whose map already has such a tool (a caller's own), is
    left as it is."""
    declared = next((d for d in request.tools if d.name == TRANSFER_TO_AGENT), None)
    if declared is None or TRANSFER_TO_AGENT in request.tools_dict:
        return
    names = ((declared.parameters_schema or {}).get("properties") or {}).get("agent_name", {}).get("enum") or ()
    request.tools_dict[TRANSFER_TO_AGENT] = transfer_tool(tuple(names))
