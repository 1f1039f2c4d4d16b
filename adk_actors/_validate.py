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

:func:`check_input` also applies two limits of one request, the same on every host
(:func:`limit_problem`): the state it sets at once (a new session's ``state``, a run's
or an update's ``state_delta``) is at most ``MAX_STATE_BYTES`` of JSON text, and a
run's message has at most ``MAX_MESSAGE_PARTS`` parts. Over either, the request is
refused ``limit_exceeded`` (``LimitExceededError``; HTTP 413), naming the limit; the
message's own size is ``Limits.max_message_bytes``, checked by the session.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from typing import Any

from pydantic import BaseModel, PydanticSchemaGenerationError, TypeAdapter, ValidationError

from supervision import BadRequest

from ._names import escaped, name_problem

__all__ = ["INVALID_REQUEST", "LIMIT_EXCEEDED", "MAX_JSON_DEPTH", "MAX_MESSAGE_PARTS", "MAX_STATE_BYTES", "NAME_FIELDS",
           "check_fields", "check_input", "check_message", "invalid", "limit_problem", "value_problem"]

INVALID_REQUEST = "invalid_request"
LIMIT_EXCEEDED = "limit_exceeded"

#: The deepest nesting any host accepts (``[limits] max_json_depth`` may not be set
#: higher): the store reads back what is nested this deep inside its events (pydantic's
#: JSON reader stops at 200 levels, the event's own structure included).
MAX_JSON_DEPTH = 100

#: The most state one request may set at once (a new session's ``state``, a run's or an
#: update's ``state_delta``): bytes of its JSON text (UTF-8). A session's whole state
#: is read, copied to each run and written back with every change: one caller's 50 MB
#: value would make every later turn of that session (and its user's session list)
#: slow, for good.
MAX_STATE_BYTES = 1024 * 1024
#: The most parts a caller's message (a run's ``new_message``) may have: each part is
#: kept, and sent to the model again, on every later turn of the session (100,000
#: empty parts are only 300 kB of JSON, under ``Limits.max_message_bytes``).
MAX_MESSAGE_PARTS = 1000
#: The request fields that set state (``MAX_STATE_BYTES``), and the one that is a
#: caller's message (``MAX_MESSAGE_PARTS``).
_STATE_FIELDS = ("state", "state_delta")
_MESSAGE_FIELD = "new_message"

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
        if isinstance(checked, BaseModel) and checked is not value:  # a dict, or a model of another library
            raise invalid(f"{type(request).__name__}.{name}: must be {_class_name(type(checked), type(value))}, "
                          f"got {_class_name(type(value), type(checked))}")


def _class_name(cls: type, other: type) -> str:
    """``cls`` as an error names it: ``a Content``, or with its module when ``other``
    has the same name (``adk_actors.types.Content``, ``google.genai.types.Content``)."""
    if cls.__name__ != other.__name__:
        return f"a {cls.__name__}"
    module = cls.__module__
    if module.startswith("adk_actors."):
        module = "adk_actors.types"  # where a user imports ours from
    return f"{module}.{cls.__qualname__}"


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
    than ``max_depth``. The first problem found is named. Then the limits of one
    request (:func:`limit_problem`): over one, ``BadRequest`` with code
    ``limit_exceeded``, naming it."""
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
    for item in dataclasses.fields(request):
        problem = limit_problem(item.name, getattr(request, item.name, None))
        if problem is not None:
            raise BadRequest(f"{type(request).__name__}.{problem}", code=LIMIT_EXCEEDED)


def limit_problem(field: str, value: Any) -> str | None:
    """Why request field ``field`` (snake_case) is over a limit of one request, as
    ``"<field>: ..., the limit is N"``, or None: a ``state`` or ``state_delta`` dict
    whose JSON text is over ``MAX_STATE_BYTES`` (anything not JSON is counted as its
    ``str``), a ``new_message`` (a Content, or its JSON as a dict) of more than
    ``MAX_MESSAGE_PARTS`` parts. Run after :func:`value_problem` passed (its text
    encodes, its nesting is within what ``json`` writes)."""
    if field in _STATE_FIELDS and isinstance(value, dict) and value:
        size = _json_bytes(value, MAX_STATE_BYTES)
        if size > MAX_STATE_BYTES:
            return f"{field}: the state given has over {MAX_STATE_BYTES} bytes as JSON; the limit is {MAX_STATE_BYTES}"
    if field == _MESSAGE_FIELD:
        parts = value.get("parts") if isinstance(value, dict) else getattr(value, "parts", None)
        if isinstance(parts, list) and len(parts) > MAX_MESSAGE_PARTS:
            return f"{field}: the message has {len(parts)} parts; the limit is {MAX_MESSAGE_PARTS}"
    return None


def _json_bytes(value: dict[str, Any], limit: int) -> int:
    """The size of ``value``'s JSON text in UTF-8, or a number over ``limit`` as soon as
    it is over (counted key by key: a small state costs one small encoding)."""
    size = 2
    for key, item in value.items():
        try:
            text = json.dumps({key: item}, ensure_ascii=False, default=str)
        except (ValueError, RecursionError):  # not JSON (value_problem says why)
            continue
        size += len(text.encode("utf-8", "surrogatepass"))
        if size > limit:
            break
    return size


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
