"""``LlmAgent``: the definition of a model-driven agent, as plain validated data.

Everything is checked when the agent is constructed (names, the sub-agent tree,
instruction providers, the output schema, tools, the compressor), so a bad definition
fails at import time, never at the first request.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import AsyncIterator
from typing import Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, field_validator, model_validator

from .._callables import Compressor, check_provider, describe_function, is_plain_function
from .._exceptions import AgentDefinitionError
from .._genai_schema import json_schema_of
from .._node_settings import LlmAgentMode
from .._schema import output_schema_json
from .._static_instruction import static_content
from .._types import Event, FunctionDeclaration
from ..examples import BaseExampleProvider, Example
from ..planners import BasePlanner
from ..types import GenerateContentConfig, generate_config_of, ours
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


#: Settings a GenerateContentConfig carries that an agent has its own field for.
_OWN_FIELD = {"system_instruction": "instruction", "response_schema": "output_schema", "base_url": "model"}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def _refuse_misplaced_settings(cls: type[BaseModel], data: dict[str, Any]) -> None:
    """An agent argument that is no field of the agent but a generation setting
    (snake or camel case) raises :class:`AgentDefinitionError` naming where it goes."""
    settings = {name: name for name in [*GenerateContentConfig.model_fields, *_OWN_FIELD]}
    settings |= {_camel(name): name for name in list(settings)}
    problems = []
    for key, value in data.items():
        if key in cls.model_fields or key not in settings:
            continue
        name = settings[key]
        if name == "http_options" and not _base_url(value):
            problems.append(f"{key} is a GenerateContentConfig field: give "
                            f"generate_content_config=types.GenerateContentConfig({name}=...)")
        elif name in ("http_options", "base_url"):
            problems.append(f"{key}: a base URL is set on the agent's model, not on the agent")
        elif name in _OWN_FIELD:
            problems.append(f"{key} is set as the agent's {_OWN_FIELD[name]}=..., not {key}=...")
        else:
            problems.append(f"{key} is a GenerateContentConfig field: give "
                            f"generate_content_config=types.GenerateContentConfig({name}=...)")
    if problems:
        raise AgentDefinitionError(f"agent {data.get('name')!r}: " + "; ".join(problems))


def _base_url(options: Any) -> bool:
    if isinstance(options, dict):
        return bool(options.get("base_url") or options.get("baseUrl"))
    return bool(getattr(options, "base_url", None))


def _setting(config: Any, name: str) -> Any:
    return config.get(name, config.get(_camel(name))) if isinstance(config, dict) else getattr(config, name, None)


def _refuse_config_fields(agent: Any, config: Any) -> None:
    """A generate_content_config that sets what the agent or its model owns raises
    :class:`AgentDefinitionError` naming where it goes (google-adk's four refusals)."""
    if _setting(config, "tools"):
        raise AgentDefinitionError(f"agent {agent!r}: tools are given as LlmAgent(tools=[...]), not in "
                                   "generate_content_config.tools")
    if _setting(config, "system_instruction"):
        raise AgentDefinitionError(f"agent {agent!r}: the system instruction is LlmAgent(instruction=...), not "
                                   "generate_content_config.system_instruction")
    if _setting(config, "response_schema"):
        raise AgentDefinitionError(f"agent {agent!r}: the response schema is LlmAgent(output_schema=...), not "
                                   "generate_content_config.response_schema")
    if _base_url(_setting(config, "http_options")):
        raise AgentDefinitionError(f"agent {agent!r}: a base URL is set on the model or its client, not in "
                                   "generate_content_config.http_options")


class LlmAgent(AgentBase):
    """An agent whose answers come from a language model.

    ``instruction`` and ``global_instruction`` are instruction providers: a string,
    a callable(ctx), ``(module, func)`` or ``(module, func, extra_args)``; their text
    may contain ``{state_key}`` placeholders. ``global_instruction`` counts on the
    root agent only and is shared by the whole tree.

    google-adk's ``generate_content_config=`` (a ``types.GenerateContentConfig``, ours
    or google.genai's) is kept as ours and its settings become the ``generate_config``
    dict, and a ``planner``'s settings are laid over it (the planner's thinking config
    wins, as in google-adk). Any other planner (``PlanReActPlanner``, a ``BasePlanner``
    subclass) is applied by the flow on every model call, as google-adk's
    (``planners._apply``). Giving both ``generate_config`` and
    ``generate_content_config`` is an error, and so are tools, a system instruction, a
    response schema or a base URL in it (google-adk's refusals).

    ``static_instruction`` (google-adk 2.x; a string, Part, Content or list of parts) is
    sent as it is, without ``{placeholders}`` filled, in the system instruction after
    the global instruction; ``instruction`` then goes into the contents as a user
    message marked as this turn's instruction, before the turn's last run of user
    messages (the request compiler's rule). ``input_schema`` (a pydantic model class)
    is what an :class:`AgentTool` of this agent takes as its arguments.

    ``mode`` (google-adk 2.x; None, ``"chat"``, ``"task"``, ``"single_turn"`` or an
    ``AgentMode``) is how a parent LlmAgent reaches this agent: ``chat`` by
    ``transfer_to_agent`` (an LlmAgent sub-agent left at None is set to ``chat`` when
    its LlmAgent parent is built, as google-adk does); ``single_turn`` as a tool named
    after it, never a transfer target (see ``adk_actors.engine._flow``); ``task`` as
    a workflow node right after START is google-adk's task agent (it talks with the
    user until it calls ``finish_task``, whose arguments, checked against its
    ``output_schema``, any type pydantic checks, are the node's output: see
    ``adk_actors.workflow._task``); as a sub-agent of an LlmAgent it runs as ``chat``
    here (google-adk's task delegation by a parent's tool is not built). A root agent
    of ``single_turn`` is refused by the Runner. The node settings every agent has
    (``retry_config``, ``timeout``, ``state_schema``, ``wait_for_output``) are
    :class:`AgentBase`'s.
    """

    model: Any = ""
    instruction: Any = ""
    global_instruction: Any = ""
    tools: list[Any] = Field(default_factory=list)
    output_schema: Any = None
    output_key: str | None = None
    generate_config: dict[str, Any] = Field(default_factory=dict)
    generate_content_config: Any = None  # google-adk's: a types.GenerateContentConfig (kept as ours)
    static_instruction: Any = None  # google-adk 2.x: content sent as it is, first in the system instruction
    input_schema: Any = None  # a pydantic model class: the arguments of this agent as an AgentTool
    include_contents: Literal["default", "none"] = "default"
    mode: LlmAgentMode | None = None  # google-adk 2.x's delegation mode: "chat", "task" or "single_turn"
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
    code_executor: Any = None  # a BaseCodeExecutor (adk_actors.code_executors), or None
    examples: list[Example] | BaseExampleProvider | None = None  # few-shot examples for the instruction

    @model_validator(mode="before")
    @classmethod
    def _google_adk_config(cls, data: Any) -> Any:
        """google-adk's rules for generation settings, in order: a GenerateContentConfig
        field given to the agent itself is refused, naming ``generate_content_config``
        (or the agent's own field for a system instruction, a response schema, a base
        URL); a ``generate_content_config`` that sets tools, a system instruction, a
        response schema or a base URL is refused, naming where each belongs; then it is
        kept as ours (None as an empty one) and its settings become ``generate_config``
        (giving both is an error)."""
        if not isinstance(data, dict):
            return data
        _refuse_misplaced_settings(cls, data)
        if "generate_content_config" not in data:
            return data
        data = dict(data)
        config = data["generate_content_config"]
        if config is None:
            data["generate_content_config"] = GenerateContentConfig()
            return data
        _refuse_config_fields(data.get("name"), config)
        if data.get("generate_config"):
            raise AgentDefinitionError(f"agent {data.get('name')!r}: give generate_config or "
                                       "generate_content_config, not both")
        data["generate_config"] = generate_config_of(config)
        data["generate_content_config"] = ours(config, GenerateContentConfig)
        return data

    @field_validator("output_schema", mode="before")
    @classmethod
    def _schema_as_json(cls, value: Any) -> Any:
        """An ``output_schema`` given as a ``types.Schema`` (ours or google.genai's: a
        pydantic object, not a class) is kept as its JSON schema, read as any dict
        schema is (``_genai_schema.json_schema_of``)."""
        return json_schema_of(value) if isinstance(value, BaseModel) else value

    @model_validator(mode="after")
    def _check_definition(self) -> LlmAgent:
        if self.planner is not None:  # the planner's settings win, as google-adk's
            planned = self.planner.generate_config()
            if "thinking_config" in planned and "thinking_config" in self.generate_config:
                warnings.warn(f"agent {self.name!r}: both generate_content_config and the planner set a "
                              "thinking_config; the planner's is used", UserWarning, stacklevel=2)
            self.generate_config = {**self.generate_config, **planned}
        if self.static_instruction is not None:
            try:
                static_content(self.static_instruction)  # a shape it cannot take fails here
            except AgentDefinitionError as exc:
                raise AgentDefinitionError(f"agent {self.name!r}: {exc}") from None
        if self.input_schema is not None and not (isinstance(self.input_schema, type)
                                                  and issubclass(self.input_schema, BaseModel)):
            raise AgentDefinitionError(f"agent {self.name!r}: input_schema must be a pydantic model class, "
                                       f"got {self.input_schema!r}")
        for sub in self.sub_agents:  # google-adk's default for an LlmAgent reached from its parent
            if isinstance(sub, LlmAgent) and sub.mode is None:
                sub.mode = "chat"
        if any(getattr(tool, "preloads_memory", False) for tool in self.tools):  # google-adk's preload_memory tool
            self.tools = [tool for tool in self.tools if not getattr(tool, "preloads_memory", False)]
            self.preload_memory = True
        self._take_example_tools()
        if self.code_executor is not None and not (callable(getattr(self.code_executor, "execute_code", None))
                                                   and hasattr(self.code_executor, "code_block_delimiters")):
            raise AgentDefinitionError(f"agent {self.name!r}: code_executor must be a code executor "
                                       f"(adk_actors.code_executors), got {self.code_executor!r}")
        check_provider(self.instruction, f"agent {self.name!r}: instruction")
        check_provider(self.global_instruction, f"agent {self.name!r}: global_instruction")
        if self.output_schema is not None and str(self.mode or "") == "task":
            try:  # a task agent's schema is finish_task's parameters (adk_actors.workflow._task): any pydantic type
                TypeAdapter(self.output_schema).json_schema()
            except Exception as exc:
                raise AgentDefinitionError(f"agent {self.name!r}: output_schema of a task agent must be a type "
                                           f"pydantic checks values with: {exc}") from exc
        elif self.output_schema is not None:
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
