"""``LlmAgent``: the definition of a model-driven agent, as plain validated data.

Everything is checked when the agent is constructed (names, the sub-agent tree,
instruction providers, the output schema, tools, the compressor), so a bad definition
fails at import time, never at the first request.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, Literal

from pydantic import Field, model_validator

from .._callables import Compressor, check_provider, describe_function, is_plain_function
from .._exceptions import AgentDefinitionError
from .._schema import output_schema_json
from .._types import Event, FunctionDeclaration
from ..examples import BaseExampleProvider, Example
from ..planners import BasePlanner
from ..types import generate_config_of
from ._base import AgentBase

__all__ = ["LlmAgent"]


def tool_name(tool: Any) -> str:
    if isinstance(tool, FunctionDeclaration):
        return tool.name
    if is_plain_function(tool):
        return describe_function(tool).name  # derives its schema now: a bad signature fails here
    name = getattr(tool, "name", None)
    if isinstance(name, str):
        return name
    raise AgentDefinitionError(f"{tool!r} is not a tool (it needs a name and a declaration())")


class LlmAgent(AgentBase):
    """An agent whose answers come from a language model.

    ``instruction`` and ``global_instruction`` are instruction providers: a string,
    a callable(ctx), ``(module, func)`` or ``(module, func, extra_args)``; their text
    may contain ``{state_key}`` placeholders. ``global_instruction`` counts on the
    root agent only and is shared by the whole tree.

    google-adk's ``generate_content_config=`` (a ``types.GenerateContentConfig``, ours
    or google.genai's) is taken as the ``generate_config`` dict, and a ``planner``'s
    settings are added to it; giving both ``generate_config`` and
    ``generate_content_config`` is an error.
    """

    model: Any = ""
    instruction: Any = ""
    global_instruction: Any = ""
    tools: list[Any] = Field(default_factory=list)
    output_schema: Any = None
    output_key: str | None = None
    generate_config: dict[str, Any] = Field(default_factory=dict)
    include_contents: Literal["default", "none"] = "default"
    context_compressor: Any = None
    disallow_transfer_to_parent: bool = False
    disallow_transfer_to_peers: bool = False
    max_iterations: int = Field(default=25, ge=1)
    fallback_models: list[Any] = Field(default_factory=list)
    preload_memory: bool = False
    confirmation_policy: Any = None  # a ConfirmationPolicy: which tool calls need a human's approval
    before_model_callback: Any = None
    after_model_callback: Any = None
    on_model_error_callback: Any = None
    before_tool_callback: Any = None
    after_tool_callback: Any = None
    on_tool_error_callback: Any = None
    planner: BasePlanner | None = None
    examples: list[Example] | BaseExampleProvider | None = None  # few-shot examples for the instruction

    @model_validator(mode="before")
    @classmethod
    def _google_adk_config(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "generate_content_config" not in data:
            return data
        data = dict(data)
        config = data.pop("generate_content_config")
        if config is None:
            return data
        if data.get("generate_config"):
            raise AgentDefinitionError(f"agent {data.get('name')!r}: give generate_config or "
                                       "generate_content_config, not both")
        data["generate_config"] = generate_config_of(config)
        return data

    @model_validator(mode="after")
    def _check_definition(self) -> LlmAgent:
        if self.planner is not None:
            self.generate_config = {**self.planner.generate_config(), **self.generate_config}
        if any(getattr(tool, "preloads_memory", False) for tool in self.tools):  # google-adk's preload_memory tool
            self.tools = [tool for tool in self.tools if not getattr(tool, "preloads_memory", False)]
            self.preload_memory = True
        self._take_example_tools()
        check_provider(self.instruction, f"agent {self.name!r}: instruction")
        check_provider(self.global_instruction, f"agent {self.name!r}: global_instruction")
        if self.output_schema is not None:
            try:
                json.dumps(output_schema_json(self.output_schema))
            except (TypeError, ValueError) as exc:
                raise AgentDefinitionError(f"agent {self.name!r}: output_schema is not serialisable: {exc}") from exc
        if self.context_compressor is not None and not isinstance(self.context_compressor, Compressor):
            raise AgentDefinitionError(
                f"agent {self.name!r}: context_compressor must be a compressor (SlidingWindow, Truncate, "
                f"TokenBudget, Summarize or any object with compress(messages)), got {self.context_compressor!r}"
            )
        names: set[str] = set()
        for tool in self.tools:
            if callable(getattr(tool, "get_tools", None)) and not callable(getattr(tool, "declaration", None)):
                continue  # a toolset: its tools are resolved per request
            if (not isinstance(tool, FunctionDeclaration) and not callable(getattr(tool, "declaration", None))
                    and not is_plain_function(tool)):
                raise AgentDefinitionError(
                    f"agent {self.name!r}: {tool!r} is not a tool; use FunctionTool(func) or a FunctionDeclaration"
                )
            name = tool_name(tool)
            if name in names:
                raise AgentDefinitionError(f"agent {self.name!r}: two tools are named {name!r}")
            names.add(name)
        return self

    def _take_example_tools(self) -> None:
        """google-adk's ExampleTool sets the examples: taken out of the tools; several
        lists are joined, a provider cannot be joined with anything."""
        given = [tool.few_shot_examples for tool in self.tools if hasattr(tool, "few_shot_examples")]
        if not given:
            return
        self.tools = [tool for tool in self.tools if not hasattr(tool, "few_shot_examples")]
        if self.examples is not None:
            given.insert(0, self.examples)
        if len(given) > 1 and any(isinstance(g, BaseExampleProvider) for g in given):
            raise AgentDefinitionError(f"agent {self.name!r}: an example provider cannot be combined "
                                       "with other examples")
        self.examples = given[0] if len(given) == 1 else [e for g in given for e in g]

    def _run_async_impl(self, ctx: Any) -> AsyncIterator[Event]:
        """The model loop, which the engine that made ``ctx`` runs (a subclass that
        overrides this may call it as ``super()._run_async_impl(ctx)``)."""
        return ctx.run_llm_flow(self)  # type: ignore[no-any-return]
