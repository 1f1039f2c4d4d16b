"""google-adk's tool classes: ``BaseTool`` and ``BaseToolset``, to subclass as
google-adk's docs show, on our engine.

A ``BaseTool`` subclass gives its declaration by ``_get_declaration()`` (a
``types.FunctionDeclaration``, ours or google.genai's, or None: then the model is not
told of it) and runs by ``async run_async(*, args, tool_context)``. The engine speaks
our tool protocol (:class:`~adk_actors.tools.Tool`): :meth:`BaseTool.declaration` and
:meth:`BaseTool.run` bridge the two, so every tool of ours (``FunctionTool``,
``AgentTool``, ...) is a ``BaseTool`` too and a google-adk callback that checks
``isinstance(tool, BaseTool)`` sees one.

A ``BaseToolset`` subclass lists its tools by ``async get_tools(readonly_context=None)``;
the engine asks :meth:`BaseToolset.get_tools_with_prefix` once per model step, which
puts ``tool_name_prefix`` and ``_`` before each tool's name (on copies: the toolset's
own tools keep theirs). ``tool_filter`` (a list of names, or a predicate taking the tool
and the context) is applied by the subclass through :meth:`BaseToolset._is_tool_selected`,
as in google-adk.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import Any, Protocol, runtime_checkable

from .._types import Behavior, FunctionDeclaration, FunctionResponseScheduling
from ..compiler._tools import is_toolset
from ..types import ours
from ._base import ToolContext

_log = logging.getLogger("adk_actors.tools")

__all__ = ["BaseTool", "BaseToolset", "ToolPredicate", "close_toolsets", "process_request"]


class BaseTool(ABC):
    """The base class of tools (google-adk's): ``name``, ``description``,
    ``is_long_running`` (its call ends the turn when it returns None; its real result
    is sent later as a function response), ``custom_metadata``, and two settings of
    live conversations (Live API only; None leaves the model's default):
    ``behavior`` (``NON_BLOCKING``: the conversation goes on while the tool runs, and
    its declaration says so; ``BLOCKING``: its declaration says the model waits) and
    ``response_scheduling`` (when the model reacts to the tool's result, sent with
    it; a tool with one and no ``behavior`` runs non-blocking too), as
    ``engine._live_tools`` and ``engine._live_setup`` use them."""

    name: str
    description: str
    is_long_running: bool = False
    custom_metadata: dict[str, Any] | None = None
    behavior: Behavior | None = None
    response_scheduling: FunctionResponseScheduling | None = None

    def __init__(self, *, name: str, description: str, is_long_running: bool = False,
                 custom_metadata: dict[str, Any] | None = None, behavior: Any = None,
                 response_scheduling: Any = None) -> None:
        """Keep the settings; ``behavior`` and ``response_scheduling`` as our enums
        (google.genai's members or their names taken; anything else is a ``ValueError``)."""
        self.name = name
        self.description = description
        self.is_long_running = is_long_running
        self.custom_metadata = custom_metadata
        self.behavior = None if behavior is None else Behavior(behavior)
        self.response_scheduling = None if response_scheduling is None else FunctionResponseScheduling(
            response_scheduling)

    def _get_declaration(self) -> Any:
        """The tool as the model sees it, or None to declare nothing (google-adk's default)."""
        return None

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """Run the tool with the model's ``args``; what it returns is the call's
        response (a non-dict value as ``{"result": value}``)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement run_async")

    def declaration(self) -> FunctionDeclaration | None:
        """Our protocol: ``_get_declaration()`` as our FunctionDeclaration (google.genai's
        converted field by field; an InvalidRequestError when it does not fit), or None."""
        declared = self._get_declaration()
        if declared is None:
            return None
        return ours(declared, FunctionDeclaration)

    async def run(self, tool_context: ToolContext, args: dict[str, Any]) -> Any:
        """Our protocol: ``run_async`` with google-adk's keyword arguments."""
        return await self.run_async(args=args, tool_context=tool_context)

    async def process_llm_request(  # noqa: B027 (google-adk's hook: optional, a no-op by default)
            self, *, tool_context: ToolContext, llm_request: Any) -> None:
        """google-adk's hook to change the request before each model call of the agent
        that has this tool (after it is compiled, before the before-model callbacks).
        The compiler declares the tool already; by default nothing more happens."""

    async def check_require_confirmation(self, args: dict[str, Any], tool_context: ToolContext) -> bool:
        """google-adk's hook; no call of a BaseTool needs confirmation unless overridden."""
        return False

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


@runtime_checkable
class ToolPredicate(Protocol):
    """Decides whether a toolset's tool is offered to the model in a context."""

    def __call__(self, tool: BaseTool, readonly_context: Any = None) -> bool: ...


class BaseToolset(ABC):
    """The base class of toolsets (google-adk's): tools listed per model step."""

    #: google-adk's switch: list the tools once per invocation (True), or afresh at
    #: every model step (a toolset whose tools change within a turn sets it False)
    _use_invocation_cache: bool = True

    def __init__(self, *, tool_filter: ToolPredicate | list[str] | None = None,
                 tool_name_prefix: str | None = None) -> None:
        self.tool_filter = tool_filter
        self.tool_name_prefix = tool_name_prefix
        self._cached: tuple[str | None, list[BaseTool]] | None = None

    @abstractmethod
    async def get_tools(self, readonly_context: Any = None) -> list[BaseTool]:
        """The toolset's tools in ``readonly_context`` (None: all of them). An exception
        raised here drops the toolset from this model step, reported in an error event."""

    async def get_tools_with_prefix(self, readonly_context: Any = None) -> list[BaseTool]:
        """``get_tools``, each tool's name (and its declaration's) prefixed with
        ``tool_name_prefix`` and ``_`` when a prefix is set; the tools returned are
        shallow copies, so the toolset's own keep their names. As google-adk's, the
        tools are listed once per invocation unless ``_use_invocation_cache`` is off: a
        later step of the same invocation (same ``readonly_context.invocation_id``) gets
        the same list."""
        invocation_id = getattr(readonly_context, "invocation_id", None)
        cached = getattr(self, "_cached", None)
        if self._use_invocation_cache and cached is not None and cached[0] == invocation_id:
            return list(cached[1])
        tools = list(await self.get_tools(readonly_context))
        if self.tool_name_prefix:
            tools = [_prefixed(tool, f"{self.tool_name_prefix}_{tool.name}") for tool in tools]
        self._cached = (invocation_id, tools)
        return list(tools)

    def _is_tool_selected(self, tool: Any, readonly_context: Any) -> bool:
        """Whether ``tool_filter`` lets ``tool`` through: no filter lets all through; a
        list, the tools it names; a predicate, the tools it accepts."""
        if not self.tool_filter:
            return True
        if isinstance(self.tool_filter, list):
            return tool.name in self.tool_filter
        if callable(self.tool_filter):
            return bool(self.tool_filter(tool, readonly_context))
        return False

    async def process_llm_request(  # noqa: B027 (google-adk's hook: optional, a no-op by default)
            self, *, tool_context: ToolContext, llm_request: Any) -> None:
        """google-adk's hook to change the request before each model call of the agent
        that has this toolset, before its tools' own hooks. Nothing by default."""

    async def close(self) -> None:  # noqa: B027 (google-adk's hook: optional, a no-op by default)
        """Release what the toolset holds (connections, files). Nothing by default."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(prefix={self.tool_name_prefix!r})"


def _prefixed(tool: Any, name: str) -> Any:
    """A shallow copy of ``tool`` named ``name``, its declaration renamed to match."""
    renamed = copy.copy(tool)
    renamed.name = name
    declare: Callable[[], Any] = tool.declaration

    def declaration() -> FunctionDeclaration | None:
        declared = declare()
        return None if declared is None else declared.model_copy(update={"name": name})

    renamed.declaration = declaration
    return renamed


def _toolsets_of(agent: Any, found: list[BaseToolset], seen: set[int]) -> None:
    if id(agent) in seen:
        return
    seen.add(id(agent))
    for tool in getattr(agent, "tools", None) or ():
        closable = isinstance(tool, BaseToolset) or (
            is_toolset(tool) and inspect.iscoroutinefunction(getattr(tool, "close", None)))  # McpToolset too
        if closable and all(tool is not known for known in found):
            found.append(tool)
    for sub in getattr(agent, "sub_agents", None) or ():
        _toolsets_of(sub, found, seen)


async def close_toolsets(agent: Any, timeout: float = 10.0) -> None:
    """Close every toolset (a ``BaseToolset``, or one of ours with an async ``close``,
    as ``McpToolset``) in ``agent``'s tree (its tools and its sub-agents',
    each toolset once), one after the other, as google-adk's ``Runner.close`` does: a
    toolset whose ``close()`` raises or takes longer than ``timeout`` seconds is logged
    and the next one closed all the same."""
    found: list[BaseToolset] = []
    _toolsets_of(agent, found, set())
    for toolset in found:
        try:
            await asyncio.wait_for(toolset.close(), timeout)
        except TimeoutError:
            _log.warning("toolset %r did not close within %s s", toolset, timeout)
        except Exception as exc:
            _log.warning("toolset %r failed to close: %s", toolset, exc)


_NO_HOOK = (BaseTool.process_llm_request, BaseToolset.process_llm_request)


async def process_request(tools: Iterable[Any], tool_context: Callable[[], ToolContext], request: Any) -> None:
    """Let each tool (or toolset) that overrides google-adk's ``process_llm_request``
    change ``request``, in the order of ``tools``, with one ToolContext made by
    ``tool_context()`` when the first such tool is met; what one raises ends the step
    (as in google-adk)."""
    context: ToolContext | None = None
    for tool in tools:
        hook = getattr(type(tool), "process_llm_request", None)
        if hook is not None and hook not in _NO_HOOK:
            context = context or tool_context()
            await tool.process_llm_request(tool_context=context, llm_request=request)
