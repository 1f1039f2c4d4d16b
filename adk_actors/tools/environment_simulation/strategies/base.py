"""The mock-strategy interface (google-adk's ``strategies.base``).

A :class:`MockStrategy` answers one tool call with a result dict, given the tool, the
call's arguments and tool context, the connection map (None when no analysis was
made), the simulator's state store (which it may update) and the config's
``environment_data`` and ``tracing`` texts. :class:`TracingMockStrategy` is
google-adk's placeholder for ``MOCK_STRATEGY_TRACING``: it answers every call with an
error result and asks no model.
"""

from __future__ import annotations

from typing import Any

from ....types import GenerateContentConfig
from ..tool_connection_map import ToolConnectionMap

__all__ = ["MockStrategy", "TracingMockStrategy"]


class MockStrategy:
    """The base of mock strategies: :meth:`mock` is not implemented here."""

    async def mock(self, tool: Any, args: dict[str, Any], tool_context: Any,
                   tool_connection_map: ToolConnectionMap | None, state_store: dict[str, Any],
                   environment_data: str | None = None, tracing: str | None = None) -> dict[str, Any]:
        """The result of calling ``tool`` with ``args`` (see the module). Raises
        ``NotImplementedError`` here: a subclass answers."""
        raise NotImplementedError(f"{type(self).__name__} does not implement mock")


class TracingMockStrategy(MockStrategy):
    """The deprecated tracing strategy (see the module); ``llm_name`` and
    ``llm_config`` are kept, not used."""

    def __init__(self, llm_name: str = "", llm_config: GenerateContentConfig | None = None) -> None:
        self._llm_name = llm_name
        self._llm_config = llm_config

    async def mock(self, tool: Any, args: dict[str, Any], tool_context: Any,
                   tool_connection_map: ToolConnectionMap | None, state_store: dict[str, Any],
                   environment_data: str | None = None, tracing: str | None = None) -> dict[str, Any]:
        """An error result: this strategy invents nothing."""
        return {"status": "error",
                "error_message": "MOCK_STRATEGY_TRACING has no implementation: use MOCK_STRATEGY_TOOL_SPEC with "
                                 "the config's tracing text"}
