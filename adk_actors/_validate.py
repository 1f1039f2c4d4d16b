"""The rules for malformed requests: a request's fields must have their declared types,
its names must follow the name grammar (``_names``), and every value a caller gives
must be storable: text that can be encoded (no lone surrogate) nested no deeper than
a limit.

Every actor of adk-actors answers a Call whose request is a dataclass with a wrong
field type (a ``state`` that is not a dict, an ``id`` that is a list, a ``limit``
that is a string, a ``new_message`` that is not a ``Content``) with
``ErrorReply(code="invalid_request")`` naming the field, and keeps running: the
check runs in :meth:`supervision.GenServer.check_request`, before any handler.

Types are checked by pydantic in strict mode (no coercion: ``"3"`` is not an int,
``True`` is not an int), against the dataclass's own annotations; a pydantic model
must already be an instance of its class. An annotation pydantic cannot check
(an actor address: ``Any``) is not checked.

:func:`check_input` is the other half, run by the same actors after
:func:`check_fields` and by the HTTP front door on what it parses: the fields named
in ``NAME_FIELDS`` must be good names, and every other value (state, state deltas,
metadata, a message's parts and their tool arguments) must be a JSON value whose
text encodes as UTF-8 and whose nesting is at most ``max_depth`` objects or arrays
(``{}`` is 1 deep, ``{"a": []}`` 2). What breaks a rule is refused whole, before
anything of it is stored, and the error says where (``state_delta.a.b``).
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from pydantic import BaseModel, PydanticSchemaGenerationError, TypeAdapter, ValidationError

from supervision import BadRequest

from ._names import escaped, name_problem

__all__ = ["INVALID_REQUEST", "MAX_JSON_DEPTH", "NAME_FIELDS", "check_fields", "check_input", "check_message",
           "invalid", "value_problem"]

INVALID_REQUEST = "invalid_request"

#: The deepest nesting any host accepts (``[limits] max_json_depth`` may not be set
#: higher): the store reads back what is nested this deep inside its events (pydantic's
#: JSON reader stops at 200 levels, the event's own structure included).
MAX_JSON_DEPTH = 100

#: Request fields that hold names (``_names``), and what each is called in an error.
NAME_FIELDS = {"app_name": "app name", "user_id": "user id", "session_id": "session id"}

_adapters: dict[type, list[tuple[str, TypeAdapter[Any]]]] = {}


def invalid(detail: str) -> BadRequest:
    """The error an actor answers a malformed request with."""
    return BadRequest(detail, code=INVALID_REQUEST)


def check_fields(request: Any) -> None:
    """Raise :func:`invalid` if a field of dataclass ``request`` does not have its
    declared type (the first such field is named); anything else passes."""
    if not dataclasses.is_dataclass(request) or isinstance(request, type):
        return
    for name, adapter in _field_adapters(type(request)):
        value = getattr(request, name, None)
        try:
            checked = adapter.validate_python(value, strict=True)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in (name, *error["loc"]))
            raise invalid(f"{type(request).__name__}.{where}: {error['msg']}") from None
        if isinstance(checked, BaseModel) and checked is not value:  # a dict that would make one
            raise invalid(f"{type(request).__name__}.{name}: must be a {type(checked).__name__}, "
                          f"got {type(value).__name__}")


def _field_adapters(cls: type) -> list[tuple[str, TypeAdapter[Any]]]:
    known = _adapters.get(cls)
    if known is None:
        hints = typing.get_type_hints(cls)
        known = []
        for item in dataclasses.fields(cls):
            hint = hints.get(item.name, Any)
            if hint is Any:
                continue
            try:
                known.append((item.name, TypeAdapter(hint)))
            except (PydanticSchemaGenerationError, TypeError):
                continue
        _adapters[cls] = known
    return known


def check_message(request: Any) -> None:
    """Both rules, for a service actor's ``check_request``: the fields' types, then the
    input rules with the deepest nesting any host accepts (``MAX_JSON_DEPTH``: what
    can be read back; the front door and the session partitions apply the host's own
    ``max_json_depth``)."""
    check_fields(request)
    check_input(request, MAX_JSON_DEPTH)


def check_input(request: Any, max_depth: int) -> None:
    """Raise :func:`invalid` if a field of dataclass ``request`` breaks the input rules
    (see the module): a name field (``NAME_FIELDS``; None passes) outside the name
    grammar, or any other field holding text that cannot be encoded or nesting deeper
    than ``max_depth``. The first problem found is named."""
    if not dataclasses.is_dataclass(request) or isinstance(request, type):
        return
    for item in dataclasses.fields(request):
        value = getattr(request, item.name, None)
        if item.name in NAME_FIELDS and value is not None:
            problem = name_problem(value, NAME_FIELDS[item.name])
        else:
            problem = value_problem(value, max_depth, item.name)
        if problem is not None:
            raise invalid(f"{type(request).__name__}.{problem}" if item.name not in NAME_FIELDS else problem)


def value_problem(value: Any, max_depth: int, where: str = "value") -> str | None:
    """Why ``value`` (JSON-like: dicts, lists, text, numbers; pydantic models and
    dataclasses are walked as objects) could not be stored, as ``"<where>.<path>:
    <reason>"``, or None. Walks at most ``max_depth`` levels deep."""
    found = _walk(value, 0, max_depth)
    if found is None:
        return None
    path, reason = found
    shown = path if len(path) <= 6 else [*path[:6], "..."]
    return ".".join([where, *shown]) + ": " + reason


def _walk(value: Any, level: int, max_depth: int) -> tuple[list[str], str] | None:
    """(path, reason) of the first problem in ``value``, which ``level`` containers
    enclose; None when there is none."""
    if isinstance(value, str):
        return None if value.isascii() or _encodes(value) else ([], _SURROGATE)
    if isinstance(value, (int, float, bool, bytes, type(None))):
        return None
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, (list, tuple)):
        items = enumerate(value)
    elif isinstance(value, BaseModel):
        items = [*vars(value).items(), *(value.__pydantic_extra__ or {}).items()]
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = [(f.name, getattr(value, f.name, None)) for f in dataclasses.fields(value)]
    else:
        return None  # not a value a caller gives as JSON (an address, an enum ...)
    if level >= max_depth:
        return [], f"nested deeper than {max_depth} levels"
    for key, item in items:
        if isinstance(key, str) and not (key.isascii() or _encodes(key)):
            return [escaped(key)], "its key is " + _SURROGATE
        found = _walk(item, level + 1, max_depth)
        if found is not None:
            return [escaped(str(key)), *found[0]], found[1]
    return None


_SURROGATE = "text that is not valid Unicode (a lone surrogate such as \\ud800): it cannot be encoded as UTF-8"


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
