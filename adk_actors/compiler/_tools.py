"""The tools a request declares, in google-adk's order: ``set_model_response`` when
needed, ``transfer_to_agent`` when there are targets, the agent's own, the caller's
resolved toolsets."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, create_model

from .._callables import describe_function, is_plain_function
from .._exceptions import CompileError
from .._schema import list_item_model, output_schema_json
from .._tree import inherited_model
from .._types import FunctionDeclaration, model_name
from ._context import CompileContext
from ._targets import root_of, transfer_targets

__all__ = [
    "SET_MODEL_RESPONSE",
    "SET_MODEL_RESPONSE_WORDS",
    "TRANSFER_TO_AGENT",
    "canonical_tools",
    "declaration_of",
    "effective_tools",
    "has_own_tools",
    "model_combines_schema_and_tools",
    "response_tool_declaration",
    "response_tool_parameters",
    "transfer_declaration",
    "uses_response_tool",
]

TRANSFER_TO_AGENT = "transfer_to_agent"
SET_MODEL_RESPONSE = "set_model_response"


def model_combines_schema_and_tools(model: str) -> bool:
    """Whether a model is sent a response schema and function declarations together.

    None here: google-adk 2.13 pairs them only for Gemini on Vertex AI, which is no
    provider here (the Gemini API refuses a JSON response type next to function
    calling before Gemini 3); for every model the structured answer is carried by a
    ``set_model_response`` tool instead, as google-adk does on the Gemini API.
    """
    return False


def declaration_of(tool: Any) -> FunctionDeclaration:
    """A tool's declaration: a FunctionDeclaration as is, a tool's ``declaration()``, or
    a plain function's derived from its signature. A CompileError when it gives none."""
    declared = _declared(tool)
    if declared is None:
        raise CompileError(f"{tool!r} gives no FunctionDeclaration")
    return declared


def _declared(tool: Any) -> FunctionDeclaration | None:
    """As :func:`declaration_of`, but None for a tool whose ``declaration()`` is None
    (a google-adk ``BaseTool`` whose ``_get_declaration`` declares nothing: the model is
    not told of it). Anything else that is not a declaration is a CompileError."""
    if isinstance(tool, FunctionDeclaration):
        return tool
    if is_plain_function(tool):
        return describe_function(tool).declaration
    declare = getattr(tool, "declaration", None)
    if callable(declare):
        result = declare()
        if result is None or isinstance(result, FunctionDeclaration):
            return result
    raise CompileError(f"{tool!r} gives no FunctionDeclaration")


def canonical_tools(agent: Any, root: Any) -> list[Any]:
    """The agent's tools as a step uses them: ``agent.tools``, except that in an agent
    with more than one tool or with transfer targets, a tool with an
    ``in_multi_tool_agent(model)`` hook (``GoogleSearchTool``) is replaced by what the
    hook gives for the agent's model (google-adk's ``bypass_multi_tools_limit``)."""
    tools = list(getattr(agent, "tools", ()) or ())
    if not any(callable(getattr(t, "in_multi_tool_agent", None)) for t in tools):
        return tools
    top = root_of(agent, root)
    if len(tools) < 2 and not transfer_targets(agent, top):
        return tools
    model = inherited_model(agent, top)
    return [t.in_multi_tool_agent(model) if callable(getattr(t, "in_multi_tool_agent", None)) else t for t in tools]


def is_toolset(tool: Any) -> bool:
    """A toolset provides tools per request; the caller resolves it into ``extra_tools``."""
    return callable(getattr(tool, "get_tools", None)) and not callable(getattr(tool, "declaration", None))


def has_own_tools(agent: Any, ctx: CompileContext) -> bool:
    own = [t for t in getattr(agent, "tools", ()) or () if not is_toolset(t)]
    return bool(own) or bool(ctx.extra_tools)


def uses_response_tool(agent: Any, ctx: CompileContext) -> bool:
    """True when the structured answer must come through ``set_model_response``."""
    return (
        getattr(agent, "output_schema", None) is not None
        and has_own_tools(agent, ctx)
        and not model_combines_schema_and_tools(model_name(inherited_model(agent, ctx.root_agent or agent)))
    )


def transfer_declaration(target_names: list[str]) -> FunctionDeclaration:
    """``transfer_to_agent``'s declaration offering ``target_names``, in google-adk
    2.13's shape: a plain JSON schema under ``parameters_json_schema`` (pydantic's schema
    of its function's parameters, titles kept: ``transfer_to_agentParams``, ``agent_name``
    titled ``Agent Name``, its ``enum`` the names in the order given, and required), with
    our short description (the seeds' wording, not google-adk's docstring). A new object
    each time: a caller may change it."""
    return FunctionDeclaration(
        name=TRANSFER_TO_AGENT,
        description="Hand the conversation to another agent that is better suited to answer it.",
        parameters_json_schema={
            "properties": {"agent_name": {"title": "Agent Name", "type": "string", "enum": list(target_names)}},
            "required": ["agent_name"],
            "title": f"{TRANSFER_TO_AGENT}Params",
            "type": "object",
        },
    )


#: our words for ``set_model_response`` (google-adk's are its function's docstring)
SET_MODEL_RESPONSE_WORDS = "Give your final answer, structured as the schema requires."


def response_tool_parameters(output_schema: Any) -> dict[str, Any]:
    """``set_model_response``'s parameters as google-adk 2.13 declares them: pydantic's
    JSON schema of a model named ``set_model_responseParams``, titles kept.

    For a pydantic model class its fields are that model's, each with its type and its
    default (a default factory is called; a required field has none), so a field's
    constraints and aliases are not declared; then each field's description (and those
    of nested properties and list items) is put back from the class's own schema. For a
    JSON-schema dict the one field is ``response``, any JSON object, which the model's
    answer is given under. Anything else raises AgentDefinitionError (as
    :func:`output_schema_json` does)."""
    if isinstance(output_schema, type) and issubclass(output_schema, BaseModel):
        fields: dict[str, Any] = {
            name: (info.annotation, ... if info.is_required() else info.get_default(call_default_factory=True))
            for name, info in output_schema.model_fields.items()
        }
        params: type[BaseModel] = create_model(f"{SET_MODEL_RESPONSE}Params", **fields)
        schema: dict[str, Any] = params.model_json_schema()
        _copy_descriptions(output_schema.model_json_schema(), schema)
        return schema
    output_schema_json(output_schema)  # refuses what is no output schema
    item = list_item_model(output_schema)
    if item is not None:  # list[Model]: one ``items`` field, the list
        params = create_model(f"{SET_MODEL_RESPONSE}Params", items=(list[item], ...))  # type: ignore[valid-type]
    elif isinstance(output_schema, dict):
        params = create_model(f"{SET_MODEL_RESPONSE}Params", response=(dict, ...))
    else:  # another typing type: one ``response`` field of that type
        params = create_model(f"{SET_MODEL_RESPONSE}Params", response=(output_schema, ...))
    wrapped: dict[str, Any] = params.model_json_schema()
    return wrapped


def _copy_descriptions(source: dict[str, Any], target: dict[str, Any]) -> None:
    """Puts each non-empty ``description`` of ``source``'s properties and list items on
    the same place of ``target``, walking both down together; a place ``target`` lacks
    is skipped."""
    pairs: list[tuple[Any, Any]] = []
    for name, prop in (source.get("properties") or {}).items():
        pairs.append((prop, (target.get("properties") or {}).get(name)))
    pairs.append((source.get("items"), target.get("items")))
    for here, there in pairs:
        if not isinstance(here, dict) or not isinstance(there, dict):
            continue
        if isinstance(here.get("description"), str) and here["description"]:
            there["description"] = here["description"]
        _copy_descriptions(here, there)


def response_tool_declaration(output_schema: Any) -> FunctionDeclaration:
    """``set_model_response``'s declaration for ``output_schema``: its parameters under
    ``parameters_json_schema`` (see :func:`response_tool_parameters`), our own short
    description. A new object each time."""
    return FunctionDeclaration(name=SET_MODEL_RESPONSE, description=SET_MODEL_RESPONSE_WORDS,
                               parameters_json_schema=response_tool_parameters(output_schema))


def effective_tools(agent: Any, ctx: CompileContext) -> list[FunctionDeclaration]:
    """The declarations of a request, in google-adk 2.13's order (its flow adds its own
    tools before the agent's): ``set_model_response`` when the structured answer comes
    through it (see :func:`response_tool_declaration`), then ``transfer_to_agent`` when the agent has transfer targets (see
    :func:`transfer_declaration`), then the agent's own tools in their order, then the
    caller's resolved toolsets' (``ctx.extra_tools``); a tool whose ``declaration()`` is
    None is left out. A duplicate name is a CompileError, as is a tool that gives no
    declaration."""
    tools = [t for t in canonical_tools(agent, ctx.root_agent) if not is_toolset(t)] + list(ctx.extra_tools)
    declarations: list[FunctionDeclaration] = []
    if uses_response_tool(agent, ctx):
        declarations.append(response_tool_declaration(agent.output_schema))
    targets = transfer_targets(agent, root_of(agent, ctx.root_agent))
    if targets:
        declarations.append(transfer_declaration([t.name for t in targets]))
    declarations.extend(d for d in map(_declared, tools) if d is not None)
    seen: set[str] = set()
    for declaration in declarations:
        if declaration.name in seen:
            raise CompileError(f"agent {agent.name!r}: two tools are named {declaration.name!r}")
        seen.add(declaration.name)
    return declarations
