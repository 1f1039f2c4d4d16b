"""One rule for malformed requests: a request's fields must have their declared types.

Every actor of adk-actors answers a Call whose request is a dataclass with a wrong
field type (a ``state`` that is not a dict, an ``id`` that is a list, a ``limit``
that is a string, a ``new_message`` that is not a ``Content``) with
``ErrorReply(code="invalid_request")`` naming the field, and keeps running: the
check runs in :meth:`supervision.GenServer.check_request`, before any handler.

Types are checked by pydantic in strict mode (no coercion: ``"3"`` is not an int,
``True`` is not an int), against the dataclass's own annotations; a pydantic model
must already be an instance of its class. An annotation pydantic cannot check
(an actor address: ``Any``) is not checked.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from pydantic import BaseModel, PydanticSchemaGenerationError, TypeAdapter, ValidationError

from supervision import BadRequest

__all__ = ["INVALID_REQUEST", "check_fields", "invalid"]

INVALID_REQUEST = "invalid_request"

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
