"""How tools share state (google-adk's ``tool_connection_map``), as the simulator's
model describes it: each identifier-like parameter (``ticket_id``), the tools that
make or change what it names, and the tools that only read it."""

from __future__ import annotations

from pydantic import BaseModel

__all__ = ["StatefulParameter", "ToolConnectionMap"]


class StatefulParameter(BaseModel):
    """One shared parameter: its name, the tools that create or change the thing it
    names (``creating_tools``), and the tools that read it (``consuming_tools``)."""

    parameter_name: str
    creating_tools: list[str]
    consuming_tools: list[str]


class ToolConnectionMap(BaseModel):
    """Every shared parameter found among an agent's tools."""

    stateful_parameters: list[StatefulParameter]
