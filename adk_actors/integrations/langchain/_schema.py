"""A tool's declaration made from a pydantic JSON schema of its arguments, the way
google-adk 2.13 declares a LangChain tool's ``args`` and a CrewAI tool's
``args_schema`` for the Gemini API (what :class:`LangchainTool` and
:class:`~adk_actors.integrations.crewai.CrewaiTool` send the model).

:func:`declaration_from_json_schema` takes the ``properties`` of such a schema (its
``$defs`` and its own ``required`` are not read) and, in order:

1. marks a property nullable when its ``anyOf`` holds ``{"type": "null"}`` (that
   entry is taken out);
2. makes every property required that is neither nullable nor has a ``default``;
3. folds each property's remaining ``anyOf`` entries into the property (a later
   entry's keys over an earlier one's) and drops its ``default``, ``title`` and the
   nullable mark: the model is told one type, and nothing of defaults;
4. names each property's type (and an array's item type, all the way down) in
   google.genai's ``Type`` (``string`` -> ``STRING``, ``int`` -> ``INTEGER``; a name
   it does not know is ``TYPE_UNSPECIFIED``);
5. builds the ``OBJECT`` schema of those properties and that ``required`` list as a
   :class:`~adk_actors.types.Schema` (deeper type names read in any case, as
   google.genai reads them); no property at all declares no parameters.

A property that does not fit (an array with no ``items``, a ``$ref`` to a nested
model, a key no schema has) raises: a ``KeyError`` or a pydantic ``ValidationError``
(a ``ValueError``), which the adapters report as they see fit.
"""

from __future__ import annotations

import copy
from typing import Any

from ..._genai_schema import Schema, Type, json_schema_of
from ..._types import FunctionDeclaration

__all__ = ["declaration_from_json_schema"]

#: a JSON-schema or Python type name -> google.genai's Type, as google-adk maps them
_TYPE_NAMES: dict[str, Type] = {
    "str": Type.STRING, "string": Type.STRING,
    "int": Type.INTEGER, "integer": Type.INTEGER,
    "float": Type.NUMBER, "number": Type.NUMBER,
    "bool": Type.BOOLEAN, "boolean": Type.BOOLEAN,
    "list": Type.ARRAY, "array": Type.ARRAY, "tuple": Type.ARRAY, "List": Type.ARRAY, "Tuple": Type.ARRAY,
    "object": Type.OBJECT, "Dict": Type.OBJECT,
    "Any": Type.TYPE_UNSPECIFIED,
}
#: the keys of a schema that hold one schema, a map of schemas, a list of schemas
_ONE, _MAP, _LIST = ("items", "additionalProperties", "additional_properties"), ("properties",), ("anyOf", "any_of")


def _nullable(prop: dict[str, Any]) -> bool:
    """Take a ``{"type": "null"}`` entry out of ``prop``'s ``anyOf``; whether there was one."""
    options = prop.get("anyOf") or []
    for option in options:
        if isinstance(option, dict) and option.get("type") == "null":
            options.remove(option)
            return True
    return False


def _one_type(prop: dict[str, Any]) -> None:
    """Fold ``prop``'s ``anyOf`` into it and drop what the model is not told."""
    for option in prop.pop("anyOf", None) or ():
        if option.get("type") != "null":
            prop.update(option)
    for key in ("default", "nullable", "title"):
        prop.pop(key, None)


def _type_named(prop: dict[str, Any]) -> None:
    """``prop``'s type (and its items', for an array) as google.genai's Type name."""
    if "type" in prop:
        prop["type"] = _TYPE_NAMES.get(prop["type"], Type.TYPE_UNSPECIFIED)
        if prop["type"] is Type.ARRAY:
            _type_named(prop["items"])


def _upper_types(schema: Any) -> Any:
    """``schema`` with every type name in upper case (our Schema reads them so)."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    if isinstance(out.get("type"), str):
        out["type"] = out["type"].upper()
    for key in _ONE:
        if key in out:
            out[key] = _upper_types(out[key])
    for key in _MAP:
        if isinstance(out.get(key), dict):
            out[key] = {name: _upper_types(item) for name, item in out[key].items()}
    for key in _LIST:
        if isinstance(out.get(key), list):
            out[key] = [_upper_types(item) for item in out[key]]
    return out


def declaration_from_json_schema(name: str, description: str | None, properties: dict[str, Any]) -> FunctionDeclaration:
    """The declaration of a tool named ``name`` whose arguments are ``properties`` (a
    JSON schema's ``properties``, left unchanged): see the module for the steps and
    what raises."""
    props: dict[str, dict[str, Any]] = copy.deepcopy(properties)
    nullable = {key for key, prop in props.items() if _nullable(prop)}
    required = [key for key, prop in props.items() if key not in nullable and "default" not in prop]
    for prop in props.values():
        _one_type(prop)
        _type_named(prop)
    parameters = None
    if props:
        parameters = json_schema_of(Schema.model_validate({
            "type": Type.OBJECT, "required": required,
            "properties": {key: _upper_types(prop) for key, prop in props.items()}}))
    return FunctionDeclaration(name=name, description=description or "", parameters=parameters)
