"""Where a simulated tool call is answered (google-adk's
``EnvironmentSimulationEngine``): the plugin and the callback of
:mod:`.environment_simulation_factory` both call :meth:`EnvironmentSimulationEngine.simulate`.

``simulate(tool, args, tool_context)``, in order:

1. a tool the config does not name gets None (it runs as usual);
2. once per engine, before the first simulated call is answered, when any configured
   tool has a mock strategy: when the calling agent is an ``LlmAgent``, its tools as a
   step uses them (plain functions as ``FunctionTool``, toolsets listed for this
   context, with their prefixes) are given to the :class:`ToolConnectionAnalyzer`, and
   its map is kept for every later call;
3. the tool's injections are tried in order: one with ``match_args`` that the call's
   arguments do not all equal is passed over (nothing drawn); otherwise a number is
   drawn from the injection's seeded generator (made with the engine) or the engine's
   shared one, and when it is below ``injection_probability`` the engine waits
   ``injected_latency_seconds`` and answers with the injected error
   (``{"error_code", "error_message"}``) or the injected response;
4. with no injection used, a tool without a mock strategy gets None (a warning is
   logged; the real tool runs), and one with a strategy gets the strategy's result: a
   new strategy each call, given the connection map, the engine's state store (shared
   by every call and session the engine serves) and the config's
   ``environment_data`` and ``tracing``.

An exception from the simulator's model (analysis or mock) is raised on to the
plugin or callback that asked, which ends the run as any failing hook does.
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any

from ..._callables import is_plain_function
from ...agents import LlmAgent
from ...compiler._tools import canonical_tools, is_toolset
from .._classes import BaseToolset
from .._function import FunctionTool
from .environment_simulation_config import (
    EnvironmentSimulationConfig,
    InjectionConfig,
    MockStrategy,
)
from .strategies import base as strategies_base
from .strategies.tool_spec_mock_strategy import ToolSpecMockStrategy
from .tool_connection_analyzer import ToolConnectionAnalyzer
from .tool_connection_map import ToolConnectionMap

__all__ = ["EnvironmentSimulationEngine", "environment_simulation_logger"]

#: the simulator's logger, by google-adk's name for it
environment_simulation_logger = logging.getLogger("environment_simulation_logger")


def _strategy(kind: MockStrategy, llm_name: str, llm_config: Any) -> strategies_base.MockStrategy:
    """The strategy of ``kind``; ``ValueError`` for ``MOCK_STRATEGY_UNSPECIFIED``."""
    if kind == MockStrategy.MOCK_STRATEGY_TOOL_SPEC:
        return ToolSpecMockStrategy(llm_name, llm_config)
    if kind == MockStrategy.MOCK_STRATEGY_TRACING:
        return strategies_base.TracingMockStrategy(llm_name, llm_config)
    raise ValueError(f"no mock strategy for {kind!r}")


async def _agent_tools(agent: Any, tool_context: Any) -> list[Any]:
    """``agent``'s tools as its model step resolves them (see the module, step 2)."""
    invocation = tool_context.invocation
    tools: list[Any] = []
    for tool in canonical_tools(agent, getattr(invocation, "root_agent", None) or agent):
        if isinstance(tool, BaseToolset):
            tools.extend(await tool.get_tools_with_prefix(tool_context))
        elif is_toolset(tool):
            tools.extend(await tool.get_tools(invocation))
        else:
            tools.append(FunctionTool(tool) if is_plain_function(tool) else tool)
    return tools


def _matches(injection: InjectionConfig, args: dict[str, Any]) -> bool:
    """Whether every ``match_args`` entry is an argument of the call with that value."""
    return all(name in args and args[name] == value for name, value in (injection.match_args or {}).items())


class EnvironmentSimulationEngine:
    """Answers the calls of the tools ``config`` names (see the module). The analyzer's
    model is made now: an unknown ``simulation_model`` is a ``ValueError`` here."""

    def __init__(self, config: EnvironmentSimulationConfig) -> None:
        self._config = config
        self._tool_sim_configs = {c.tool_name: c for c in config.tool_simulation_configs}
        self._analyzer = ToolConnectionAnalyzer(llm_name=config.simulation_model,
                                                llm_config=config.simulation_model_configuration)
        self._is_analyzed = False
        self._tool_connection_map: ToolConnectionMap | None = None
        self._state_store: dict[str, Any] = {}
        self._random_generator = random.Random()
        self._seeded_generators = {
            (c.tool_name, index): random.Random(injection.random_seed)
            for c in config.tool_simulation_configs for index, injection in enumerate(c.injection_configs)
            if injection.random_seed is not None}

    async def simulate(self, tool: Any, args: dict[str, Any], tool_context: Any) -> dict[str, Any] | None:
        """The simulated result of this call, or None to run the tool (see the module)."""
        config = self._tool_sim_configs.get(tool.name)
        if config is None:
            return None
        await self._analyze_once(tool_context)
        for index, injection in enumerate(config.injection_configs):
            if not _matches(injection, args):
                continue
            draw = self._seeded_generators.get((tool.name, index), self._random_generator).random()
            if draw >= injection.injection_probability:
                continue
            await asyncio.sleep(injection.injected_latency_seconds)
            if injection.injected_error:
                return {"error_code": injection.injected_error.injected_http_error_code,
                        "error_message": injection.injected_error.error_message}
            if injection.injected_response:
                return injection.injected_response
        if config.mock_strategy_type == MockStrategy.MOCK_STRATEGY_UNSPECIFIED:
            environment_simulation_logger.warning(
                "no injection answered the call of %r and it has no mock strategy: the tool runs", tool.name)
            return None
        strategy = _strategy(config.mock_strategy_type, self._config.simulation_model,
                             self._config.simulation_model_configuration)
        return await strategy.mock(tool, args, tool_context, self._tool_connection_map, self._state_store,
                                   self._config.environment_data, self._config.tracing)

    async def _analyze_once(self, tool_context: Any) -> None:
        """Step 2 of the module, the first time a call needs it."""
        if self._is_analyzed or all(c.mock_strategy_type == MockStrategy.MOCK_STRATEGY_UNSPECIFIED
                                    for c in self._config.tool_simulation_configs):
            return
        agent = tool_context.invocation.agent
        if isinstance(agent, LlmAgent):
            self._tool_connection_map = await self._analyzer.analyze(await _agent_tools(agent, tool_context))
        self._is_analyzed = True
