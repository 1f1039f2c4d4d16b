"""``LlmAgent``: the definition of a model-driven agent, as plain validated data.

Everything is checked when the agent is constructed (names, the sub-agent tree,
instruction providers, the output schema, tools, the compressor), so a bad definition
fails at import time, never at the first request.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from .._exceptions import AgentDefinitionError
from .._schema import output_schema_json
from .._tree import check_agent_name, validate_tree
from .._types import FunctionDeclaration
from ..compiler._compressors import Compressor
from ..compiler._providers import check_provider

__all__ = ["LlmAgent"]


def _definition_error(exc: ValidationError, name: Any) -> AgentDefinitionError:
    for error in exc.errors():
        cause = (error.get("ctx") or {}).get("error")
        if isinstance(cause, AgentDefinitionError):
            return cause
    problems = "; ".join(
        f"{'.'.join(str(p) for p in error['loc']) or 'agent'}: {error['msg']}" for error in exc.errors()
    )
    return AgentDefinitionError(f"invalid agent {name!r}: {problems}")


def tool_name(tool: Any) -> str:
    if isinstance(tool, FunctionDeclaration):
        return tool.name
    name = getattr(tool, "name", None)
    if isinstance(name, str):
        return name
    raise AgentDefinitionError(f"{tool!r} is not a tool (it needs a name and a declaration())")


class LlmAgent(BaseModel):
    """An agent whose answers come from a language model.

    ``instruction`` and ``global_instruction`` are instruction providers: a string,
    a callable(ctx), ``(module, func)`` or ``(module, func, extra_args)``; their text
    may contain ``{state_key}`` placeholders. ``global_instruction`` counts on the
    root agent only and is shared by the whole tree.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid", validate_assignment=False)

    name: str
    model: str = ""
    instruction: Any = ""
    description: str = ""
    global_instruction: Any = ""
    tools: list[Any] = Field(default_factory=list)
    sub_agents: list[Any] = Field(default_factory=list)
    output_schema: Any = None
    output_key: str | None = None
    generate_config: dict[str, Any] = Field(default_factory=dict)
    include_contents: Literal["default", "none"] = "default"
    context_compressor: Any = None
    disallow_transfer_to_parent: bool = False
    disallow_transfer_to_peers: bool = False
    max_iterations: int = Field(default=25, ge=1)
    before_agent_callback: Any = None
    after_agent_callback: Any = None
    before_model_callback: Any = None
    after_model_callback: Any = None
    on_model_error_callback: Any = None
    before_tool_callback: Any = None
    after_tool_callback: Any = None
    on_tool_error_callback: Any = None

    _parent: Any = PrivateAttr(default=None)

    def __init__(self, **data: Any) -> None:
        """Validate the definition; any problem raises :class:`AgentDefinitionError`."""
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _definition_error(exc, data.get("name")) from None

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        return check_agent_name(value)

    @model_validator(mode="after")
    def _check_definition(self) -> LlmAgent:
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
            if not isinstance(tool, FunctionDeclaration) and not callable(getattr(tool, "declaration", None)):
                raise AgentDefinitionError(
                    f"agent {self.name!r}: {tool!r} is not a tool; use FunctionTool(func) or a FunctionDeclaration"
                )
            name = tool_name(tool)
            if name in names:
                raise AgentDefinitionError(f"agent {self.name!r}: two tools are named {name!r}")
            names.add(name)
        validate_tree(self)
        for child in self.sub_agents:
            current = getattr(child, "_parent", None)
            if current is not None and current is not self:
                raise AgentDefinitionError(
                    f"agent {child.name!r} already has parent {current.name!r}; an agent has at most one parent"
                )
            try:
                child._parent = self
            except (AttributeError, TypeError, ValueError):
                pass  # a custom agent that refuses attributes: walking the tree still finds its parent
        return self

    @property
    def parent_agent(self) -> Any:
        return self._parent

    def find_agent(self, name: str) -> Any | None:
        from .._tree import find_agent

        return find_agent(self, name)
