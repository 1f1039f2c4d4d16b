"""Output schemas: a pydantic model class or a JSON-schema dict."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ._exceptions import AgentDefinitionError

__all__ = ["output_schema_json"]


def output_schema_json(schema: Any) -> dict[str, Any]:
    """The JSON schema of an output schema (a pydantic model class or a schema dict)."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        result: dict[str, Any] = schema.model_json_schema()
        return result
    if isinstance(schema, dict):
        return schema
    raise AgentDefinitionError(f"output_schema must be a pydantic model class or a JSON schema dict, got {schema!r}")
