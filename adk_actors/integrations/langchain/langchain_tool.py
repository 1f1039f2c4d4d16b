"""google-adk's ``LangchainTool``: a LangChain tool (``langchain_core``'s ``BaseTool``,
a ``@tool`` function, a ``StructuredTool``, or any object with ``run`` or ``_run``)
as a tool of an agent here, and ``LangchainToolConfig``, its entry in an agent file.

When built (``LangchainTool(tool, name=None, description=None)``), in order:
``langchain_core`` is imported (not installed: ``ModuleNotFoundError`` naming the
``langchain`` extra and its pip command); an object with neither ``run`` nor ``_run``
is a ``ValueError``; the function called is a ``StructuredTool``'s ``func`` (its
``coroutine`` for an async-only one), else the object's ``_run``, else its ``run``;
that function is described as a :class:`~adk_actors.tools.FunctionTool` describes
one, without its ``run_manager`` parameter (LangChain's own); the name is ``name``
when given, else the tool's ``name``, else the function's; the description likewise.

What the model is told: a LangChain ``BaseTool`` with an ``args_schema`` is declared
from that schema's properties (LangChain's ``args``), as
:mod:`adk_actors.integrations.langchain._schema` says; any other tool as its function
is (a ``FunctionTool``'s declaration, under the tool's name and description). A
schema that cannot be declared is a ``ValueError`` naming the tool.

When run: the model's arguments go to the function as a ``FunctionTool``'s do (the
LangChain tool's own ``run`` and its callbacks are not involved, as in google-adk);
what it returns is the result. A tool made with ``return_direct=True`` ends the turn
with its result (``skip_summarization``), unless the result is an error dict.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable
from typing import Any

from ..._extras import extra_hint
from ..._types import FunctionDeclaration
from ...agents._tool_configs import BaseToolConfig, ToolArgsConfig
from ...agents.config_agent_utils import resolve_fully_qualified_name
from ...tools._base import ToolContext
from ...tools._function import FunctionTool
from ._schema import declaration_from_json_schema

__all__ = ["LangchainTool", "LangchainToolConfig", "load_langchain_tools"]

#: LangChain's parameter for its callbacks: never declared, never passed by us
RUN_MANAGER = "run_manager"


def load_langchain_tools() -> Any:
    """``langchain_core.tools``, imported; ``ModuleNotFoundError`` (named
    ``langchain_core``) saying which extra to install when it cannot be."""
    try:
        return importlib.import_module("langchain_core.tools")
    except ImportError as exc:
        raise ModuleNotFoundError(f"LangchainTool needs langchain-core: {extra_hint('langchain')}",
                                  name="langchain_core") from exc


def _without_run_manager(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` as described to the model: itself, or, when it has a ``run_manager``
    parameter, a stand-in with its name, docstring and signature less that parameter
    (only described, never called)."""
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return func
    if RUN_MANAGER not in signature.parameters:
        return func

    def view(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{func!r} is only described here")

    functools.update_wrapper(view, func)
    view.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[p for p in signature.parameters.values() if p.name != RUN_MANAGER])
    view.__annotations__ = {k: v for k, v in getattr(func, "__annotations__", {}).items() if k != RUN_MANAGER}
    return view


def _function_of(tool: Any, langchain: Any) -> Callable[..., Any]:
    """The function a LangChain tool is run by (see the module); ValueError when none."""
    func: Any = None
    if isinstance(tool, langchain.StructuredTool):
        func = tool.func if tool.func is not None else getattr(tool, "coroutine", None)
    elif hasattr(tool, "_run"):
        func = tool._run
    elif hasattr(tool, "run"):
        func = tool.run
    if not callable(func):
        raise ValueError(f"LangchainTool: {type(tool).__name__} has no function to call (a StructuredTool "
                         f"without func or coroutine)")
    return func  # type: ignore[no-any-return]


class LangchainTool(FunctionTool):
    """See the module."""

    _langchain_tool: Any
    _return_direct: bool

    def __init__(self, tool: Any, name: str | None = None, description: str | None = None) -> None:
        """See the module: the steps, in order, and what each raises."""
        langchain = load_langchain_tools()
        if not hasattr(tool, "run") and not hasattr(tool, "_run"):
            raise ValueError(f"LangchainTool wraps a LangChain tool, or an object with a 'run' or '_run' method; "
                             f"got {type(tool).__name__}")
        func = _function_of(tool, langchain)
        super().__init__(_without_run_manager(func))
        self.func, self._is_async = func, inspect.iscoroutinefunction(func)  # the function itself is called
        self._langchain_tool = tool
        self._return_direct = bool(getattr(tool, "return_direct", False))
        if name is not None:
            self.name = name
        elif getattr(tool, "name", None):
            self.name = tool.name
        if description is not None:
            self.description = description
        elif getattr(tool, "description", None):
            self.description = tool.description

    def _get_declaration(self) -> FunctionDeclaration | None:
        """The declaration the module describes; ValueError naming the tool when its
        schema cannot be declared."""
        try:
            langchain = load_langchain_tools()
            tool = self._langchain_tool
            schema = getattr(tool, "args_schema", None)
            if isinstance(tool, langchain.BaseTool) and schema:
                # LangChain's own reading of the schema: a Tool of ours with the same args_schema
                shaped = langchain.Tool(name=self.name, func=self.func, description=self.description)
                shaped.args_schema = schema
                return declaration_from_json_schema(self.name, self.description, shaped.args)
            declared = super()._get_declaration()
            if declared is None:
                raise ValueError("its function declares nothing")
            return declared.model_copy(update={"name": self.name, "description": self.description})
        except ModuleNotFoundError:
            raise
        except Exception as exc:
            raise ValueError(f"LangchainTool {self.name!r}: cannot declare it to the model: {exc}") from exc

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """Run the function (a ``FunctionTool``'s run); a ``return_direct`` tool's result,
        unless it is an error dict, ends the turn (``skip_summarization``)."""
        result = await super().run_async(args=args, tool_context=tool_context)
        if self._return_direct and not (isinstance(result, dict) and result.get("error")):
            tool_context.actions.skip_summarization = True
        return result

    @classmethod
    def from_config(cls, config: ToolArgsConfig, config_abs_path: str) -> LangchainTool:
        """The tool an agent file's ``args`` describe (:class:`LangchainToolConfig`): its
        ``tool`` imported by dotted name, its ``name`` and ``description`` when not
        empty. An unknown key is a ValidationError; a name that cannot be imported, an
        ``AgentDefinitionError``."""
        settings = LangchainToolConfig.model_validate(config.model_dump())
        tool = resolve_fully_qualified_name(settings.tool)
        return cls(tool, name=settings.name or None, description=settings.description or None)


class LangchainToolConfig(BaseToolConfig):
    """``args`` of a :class:`LangchainTool` in an agent file."""

    #: the dotted name of the LangChain tool object
    tool: str
    #: the tool's name for the model; empty: the LangChain tool's own
    name: str = ""
    #: the tool's description for the model; empty: the LangChain tool's own
    description: str = ""
