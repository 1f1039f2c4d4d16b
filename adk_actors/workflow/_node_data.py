"""What a node's google-adk settings do to the data it takes and gives, and its
confirmation gate (google-adk 2.13's ``input_schema``, ``output_schema`` and a
function node's ``require_confirmation``; see ``_nodes``).

A schema (``input_schema``, ``output_schema``) is a pydantic model class, a type or
generic alias (``list[Item]``, ``str``), or a JSON schema (a dict, or a genai
``Schema``) which is kept and never enforced. :func:`validate_node_data` checks one
value against it, in order: no value or no schema, or a JSON schema: the value as it
is; a Content (a message): its text, for ``str`` (or a union of ``str`` and None),
else its text parsed as JSON (its text when it is not JSON; the Content itself for a
schema that takes one), then validated; any other value validated. Validated means
pydantic's ``TypeAdapter(schema).validate_python`` (coercing, e.g. a dict to the
model), the result made plain: a model as its ``model_dump(exclude_none=True)``, in
lists and dicts too. A value the schema refuses raises pydantic's ValidationError.

A function node's confirmation gate: its request is a :class:`RequestInput` of id
``wf_tool_confirmation:<node path>``, message ``Please approve or reject the tool
call <name>().``, payload ``{tool_name, args}`` and response schema
:class:`ToolConfirmation`; the answer (in ``ctx.resume_inputs`` under that id) is
read as a ToolConfirmation (a malformed one: :class:`WorkflowDataError`).
"""

from __future__ import annotations

import functools
import inspect
import json
import typing
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Iterator
from types import UnionType
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    PydanticUserError,
    TypeAdapter,
    ValidationError,
    create_model,
)

from .._types import Content, Event
from ..events.request_input import RequestInput
from ..tools.tool_confirmation import ToolConfirmation
from ._errors import WorkflowDataError

__all__ = ["REJECTED", "adapter", "confirmation_answer", "confirmation_interrupt_id", "confirmation_request",
           "inferred_schemas", "is_json_schema", "needs_confirmation", "schema_setting", "signature_schemas",
           "validate_node_data"]

#: a rejected confirmation's output (google-adk's), never checked against the output schema
REJECTED: dict[str, Any] = {"error": "This tool call is rejected."}
_GENERATORS = (Generator, AsyncGenerator, Iterator, AsyncIterator)
_CONTROL = (Content, Event, RequestInput)


def is_json_schema(schema: Any) -> bool:
    """Whether ``schema`` is a JSON schema (a dict, or a genai ``Schema``): kept, never
    enforced."""
    return isinstance(schema, dict) or (isinstance(schema, BaseModel) and type(schema).__name__ == "Schema")


def schema_setting(value: Any) -> Any:
    """``value`` when it may be a schema setting: None, a type, a generic alias or union
    of types, or a JSON schema (a dict, a genai Schema); anything else: ValueError."""
    if value is None or isinstance(value, type) or is_json_schema(value) or typing.get_origin(value) is not None:
        return value
    raise ValueError(f"a schema is a type (a pydantic model class), a generic alias such as list[str], or a "
                     f"JSON schema dict; got {type(value).__name__} {value!r}")


def _bare(annotation: Any) -> Any:
    return typing.get_args(annotation)[0] if typing.get_origin(annotation) is Annotated else annotation


def _union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, UnionType)


def _wants_text(annotation: Any) -> bool:
    annotation = _bare(annotation)
    if annotation is str:
        return True
    if _union(annotation):
        members = [_bare(a) for a in typing.get_args(annotation)]
        return any(_wants_text(a) for a in members) and all(
            _wants_text(a) or a is type(None) or (isinstance(a, type) and issubclass(a, Content)) for a in members)
    return False


def _takes_content(annotation: Any) -> bool:
    annotation = _bare(annotation)
    if annotation in (Any, object) or (isinstance(annotation, type) and issubclass(annotation, Content)):
        return True
    return _union(annotation) and any(_takes_content(a) for a in typing.get_args(annotation))


def _text(content: Content) -> str:
    return "".join(part.text or "" for part in content.parts if not getattr(part, "thought", False))


def content_payload(content: Content, annotation: Any) -> Any:
    """What a Content is to a value of ``annotation``: its text for a str, itself for a
    type that takes a Content, else its text parsed as JSON (the text when it is not)."""
    if _wants_text(annotation):
        return _text(content)
    if _takes_content(annotation):
        return content
    text = _text(content)
    try:
        return json.loads(text)
    except ValueError:
        return text


#: how many TypeAdapters :func:`adapter` keeps (the least recently used goes first)
ADAPTERS_KEPT = 1024


@functools.lru_cache(maxsize=ADAPTERS_KEPT)
def _kept_adapter(hint: Any, text: str) -> TypeAdapter[Any]:
    return TypeAdapter(hint)


def adapter(hint: Any) -> TypeAdapter[Any]:
    """pydantic's ``TypeAdapter`` of ``hint``, built the first time a hint is asked for
    and kept, so that a node's parameters and schemas are not compiled again at every
    run (kept by the hint and its text: ``int | float`` equals ``float | int``, but a
    union is tried in its order); a hint that cannot be a dict key gets a new adapter
    each time. What building it raises goes through."""
    try:
        hash(hint)
    except TypeError:  # unhashable (an Annotated with a dict in it, ...)
        return TypeAdapter(hint)
    return _kept_adapter(hint, repr(hint))


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(exclude_none=True)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def validate_node_data(schema: Any, data: Any) -> Any:
    """``data`` checked against ``schema`` (see the module); pydantic's ValidationError
    when it does not fit."""
    if data is None or schema is None or is_json_schema(schema):
        return data
    if isinstance(data, Content):
        payload = content_payload(data, schema)
        if payload is not data and schema is str:
            return payload
        data = payload
    elif isinstance(data, str) and schema is str:
        return data
    return _plain(adapter(schema).validate_python(data))


def inferred_schemas(hints: dict[str, Any]) -> tuple[Any, Any]:
    """A state-bound function node's (input, output) schemas from its type hints, as
    google-adk infers them: the ``node_input`` parameter's model class; the return's
    (a generator's item type) model class, unless a Content, Event or RequestInput.
    None where the hint is not a model class."""
    returned = hints.get("return")
    if typing.get_origin(returned) in _GENERATORS:
        returned = (typing.get_args(returned) or (None,))[0]
    output = returned if (inspect.isclass(returned) and issubclass(returned, BaseModel)
                          and not issubclass(returned, _CONTROL)) else None
    given = hints.get("node_input")
    return (given if inspect.isclass(given) and issubclass(given, BaseModel) else None), output


_PARAMETERS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY,
               inspect.Parameter.POSITIONAL_ONLY)


def _json_schema(annotation: Any) -> dict[str, Any] | None:
    try:
        try:
            adapter: TypeAdapter[Any] = TypeAdapter(annotation, config=ConfigDict(arbitrary_types_allowed=True))
        except PydanticUserError:  # a model class takes no config
            adapter = TypeAdapter(annotation)
        return adapter.json_schema()
    except Exception:
        return None


def signature_schemas(func: Callable[..., Any], signature: inspect.Signature,
                      hints: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """An input-bound function node's (input, output) schemas, as google-adk infers
    them: JSON schemas, kept and never enforced. The input: a model named
    ``<function>Params`` of its named parameters but ``ctx`` (each its hint, Any when
    it has none; its default, or required); None when it has none. The output: its
    return hint's (a generator's item type); None when it has none or it makes no
    schema."""
    fields: dict[str, Any] = {}
    for name, parameter in signature.parameters.items():
        if name == "ctx" or parameter.kind not in _PARAMETERS:
            continue
        annotation = hints.get(name, Any if parameter.annotation is inspect.Parameter.empty else parameter.annotation)
        fields[name] = (annotation, ... if parameter.default is inspect.Parameter.empty else parameter.default)
    given = None
    if fields:
        try:
            given = create_model(f"{getattr(func, '__name__', 'function')}Params", **fields).model_json_schema()
        except Exception:
            given = None
    if signature.return_annotation is inspect.Parameter.empty:
        return given, None
    returned = hints.get("return", signature.return_annotation)
    if typing.get_origin(returned) in _GENERATORS:
        returned = (typing.get_args(returned) or (Any,))[0]
    return given, _json_schema(returned)


def confirmation_interrupt_id(node_path: str) -> str:
    """The id of the confirmation request of the node run at ``node_path``."""
    return f"wf_tool_confirmation:{node_path}"


def confirmation_request(node_path: str, name: str, args: dict[str, Any]) -> RequestInput:
    """The request asking to approve or reject the run of node ``name`` with ``args``."""
    payload = {"tool_name": name, "args": TypeAdapter(Any).dump_python(args)}
    return RequestInput(interrupt_id=confirmation_interrupt_id(node_path),
                        message=f"Please approve or reject the tool call {name}().", payload=payload,
                        response_schema=ToolConfirmation)


def confirmation_answer(resume_inputs: dict[str, Any], node_path: str) -> ToolConfirmation | None:
    """The answer to the node run's confirmation request, if there is one (its fields
    left out, None, take the defaults); :class:`WorkflowDataError` when it is not a
    ToolConfirmation."""
    answer = resume_inputs.get(confirmation_interrupt_id(node_path))
    if answer is None or isinstance(answer, ToolConfirmation):
        return answer
    if not isinstance(answer, dict):
        raise WorkflowDataError(f"A tool confirmation response must be a ToolConfirmation payload, but got "
                                f"{type(answer).__name__}.")
    try:
        return ToolConfirmation.from_response_dict({k: v for k, v in answer.items() if v is not None})
    except (ValidationError, ValueError) as exc:
        raise WorkflowDataError(f"Invalid tool confirmation response: {answer!r}") from exc


async def needs_confirmation(setting: bool | Callable[..., Any], ctx: Any, node_input: Any,
                             bound: dict[str, Any]) -> bool:
    """Whether a run with the ``bound`` arguments asks first: ``setting`` itself, or the
    truth of what the predicate returns (awaited when it is a coroutine), called with
    those of its parameters it names among: the bound arguments, ``ctx`` (or
    ``tool_context``), ``node_input``, then values of the session state (a predicate
    taking ``**kwargs`` gets all of them)."""
    if not callable(setting):
        return bool(setting)
    try:
        parameters = inspect.signature(setting).parameters
    except (TypeError, ValueError):
        parameters = None
    arguments = dict(bound)
    if parameters is not None:
        context = "ctx" if "ctx" in parameters else "tool_context"
        if context in parameters:
            arguments[context] = ctx
        if "node_input" in parameters and "node_input" not in arguments:
            arguments["node_input"] = node_input
        for name in parameters:
            if name not in arguments and name != context and name in ctx.state:
                arguments[name] = ctx.state[name]
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
            arguments = {key: value for key, value in arguments.items() if key in parameters}
    result = setting(**arguments)
    if inspect.isawaitable(result):
        result = await result
    return bool(result)
