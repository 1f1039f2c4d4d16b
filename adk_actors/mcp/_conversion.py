"""A tool as an MCP tool, and a Gemini schema as a JSON schema, as google-adk names them
(``google.adk.tools.mcp_tool.conversion_utils``).

* :func:`adk_to_mcp_tool_type`: a tool (a ``BaseTool``/``FunctionTool``, or any tool
  with our ``declaration()``) as the ``mcp`` SDK's ``Tool``: the tool's name and
  description, and as ``inputSchema`` its declaration's ``parameters_json_schema``
  when it has one, else its ``parameters`` turned by :func:`gemini_to_json_schema`,
  else ``{}``;
* :func:`gemini_to_json_schema`: a schema in Gemini's OpenAPI subset (google.genai's
  ``Schema``, any pydantic model with its fields, or a dict of them, keys in
  snake_case or camelCase) as a JSON schema dict: the same dict google-adk 2.13 makes
  for the same schema (see the function for which keys are kept).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp import types as mcp_types
from pydantic import BaseModel

__all__ = ["adk_to_mcp_tool_type", "gemini_to_json_schema"]

#: Kept as they are, whatever the type (Gemini's key, JSON schema's key).
_ANY_TYPE = (("title", "title"), ("description", "description"), ("default", "default"), ("enum", "enum"),
             ("format", "format"), ("example", "example"))
#: Kept for one type only.
_BY_TYPE: dict[str, tuple[tuple[str, str], ...]] = {
    "STRING": (("pattern", "pattern"), ("min_length", "minLength"), ("max_length", "maxLength")),
    "NUMBER": (("minimum", "minimum"), ("maximum", "maximum")),
    "INTEGER": (("minimum", "minimum"), ("maximum", "maximum")),
    "ARRAY": (("min_items", "minItems"), ("max_items", "maxItems")),
    "OBJECT": (("required", "required"), ("min_properties", "minProperties"), ("max_properties", "maxProperties")),
}


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(word.title() for word in rest)


def _reader(schema: Any) -> Any:
    """A function that reads one Gemini field (by its snake_case name) of ``schema``;
    TypeError when ``schema`` is neither a mapping nor a pydantic model."""
    if isinstance(schema, Mapping):
        return lambda key: schema[key] if key in schema else schema.get(_camel(key))
    if isinstance(schema, BaseModel):
        return lambda key: getattr(schema, key, None)
    raise TypeError(f"Input must be an instance of Schema, got {type(schema)}")


def _type_name(value: Any) -> str | None:
    """Gemini's type name, upper case (``"OBJECT"``), from its enum or a string in any
    case; None when unset or ``TYPE_UNSPECIFIED``."""
    if value is None:
        return None
    name = str(getattr(value, "value", value)).upper()
    return None if not name or name == "TYPE_UNSPECIFIED" else name


def gemini_to_json_schema(gemini_schema: Any) -> dict[str, Any]:
    """``gemini_schema`` as a JSON schema dict, built in this order: ``type`` (Gemini's
    type in lower case; ``"null"`` when unset or unspecified); ``nullable: true`` when
    it is nullable; ``title``, ``description``, ``default``, ``enum``, ``format``,
    ``example`` as given when set; for a string ``pattern``, ``minLength``,
    ``maxLength``; for a number or integer ``minimum``, ``maximum``; for an array
    ``items`` (converted the same way), ``minItems``, ``maxItems``; for an object
    ``properties`` (each converted), ``required``, ``minProperties``,
    ``maxProperties``; then ``anyOf`` (each converted), whatever the type. Other
    fields (``property_ordering``, ``ref``...) are left out, as google-adk leaves
    them. TypeError when the schema (or a nested one) is neither a mapping nor a
    pydantic model."""
    read = _reader(gemini_schema)
    kind = _type_name(read("type"))
    result: dict[str, Any] = {"type": kind.lower() if kind else "null"}
    if read("nullable") is True:
        result["nullable"] = True
    fields = [*_ANY_TYPE]
    if kind == "ARRAY" and (items := read("items")) is not None:
        fields.append(("items", "items"))
    if kind == "OBJECT" and (properties := read("properties")) is not None:
        fields.append(("properties", "properties"))
    fields.extend(_BY_TYPE.get(kind or "", ()))
    for key, json_key in fields:
        value = read(key)
        if value is None:
            continue
        if key == "items":
            value = gemini_to_json_schema(items)
        elif key == "properties":
            value = {name: gemini_to_json_schema(sub) for name, sub in properties.items()}
        result[json_key] = value
    if (any_of := read("any_of")) is not None:
        result["anyOf"] = [gemini_to_json_schema(sub) for sub in any_of]
    return result


def _declaration(tool: Any) -> Any:
    """The tool's declaration: google-adk's ``_get_declaration()`` when the tool has
    it, else our protocol's ``declaration()``, else None."""
    if hasattr(tool, "_get_declaration"):
        return tool._get_declaration()
    if hasattr(tool, "declaration"):
        return tool.declaration()
    return None


def adk_to_mcp_tool_type(tool: Any) -> mcp_types.Tool:
    """``tool`` as an MCP ``Tool`` (see the module): its name and description, and
    the input schema of its declaration (read from an object or a dict). What the
    declaration raises, and TypeError for parameters that are not a schema, are
    raised as they are."""
    declared = _declaration(tool)
    if declared is None:
        input_schema: dict[str, Any] = {}
    else:
        read = _reader(declared) if isinstance(declared, Mapping | BaseModel) else (
            lambda key: getattr(declared, key, None))
        if json_schema := read("parameters_json_schema"):
            input_schema = json_schema
        elif parameters := read("parameters"):
            input_schema = gemini_to_json_schema(parameters)
        else:
            input_schema = {}
    return mcp_types.Tool(name=tool.name, description=tool.description, input_schema=input_schema)
