"""google-adk's ``CrewaiTool``: a CrewAI tool (``crewai.tools.BaseTool``: ``name``,
``description``, ``args_schema``, ``run``) as a tool of an agent here, and
``CrewaiToolConfig``, its entry in an agent file.

When built (``CrewaiTool(tool, *, name, description="")``), in order: ``crewai`` is
imported (not installed: ``ModuleNotFoundError`` naming the ``crewai`` extra and its
pip command); the tool's ``run`` is described as a
:class:`~adk_actors.tools.FunctionTool` describes a function; the name is ``name``
when not empty, else the CrewAI tool's name in lower case with its spaces as ``_``
(a tool name has no spaces); the description is ``description`` when not empty, else
the tool's.

What the model is told: the properties of the tool's ``args_schema`` (a pydantic
model), declared as :mod:`adk_actors.integrations.langchain._schema` says.

When run, in order: the model's arguments are taken as given (CrewAI's ``run``
validates them against its ``args_schema``); to a ``run`` that takes ``**kwargs`` all
of them go (less ``self`` and the context parameter's name), to any other only those
it names; the context is passed when ``run`` has a parameter for it; a parameter of
``run`` without a default that the model left out is a
:class:`~adk_actors.tools.function_tool.ToolArgumentError` (the model reads it as the
call's error); then ``run`` is called (awaited when async, else on a thread as a
``FunctionTool``'s sync function) and what it returns is the result.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from ..._extras import extra_hint
from ..._types import FunctionDeclaration
from ...agents._tool_configs import BaseToolConfig, ToolArgsConfig
from ...agents.config_agent_utils import resolve_fully_qualified_name
from ...tools._base import ToolContext
from ...tools._function import INPUT_STREAM, FunctionTool, ToolArgumentError, in_daemon_thread
from ...tools._tool_pool import pool_size, run_sync_call
from ..langchain._schema import declaration_from_json_schema

__all__ = ["CrewaiTool", "CrewaiToolConfig", "load_crewai_tools"]


def load_crewai_tools() -> Any:
    """``crewai.tools``, imported; ``ModuleNotFoundError`` (named ``crewai``) saying
    which extra to install when it cannot be."""
    try:
        return importlib.import_module("crewai.tools")
    except ImportError as exc:
        raise ModuleNotFoundError(f"CrewaiTool needs crewai: {extra_hint('crewai')}", name="crewai") from exc


class CrewaiTool(FunctionTool):
    """See the module."""

    #: the wrapped CrewAI tool
    tool: Any

    def __init__(self, tool: Any, *, name: str, description: str = "") -> None:
        """See the module: the steps, in order, and what each raises."""
        load_crewai_tools()
        super().__init__(tool.run)
        self.tool = tool
        if name:
            self.name = name
        elif getattr(tool, "name", None):
            self.name = tool.name.replace(" ", "_").lower()
        if description:
            self.description = description
        elif getattr(tool, "description", None):
            self.description = tool.description

    def _get_declaration(self) -> FunctionDeclaration | None:
        """The properties of the tool's ``args_schema``, declared (see the module)."""
        schema: dict[str, Any] = self.tool.args_schema.model_json_schema()
        return declaration_from_json_schema(self.name, self.description, schema.get("properties") or {})

    def _arguments_for(self, args: dict[str, Any], tool_context: ToolContext) -> dict[str, Any]:
        """What ``run`` is called with (see the module); ToolArgumentError naming the
        parameters without a default the model left out."""
        parameters = inspect.signature(self.func).parameters
        context = self.context_param or "tool_context"
        if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
            given = {key: value for key, value in (args or {}).items() if key not in ("self", context)}
        else:
            given = {key: value for key, value in (args or {}).items() if key in parameters}
        if context in parameters:
            given[context] = tool_context
        missing = [key for key, p in parameters.items()
                   if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                   and key not in (context, INPUT_STREAM) and key not in given]
        if missing:
            raise ToolArgumentError(f"invalid arguments for {self.name}: missing {', '.join(missing)} (required, "
                                    f"no default); call it again with every required argument")
        return given

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """Call the CrewAI tool's ``run`` with the model's arguments (see the module)."""
        given = self._arguments_for(args, tool_context)
        if inspect.iscoroutinefunction(self.func):
            return await self.func(**given)
        workers = pool_size(tool_context)
        if workers is not None:
            return await run_sync_call(workers, self.func, **given)
        return await in_daemon_thread(self.func, **given)

    @classmethod
    def from_config(cls, config: ToolArgsConfig, config_abs_path: str) -> CrewaiTool:
        """The tool an agent file's ``args`` describe (:class:`CrewaiToolConfig`): its
        ``tool`` imported by dotted name, with its ``name`` and ``description``. An
        unknown key is a ValidationError; a name that cannot be imported, an
        ``AgentDefinitionError``."""
        settings = CrewaiToolConfig.model_validate(config.model_dump())
        tool = resolve_fully_qualified_name(settings.tool)
        return cls(tool, name=settings.name, description=settings.description)


class CrewaiToolConfig(BaseToolConfig):
    """``args`` of a :class:`CrewaiTool` in an agent file."""

    #: the dotted name of the CrewAI tool object
    tool: str
    #: the tool's name for the model; empty: the CrewAI tool's own (spaces as ``_``)
    name: str = ""
    #: the tool's description for the model; empty: the CrewAI tool's own
    description: str = ""
