"""google.genai's ``Schema`` and ``Type``: a tool's parameters or an agent's output
schema written as google-genai objects (``types.Schema(type=types.Type.OBJECT,
properties={...}, required=[...])``), as google-adk's docs write a custom tool's
declaration.

Our :class:`Schema` has google.genai's fields, names and defaults, and is mutable as
theirs. Where a schema is taken (``FunctionDeclaration(parameters=...)``,
``LlmAgent(output_schema=..., input_schema=...)``), :func:`json_schema_of` turns it,
ours or google.genai's (any pydantic object with Schema's fields), into the JSON schema
every provider here reads: in order, the fields left unset are left out, each name
becomes its JSON-schema keyword (``min_items`` -> ``minItems``, ``any_of`` -> ``anyOf``,
``defs`` -> ``$defs``, ``ref`` -> ``$ref``), the type is written in lower case
(``TYPE_UNSPECIFIED`` left out), ``nullable=True`` adds ``"null"`` to the type (or to
``anyOf`` when there is no type), and nested schemas (``properties``, ``items``,
``any_of``, ``defs``, ``additional_properties``) are turned the same way. A value
that is not a schema raises ``TypeError``.
"""

from __future__ import annotations

import enum
from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ["Schema", "Type", "json_schema_of"]


class Type(enum.StrEnum):
    """google.genai's ``Type``: the kind of value a schema describes."""

    TYPE_UNSPECIFIED = "TYPE_UNSPECIFIED"
    STRING = "STRING"
    NUMBER = "NUMBER"
    INTEGER = "INTEGER"
    BOOLEAN = "BOOLEAN"
    ARRAY = "ARRAY"
    OBJECT = "OBJECT"
    NULL = "NULL"


class Schema(BaseModel):
    """google.genai's ``Schema`` (its fields, all optional; unknown ones refused)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    additional_properties: Any = None
    defs: dict[str, Schema] | None = None
    ref: str | None = None
    any_of: list[Schema] | None = None
    default: Any = None
    description: str | None = None
    enum: list[str] | None = None
    example: Any = None
    format: str | None = None
    items: Schema | None = None
    max_items: int | None = None
    max_length: int | None = None
    max_properties: int | None = None
    maximum: float | None = None
    min_items: int | None = None
    min_length: int | None = None
    min_properties: int | None = None
    minimum: float | None = None
    nullable: bool | None = None
    pattern: str | None = None
    properties: dict[str, Schema] | None = None
    property_ordering: list[str] | None = None
    required: list[str] | None = None
    title: str | None = None
    type: Type | None = None


#: google.genai's field name -> its JSON-schema keyword, where the two differ
_KEYWORDS = {"defs": "$defs", "ref": "$ref"}
_NESTED_MAPS = ("properties", "defs")
_NESTED = ("items", "additional_properties")


def json_schema_of(schema: Any) -> dict[str, Any]:
    """The JSON schema of ``schema`` (ours or google.genai's ``Schema``), as the
    module's docstring says. TypeError when it is not a pydantic object."""
    if not isinstance(schema, BaseModel):
        raise TypeError(f"a Schema is a types.Schema, not {type(schema).__name__}")
    return _converted(schema.model_dump(mode="json", exclude_none=True))


def _converted(fields: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    nullable = bool(fields.pop("nullable", False))
    for name, value in fields.items():
        if name == "type":
            kind = str(getattr(value, "value", value)).upper()
            if kind != Type.TYPE_UNSPECIFIED:
                result["type"] = kind.lower()
            continue
        if name in _NESTED_MAPS and isinstance(value, dict):
            value = {key: _converted(dict(item)) for key, item in value.items()}
        elif name in _NESTED and isinstance(value, dict):
            value = _converted(dict(value))
        elif name == "any_of" and isinstance(value, list):
            value = [_converted(dict(item)) for item in value]
        result[_KEYWORDS.get(name, to_camel(name))] = value
    if nullable:
        if "type" in result:
            result["type"] = [result["type"], "null"]
        elif "anyOf" in result:
            result["anyOf"] = [*result["anyOf"], {"type": "null"}]
    return result
