"""google-adk's ``openapi_tool.common.common``: an OpenAPI operation's parameters as
Python sees them.

* :func:`rename_python_keywords`: a Python keyword with ``prefix`` before it (the rule
  the OpenAPI parser names arguments with).
* :class:`ApiParameter`: one parameter (google-adk's pydantic model and fields:
  ``original_name``, ``param_location``, ``param_schema`` (a ``Schema``, or its JSON
  text, made a ``Schema``), ``description``, ``py_name``, ``required``; ``type_value``
  and ``type_hint`` derived). When made, in order: an empty ``py_name`` becomes the
  parser's name of ``original_name`` (snake_case, a keyword prefixed ``param_``) or,
  when that is empty, the location's default (``body``, ``query_param``,
  ``path_param``, ``header_param``, ``cookie_param``, else ``value``); a JSON
  ``param_schema`` is validated into a ``Schema`` (pydantic's ValidationError when it
  does not fit); an empty description takes the schema's; the type value and hint
  come from :class:`TypeHintHelper`. Dumped, it gives only its first five fields.
  Our parser (``OpenApiSpecParser``, ``OperationParser``) gives its parameters in this
  shape through :func:`api_parameter`.
* :class:`TypeHintHelper`: a schema's Python type (``int``, ``List[str]``,
  ``Dict[str, Any]``, ``Any``...) as a value and as text; a list of types counts when
  exactly one of them is not ``null``.
* :class:`PydocHelper`: a parameter's docstring line (an object's properties on lines
  of their own), and the ``Returns`` part of a docstring from an operation's
  responses (the 2xx response with content and the lowest code, numeric codes before
  others such as ``2XX``; its ``application/json`` content, else its first; ``''``
  when there is none).
"""

from __future__ import annotations

import keyword
import typing
from typing import Any

from fastapi.openapi.models import Reference, Response, Schema
from pydantic import BaseModel, Field, model_serializer

from .._spec import ApiParameter as _ParsedParameter
from .._spec import snake_case

__all__ = ["ApiParameter", "PydocHelper", "TypeHintHelper", "api_parameter", "rename_python_keywords",
           "schema_from_openapi"]

#: a nameless parameter's name, by where it goes (google-adk's)
_LOCATION_NAMES = {"body": "body", "query": "query_param", "path": "path_param", "header": "header_param",
                   "cookie": "cookie_param"}
_HINTS: dict[str, tuple[Any, str]] = {"integer": (int, "int"), "number": (float, "float"),
                                      "boolean": (bool, "bool"), "string": (str, "str")}


def rename_python_keywords(s: str, prefix: str = "param_") -> str:
    """``s`` with ``prefix`` before it when it is a Python keyword, else ``s``."""
    return prefix + s if keyword.iskeyword(s) else s


def schema_from_openapi(value: object, *, context: str) -> Schema:
    """A schema-bearing OpenAPI value as a ``Schema``: none or ``true`` is the empty
    schema; a ``Schema`` itself; JSON text or a dict validated into one. ``false``
    (nothing satisfies it) and an unresolved ``Reference`` are a ``ValueError`` naming
    ``context``; anything else a ``TypeError``."""
    if value is None or value is True:
        return Schema()
    if value is False:
        raise ValueError(f"{context}: the schema is false, which no value satisfies")
    if isinstance(value, Schema):
        return value
    if isinstance(value, Reference):
        raise ValueError(f"{context}: the reference {value.ref!r} is not resolved")
    if isinstance(value, str):
        return Schema.model_validate_json(value)
    if isinstance(value, dict):
        return Schema.model_validate(value)
    raise TypeError(f"{context}: an OpenAPI schema was expected, not {type(value)!r}")


class TypeHintHelper:
    """A schema's Python type, as a value and as text (see the module)."""

    @staticmethod
    def _get_schema_type(schema: Schema | bool | None) -> str | None:
        if schema is None or isinstance(schema, bool):
            return None
        kind = schema.type
        if isinstance(kind, list):
            kinds = [k for k in kind if k != "null"]
            return kinds[0] if len(kinds) == 1 else None
        return kind

    @staticmethod
    def get_type_value(schema: Schema | bool) -> Any:
        """The Python type of values of ``schema`` (``Any`` when it says none)."""
        if isinstance(schema, bool):
            return Any
        kind = TypeHintHelper._get_schema_type(schema)
        if kind in _HINTS:
            return _HINTS[kind][0]
        if kind == "array":
            items = TypeHintHelper._get_schema_type(schema.items)
            if items in _HINTS:
                return typing.List[_HINTS[items][0]]  # type: ignore[misc]  # noqa: UP006 (typing's alias, as google-adk)
            return {"object": typing.List[typing.Dict[str, Any]],  # noqa: UP006
                    "array": typing.List[typing.List[Any]]}.get(items or "", typing.List[Any])  # noqa: UP006
        if kind == "object":
            return typing.Dict[str, Any]  # noqa: UP006
        return Any

    @staticmethod
    def get_type_hint(schema: Schema | bool) -> str:
        """The Python type of values of ``schema`` as text, as in a signature."""
        if isinstance(schema, bool):
            return "Any"
        kind = TypeHintHelper._get_schema_type(schema)
        if kind in _HINTS:
            return _HINTS[kind][1]
        if kind == "array":
            items = TypeHintHelper._get_schema_type(schema.items)
            if items == "object":
                return "List[Dict[str, Any]]"
            return f"List[{_HINTS[items][1] if items in _HINTS else 'Any'}]"
        if kind == "object":
            return "Dict[str, Any]"
        return "Any"


class ApiParameter(BaseModel):
    """One parameter of an OpenAPI operation, as Python names it (see the module)."""

    original_name: str
    param_location: str
    param_schema: str | Schema
    description: str | None = ""
    py_name: str | None = ""
    type_value: object = Field(default=None, init_var=False)
    type_hint: str | None = Field(default=None, init_var=False)
    required: bool = False

    def model_post_init(self, context: Any, /) -> None:
        """Derive the name, schema, description and types (see the module)."""
        if not self.py_name:
            self.py_name = (rename_python_keywords(snake_case(self.original_name))
                            or _LOCATION_NAMES.get(self.param_location or "", "value"))
        if isinstance(self.param_schema, str):
            self.param_schema = Schema.model_validate_json(self.param_schema)
        schema = self.param_schema
        self.description = self.description or schema.description or ""
        self.type_value = TypeHintHelper.get_type_value(schema)
        self.type_hint = TypeHintHelper.get_type_hint(schema)

    @property
    def _openapi_schema(self) -> Schema:
        if not isinstance(self.param_schema, Schema):
            raise RuntimeError("the parameter's schema was not made a Schema")
        return self.param_schema

    @model_serializer
    def _serialize(self) -> dict[str, object]:
        return {"original_name": self.original_name, "param_location": self.param_location,
                "param_schema": self.param_schema, "description": self.description, "py_name": self.py_name}

    def __str__(self) -> str:
        return f"{self.py_name}: {self.type_hint}"

    def to_arg_string(self) -> str:
        """``name=name``, as the parameter is passed on in a call."""
        return f"{self.py_name}={self.py_name}"

    def to_dict_property(self) -> str:
        """``"name": name``, as the parameter is put in a dict literal."""
        return f'"{self.py_name}": {self.py_name}'

    def to_pydoc_string(self) -> str:
        """The parameter's docstring line (:meth:`PydocHelper.generate_param_doc`)."""
        return PydocHelper.generate_param_doc(self)


def api_parameter(parsed: _ParsedParameter) -> ApiParameter:
    """A parameter our OpenAPI parser made, in google-adk's shape (its name,
    description and requiredness as the parser decided them)."""
    return ApiParameter(original_name=parsed.original_name, param_location=parsed.param_location,
                        param_schema=parsed.param_schema, description=parsed.description,
                        py_name=parsed.py_name, required=parsed.required)


def _property_lines(schema: Schema, indent: str) -> str:
    """`` Object properties:`` and a line per property of an object ``schema`` ('' for
    any other schema, or an object without properties)."""
    if schema.type != "object" or not schema.properties:
        return ""
    lines = " Object properties:\n"
    for name, details in schema.properties.items():
        described = details.description if isinstance(details, Schema) and details.description else ""
        lines += f"{indent}{name} ({TypeHintHelper.get_type_hint(details)}): {described}\n"
    return lines


def _status_order(status: str) -> tuple[int, int | str]:
    return (0, int(status)) if status.isdigit() else (1, status)


class PydocHelper:
    """Docstring parts of an OpenAPI operation (see the module)."""

    @staticmethod
    def generate_param_doc(param: ApiParameter) -> str:
        """``name (hint): description``, then an object's properties one a line."""
        description = param.description.strip() if param.description else ""
        return (f"{param.py_name} ({param.type_hint}): {description}"
                + _property_lines(param._openapi_schema, " " * 7))

    @staticmethod
    def generate_return_doc(responses: dict[str, Response]) -> str:
        """``Returns (hint): description`` of the chosen 2xx response, then an object's
        properties one a line; '' when no 2xx response has content."""
        candidates = [(status, response) for status, response in responses.items()
                      if status.startswith("2") and isinstance(response, Response) and response.content]
        if not candidates:
            return ""
        response = min(candidates, key=lambda item: _status_order(item[0]))[1]
        content = response.content or {}
        media = content.get("application/json")
        if media is None:
            media = next(iter(content.values()), None)
        if media is None:
            return ""
        schema = schema_from_openapi(media.schema_, context="response body")
        hint = TypeHintHelper.get_type_hint(schema)
        return (f"Returns ({hint}): {(response.description or '').strip()}"
                + _property_lines(schema, " " * 8))
