"""Output schemas: a pydantic model class, a typing type pydantic can check
(``list[Model]``, ``list[str]``, ``dict[str, int]``, ...) or a JSON-schema dict.

The agent keeps the schema as given (a class or a typing alias pickles by reference to
its classes, so agents still travel to workers); these helpers turn it into its JSON
schema, tell a model class or ``list[Model]`` apart, and check an answer against it."""

from __future__ import annotations

from typing import Annotated, Any, get_args, get_origin

from pydantic import BaseModel, TypeAdapter
from pydantic.errors import PydanticSchemaGenerationError

from ._exceptions import AgentDefinitionError

__all__ = ["list_item_model", "model_class", "output_schema_json", "validate_output"]


def _unwrap(schema: Any) -> Any:
    """``schema`` without an ``Annotated[...]`` wrapper."""
    return get_args(schema)[0] if get_origin(schema) is Annotated else schema


def model_class(schema: Any) -> type[BaseModel] | None:
    """The pydantic model class ``schema`` is (through ``Annotated``), else None."""
    inner = _unwrap(schema)
    return inner if isinstance(inner, type) and issubclass(inner, BaseModel) else None


def list_item_model(schema: Any) -> type[BaseModel] | None:
    """The model class ``M`` when ``schema`` is ``list[M]`` (through ``Annotated``), else None."""
    inner = _unwrap(schema)
    if get_origin(inner) is not list or not get_args(inner):
        return None
    return model_class(get_args(inner)[0])


def output_schema_json(schema: Any) -> dict[str, Any]:
    """The JSON schema of an output schema: a dict as given, else pydantic's JSON schema
    of the type (a model class or any typing type pydantic can check). A value that is
    neither raises AgentDefinitionError."""
    if isinstance(schema, dict):
        return schema
    if isinstance(schema, (str, bytes, int, float, bool)) or schema is None:
        raise AgentDefinitionError(f"output_schema must be a pydantic model class, a typing type or a "
                                   f"JSON schema dict, got {schema!r}")
    try:
        result: dict[str, Any] = TypeAdapter(schema).json_schema()
    except (PydanticSchemaGenerationError, TypeError) as exc:
        raise AgentDefinitionError(f"output_schema must be a pydantic model class, a typing type or a "
                                   f"JSON schema dict, got {schema!r}: {exc}") from exc
    return result


def validate_output(schema: Any, value: Any) -> Any:
    """The value an answer's parsed JSON ``value`` leaves under ``output_key`` for a
    typing output schema, as google-adk stores it: the value pydantic validated, for
    ``list[M]`` a list of the models' dumps without None fields. Raises pydantic's
    ValidationError (a ValueError) when it does not match."""
    validated = TypeAdapter(schema).validate_python(value)
    if list_item_model(schema) is not None:
        return [item.model_dump(exclude_none=True) for item in validated]
    return validated
