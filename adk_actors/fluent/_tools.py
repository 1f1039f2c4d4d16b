"""``T``: adk-fluent's tool namespace, tools joined with ``|`` and given to an agent
with ``.tools(T.fn(search) | T.fn(email))`` (or ``.tool(...)``).

* ``T.fn(f, confirm=False)``: a function as a tool (a tool object as it is);
  ``confirm``: each call waits for a human's approval (the host's approvals).
* ``T.agent(agent)``: another agent (or builder) as a tool (``AgentTool``).
* ``T.toolset(ts)``: a toolset as it is (an ``McpToolset`` ...).
* ``T.mcp(url_or_params, tool_filter=None, prefix=None)``: an MCP server's tools (a
  URL is a streamable-HTTP server); needs ``adk-actors[mcp]``.
* ``T.a2a(card_url, name=None, description=None, timeout=600)``: a remote A2A agent as
  a tool; needs ``adk-actors[a2a]``.
* ``T.mock(name, returns=None, side_effect=None)``: a tool that answers ``returns``,
  or ``side_effect(**args)`` (a value that is not callable: that value).
* ``T.confirm(tools, message=None)``: the tools' calls wait for a human's approval;
  ``message`` is what the approver is shown.
* ``T.timeout(tools, seconds=30)``: a call that takes longer fails (the model sees
  ``TimeoutError``).
* ``T.cache(tools, ttl=300, key_fn=None)``: a call with the same arguments within
  ``ttl`` seconds answers the first call's result (at most 1,024 kept per tool;
  ``key_fn(args)`` makes the key).

A wrapped tool keeps the declaration the model sees (name, description, parameters)
and what the engine reads of it (idempotent, long-running, confirmation).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from .._types import FunctionDeclaration
from ..agents import AgentBase
from ..tools import AgentTool, FunctionTool, ToolContext, Toolset

__all__ = ["T", "ToolChain"]


class ToolChain:
    """Tools joined with ``|``; ``Agent.tools(chain)`` gives them to the agent."""

    def __init__(self, tools: tuple[Any, ...]) -> None:
        self.tools = tools

    def __or__(self, other: ToolChain) -> ToolChain:
        if not isinstance(other, ToolChain):
            return NotImplemented
        return ToolChain(self.tools + other.tools)


def _as_tool(item: Any) -> Any:
    """A tool or toolset as it is; a function as a FunctionTool."""
    return item if hasattr(item, "declaration") or isinstance(item, Toolset) else FunctionTool(item)


def _each(tools: ToolChain | Any) -> list[Any]:
    return [_as_tool(tool) for tool in (tools.tools if isinstance(tools, ToolChain) else (tools,))]


class _Wrapped:
    """A tool that runs another: the model sees the inner tool's declaration, and the
    engine its flags (``__getattr__`` reads them through)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.description = inner.description
        self.is_long_running = inner.is_long_running

    def declaration(self) -> FunctionDeclaration:
        declared: FunctionDeclaration = self.inner.declaration()
        return declared

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    async def run(self, tool_context: ToolContext, args: dict[str, Any]) -> Any:
        return await self.inner.run(tool_context, args)


class _Confirmed(_Wrapped):
    def __init__(self, inner: Any, message: str | None) -> None:
        super().__init__(inner)
        self.require_confirmation = True
        self.confirmation_hint = message


class _TimeLimited(_Wrapped):
    def __init__(self, inner: Any, seconds: float) -> None:
        super().__init__(inner)
        self.seconds = seconds

    async def run(self, tool_context: ToolContext, args: dict[str, Any]) -> Any:
        try:
            return await asyncio.wait_for(self.inner.run(tool_context, args), self.seconds)
        except TimeoutError:
            raise TimeoutError(f"the tool {self.name} did not answer within {self.seconds} s") from None


class _Cached(_Wrapped):
    """Results by key, for ``ttl`` seconds of ``clock``, the newest ``size`` kept."""

    def __init__(self, inner: Any, ttl: float, key_fn: Callable[[dict[str, Any]], Any] | None, *,
                 size: int = 1024, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(inner)
        self.ttl = ttl
        self.key_fn = key_fn or (lambda args: json.dumps(args, sort_keys=True, default=str))
        self.size = size
        self.clock = clock
        self.kept: OrderedDict[Any, tuple[float, Any]] = OrderedDict()

    async def run(self, tool_context: ToolContext, args: dict[str, Any]) -> Any:
        key = self.key_fn(args)
        found = self.kept.get(key)
        if found is not None and self.clock() - found[0] < self.ttl:
            return found[1]
        result = await self.inner.run(tool_context, args)
        self.kept[key] = (self.clock(), result)
        self.kept.move_to_end(key)
        while len(self.kept) > self.size:
            self.kept.popitem(last=False)
        return result


class _Mock:
    """A tool of any arguments that answers a fixed value or a side effect's."""

    is_long_running = False

    def __init__(self, name: str, returns: Any, side_effect: Any) -> None:
        self.name = name
        self.description = f"Mock tool: {name}"
        self.returns = returns
        self.side_effect = side_effect

    def declaration(self) -> FunctionDeclaration:
        return FunctionDeclaration(name=self.name, description=self.description, parameters={"type": "object"})

    async def run(self, tool_context: ToolContext, args: dict[str, Any]) -> Any:
        if self.side_effect is None:
            return self.returns
        return self.side_effect(**args) if callable(self.side_effect) else self.side_effect


class T:
    """The tools (see the module)."""

    @staticmethod
    def fn(func_or_tool: Any, *, confirm: bool = False) -> ToolChain:
        if hasattr(func_or_tool, "declaration"):
            return ToolChain((_Confirmed(func_or_tool, None) if confirm else func_or_tool,))
        return ToolChain((FunctionTool(func_or_tool, require_confirmation=confirm),))

    @staticmethod
    def agent(agent_or_builder: Any) -> ToolChain:
        agent = agent_or_builder if isinstance(agent_or_builder, AgentBase) else agent_or_builder.build()
        return ToolChain((AgentTool(agent),))

    @staticmethod
    def toolset(toolset: Any) -> ToolChain:
        return ToolChain((toolset,))

    @staticmethod
    def mcp(url_or_params: Any, *, tool_filter: Any = None, prefix: str | None = None) -> ToolChain:
        # The MCP extra is optional: imported when a toolset is asked for, not with the builder.
        from ..mcp import McpToolset, StreamableHTTPConnectionParams

        params = StreamableHTTPConnectionParams(url=url_or_params) if isinstance(url_or_params, str) else url_or_params
        return ToolChain((McpToolset(connection_params=params, tool_filter=tool_filter, tool_name_prefix=prefix),))

    @staticmethod
    def a2a(agent_card_url: str, *, name: str | None = None, description: str | None = None,
            timeout: float = 600.0) -> ToolChain:
        # The A2A extra is optional: imported when a remote agent is asked for.
        from ..a2a import RemoteA2aAgent

        remote = RemoteA2aAgent(name=name or "remote_a2a", card_url=agent_card_url, description=description or "",
                                timeout=timeout)
        return ToolChain((AgentTool(remote),))

    @staticmethod
    def mock(name: str, *, returns: Any = None, side_effect: Any = None) -> ToolChain:
        return ToolChain((_Mock(name, returns, side_effect),))

    @staticmethod
    def confirm(tools: ToolChain | Any, message: str | None = None) -> ToolChain:
        return ToolChain(tuple(_Confirmed(tool, message) for tool in _each(tools)))

    @staticmethod
    def timeout(tools: ToolChain | Any, seconds: float = 30) -> ToolChain:
        return ToolChain(tuple(_TimeLimited(tool, seconds) for tool in _each(tools)))

    @staticmethod
    def cache(tools: ToolChain | Any, ttl: float = 300, key_fn: Callable[[dict[str, Any]], Any] | None = None) -> ToolChain:
        return ToolChain(tuple(_Cached(tool, ttl, key_fn) for tool in _each(tools)))
