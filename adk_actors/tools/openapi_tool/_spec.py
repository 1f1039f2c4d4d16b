"""An OpenAPI 3 spec as operations, each with the parameters a tool declares.

The spec is read with fastapi's OpenAPI models (``fastapi.openapi.models``, a core
dependency: the pydantic model of the OpenAPI 3 objects that google-adk reads specs
with too), so a parameter's JSON schema is the model's own JSON form and matches
google-adk's declaration for declaration.

:func:`load_spec` gives the spec as a dict (``spec_dict`` as is, else ``spec_str``
parsed as JSON or YAML). :meth:`OpenApiSpecParser.parse` then, in order:

1. resolves every local ``$ref`` (``#/...``, JSON-pointer escapes undone) into a copy
   of the spec; a reference back into itself becomes its object without ``$ref``
   (the cycle is cut there); a reference to a place that does not exist is left as it
   is (the parameter it stands for is then skipped, as google-adk skips it); an
   external reference is an :class:`OpenApiSpecError`;
2. in every schema (below a ``schema`` or ``schemas`` key) lower-cases ``type`` and
   drops the types JSON schema does not know (``"Any"``);
3. takes each operation of each path, in google-adk's method order (get, post, put,
   delete, patch, head, options, trace): the path's own parameters are added after
   the operation's (an operation's parameter of the same name and place wins); an
   operation without ``operationId`` gets one from its path and method; the
   operation is validated as an OpenAPI ``Operation`` (an
   :class:`OpenApiSpecError` naming ``paths.<path>.<method>`` when it does not fit);
   its auth scheme is the one its ``security`` names, else the spec's global one.

An operation's parameters (:func:`operation_parameters`): its path, query, header and
cookie parameters, then its request body's (the first media type only): each property
of an object body, one ``array`` parameter for an array body, one ``body`` parameter
otherwise. Names are snake_case (a Python keyword gets ``param_`` before it) unless
``preserve_property_names``; a name met again gets ``_0``, ``_1`` ... after it.
"""

from __future__ import annotations

import copy
import json
import keyword
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml
from fastapi.encoders import jsonable_encoder
from fastapi.openapi.models import (
    Operation,
    Parameter,
    ParameterInType,
    Reference,
    RequestBody,
    Schema,
)
from pydantic import BaseModel, ValidationError

from ._errors import OpenApiSpecError

__all__ = [
    "MAX_TOOL_NAME_LENGTH",
    "ApiParameter",
    "OpenApiSpecParser",
    "OperationEndpoint",
    "ParsedOperation",
    "arguments_schema",
    "load_spec",
    "operation_parameters",
    "required_scheme_name",
    "snake_case",
]

_log = logging.getLogger("adk_actors.tools.openapi")

#: Gemini takes function names of at most 64 characters; google-adk cuts at 60.
MAX_TOOL_NAME_LENGTH = 60

_METHODS = ("get", "post", "put", "delete", "patch", "head", "options", "trace")
_JSON_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_SCHEMA_KEYS = frozenset({"schema", "schemas"})
_DEFAULT_NAMES = {"body": "body", "query": "query_param", "path": "path_param", "header": "header_param",
                  "cookie": "cookie_param"}


def snake_case(text: str) -> str:
    """``text`` in snake_case: every run of characters other than ASCII letters and
    digits becomes one ``_``; a capital after a lower-case letter or digit, and the
    last capital of an acronym before a capitalised word, start a new word; all
    lower-cased, ``_`` runs squeezed and trimmed (``listPets`` -> ``list_pets``,
    ``getHTTPStatus`` -> ``get_http_status``, ``/pets/{id}_get`` -> ``pets_id_get``)."""
    text = re.sub(r"[^A-Za-z0-9]+", "_", text)
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", text)
    text = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", text)
    return re.sub(r"_+", "_", text.lower()).strip("_")


def _python_name(name: str) -> str:
    return f"param_{name}" if keyword.iskeyword(name) else name


def load_spec(spec_dict: dict[str, Any] | None, spec_str: str | None,
              spec_str_type: Literal["json", "yaml"]) -> dict[str, Any]:
    """The spec as a dict: ``spec_dict`` when given (not empty), else ``spec_str``
    parsed as ``spec_str_type``. Raises :class:`OpenApiSpecError` when neither is
    given, the type is neither ``json`` nor ``yaml``, the text does not parse (the
    message has the parser's line and column), or the result is not an object."""
    if spec_dict:
        loaded: Any = spec_dict
    elif spec_str is None:
        raise OpenApiSpecError("an OpenAPI toolset needs spec_dict or spec_str")
    elif not isinstance(spec_str, str):
        raise OpenApiSpecError(f"spec_str is a str, not {type(spec_str).__name__}")
    elif spec_str_type == "json":
        try:
            loaded = json.loads(spec_str)
        except json.JSONDecodeError as exc:
            raise OpenApiSpecError(f"the OpenAPI spec is not valid JSON: {exc}") from None
    elif spec_str_type == "yaml":
        try:
            loaded = yaml.safe_load(spec_str)
        except yaml.YAMLError as exc:
            raise OpenApiSpecError(f"the OpenAPI spec is not valid YAML: {exc}") from None
    else:
        raise OpenApiSpecError(f"spec_str_type is 'json' or 'yaml', not {spec_str_type!r}")
    if not isinstance(loaded, dict):
        raise OpenApiSpecError(f"the OpenAPI spec must be an object, not {type(loaded).__name__}")
    return loaded


def _check_version(spec: dict[str, Any]) -> None:
    if "swagger" in spec:
        raise OpenApiSpecError(f"a Swagger {spec['swagger']} spec is not OpenAPI 3: convert it to OpenAPI 3 first")
    version = spec.get("openapi")
    if version is not None and not str(version).startswith("3"):
        raise OpenApiSpecError(f"openapi: {version!r}: only OpenAPI 3 specs are read")
    if not isinstance(spec.get("paths", {}), dict):
        raise OpenApiSpecError("paths: must be an object of path items")


def _pointer(spec: Any, ref: str) -> Any:
    """What the local reference ``ref`` (``#/a/b``) points at in ``spec``, or None."""
    if ref != "#" and not ref.startswith("#/"):
        raise OpenApiSpecError(f"external references are not supported: {ref}")
    current = spec
    for raw in ref[2:].split("/") if ref != "#" else ():
        step = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(current, dict) and step in current:
            current = current[step]
        elif isinstance(current, list) and step.isdigit() and int(step) < len(current):
            current = current[int(step)]
        else:
            return None
    return current


def _resolve_refs(spec: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``spec`` with its local references resolved (see the module)."""
    done: dict[str, Any] = {}

    def resolve(value: Any, open_refs: tuple[str, ...]) -> Any:
        if isinstance(value, list):
            return [resolve(item, open_refs) for item in value]
        if not isinstance(value, dict):
            return value
        ref = value.get("$ref")
        if not isinstance(ref, str):
            return {key: resolve(item, open_refs) for key, item in value.items()}
        if ref in done:
            return copy.deepcopy(done[ref])
        if ref in open_refs:  # a cycle: cut here
            return {key: item for key, item in value.items() if key != "$ref"}
        target = _pointer(spec, ref)
        if target is None:
            _log.warning("OpenAPI reference %s points at nothing: left as it is", ref)
            return value
        done[ref] = resolve(target, (*open_refs, ref))
        return copy.deepcopy(done[ref])

    resolved: dict[str, Any] = resolve(spec, ())
    return resolved


def _clean_types(value: Any, in_schema: bool) -> Any:
    """``value`` with each schema's ``type`` lower-cased and unknown types dropped."""
    if isinstance(value, list):
        return [_clean_types(item, in_schema) for item in value]
    if not isinstance(value, dict):
        return value
    cleaned = {key: _clean_types(item, in_schema or key in _SCHEMA_KEYS) for key, item in value.items()}
    if in_schema and "type" in cleaned:
        kind = cleaned["type"]
        if isinstance(kind, str):
            if kind.lower() in _JSON_TYPES:
                cleaned["type"] = kind.lower()
            else:
                del cleaned["type"]
        elif isinstance(kind, list):
            kinds = list(dict.fromkeys(k.lower() for k in kind if isinstance(k, str) and k.lower() in _JSON_TYPES))
            if kinds:
                cleaned["type"] = kinds
            else:
                del cleaned["type"]
    return cleaned


def required_scheme_name(security: Any) -> str:
    """The name of the scheme a ``security`` list requires, or '' when it requires
    none (no list, or one with an empty requirement: auth is then optional)."""
    if not security or any(not requirement for requirement in security):
        return ""
    first = security[0]
    return next(iter(first), "") if isinstance(first, dict) else ""


class OperationEndpoint(BaseModel):
    """Where an operation is served: the spec's first server URL, its path
    template and its HTTP method (lower case)."""

    base_url: str
    path: str
    method: str


@dataclass
class ApiParameter:
    """One argument of a tool: where it goes in the request (``param_location``:
    path, query, header, cookie or body), its name there (``original_name``), its
    name in the declaration (``py_name``), its schema and whether it is required."""

    original_name: str
    param_location: str
    param_schema: Schema
    description: str = ""
    py_name: str = ""
    required: bool = False

    def __post_init__(self) -> None:
        if not self.py_name:
            self.py_name = _python_name(snake_case(self.original_name)) or _DEFAULT_NAMES.get(
                self.param_location, "value")
        self.description = self.description or self.param_schema.description or ""


@dataclass
class ParsedOperation:
    """One operation of a spec, ready to become a :class:`RestApiTool`."""

    name: str
    description: str
    endpoint: OperationEndpoint
    operation: Operation
    parameters: list[ApiParameter]
    auth_scheme: dict[str, Any] | None = None
    additional_context: dict[str, Any] = field(default_factory=dict)


def _schema(value: Any, where: str) -> Schema:
    """A parameter's or property's schema as a Schema (none, or ``true``: any value)."""
    if value is None or value is True:
        return Schema()
    if value is False:
        raise OpenApiSpecError(f"{where} has the schema false, which no value satisfies")
    if isinstance(value, Schema):
        return value
    if isinstance(value, Reference):
        raise OpenApiSpecError(f"{where} refers to {value.ref!r}, which the spec does not define")
    try:
        return Schema.model_validate(value)
    except ValidationError as exc:
        raise OpenApiSpecError(f"{where}: {_first_problem(exc)}") from None


def _first_problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(step) for step in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def operation_parameters(operation: Operation, *, preserve_property_names: bool = False) -> list[ApiParameter]:
    """The arguments of ``operation`` (see the module), in declaration order."""
    def py_name(name: str) -> str:
        return _python_name(name) if preserve_property_names else ""

    params: list[ApiParameter] = []
    for param in operation.parameters or []:
        if not isinstance(param, Parameter):
            continue  # an unresolved reference: skipped, not fatal (as google-adk)
        schema = _schema(param.schema_, f"parameter {param.name!r}")
        description = param.description or ""
        if not schema.description:
            schema.description = description
        required = param.in_ == ParameterInType.path or bool(param.required)
        params.append(ApiParameter(param.name, param.in_.value, schema, description, py_name(param.name), required))

    body = operation.requestBody
    if isinstance(body, Reference):
        raise OpenApiSpecError(f"the request body refers to {body.ref!r}, which the spec does not define")
    if isinstance(body, RequestBody) and body.content:
        media_type, media = next(iter(body.content.items()))
        schema = _schema(media.schema_, f"the request body ({media_type})")
        if schema.type == "object":
            required_names = set(schema.required or [])
            for name, details in (schema.properties or {}).items():
                prop = _schema(details, f"request body property {name!r}")
                params.append(ApiParameter(name, "body", prop, prop.description or "", py_name(name),
                                           name in required_names))
        elif schema.type == "array":
            params.append(ApiParameter("array", "body", schema, body.description or ""))
        else:
            name = "body" if (schema.oneOf or schema.anyOf or schema.allOf or not schema.type) else ""
            params.append(ApiParameter(name, "body", schema, body.description or ""))

    seen: dict[str, int] = {}
    for made in params:
        if made.py_name in seen:
            seen[made.py_name] += 1
            made.py_name = f"{made.py_name}_{seen[made.py_name] - 1}"
        else:
            seen[made.py_name] = 0
    return params


def arguments_schema(operation: Operation, params: list[ApiParameter]) -> dict[str, Any]:
    """The JSON schema of a tool's arguments: each parameter's schema (its OpenAPI
    JSON form, unset fields left out) by its ``py_name``, the required ones, and the
    title ``<operationId>_Arguments``."""
    properties = {param.py_name: jsonable_encoder(param.param_schema, exclude_none=True) for param in params}
    return {
        "properties": properties,
        "required": [param.py_name for param in params if param.required],
        "title": f"{operation.operationId or 'unnamed'}_Arguments",
        "type": "object",
    }


class OpenApiSpecParser:
    """Reads a spec dict into :class:`ParsedOperation` objects (see the module)."""

    def __init__(self, *, preserve_property_names: bool = False) -> None:
        self._preserve_property_names = preserve_property_names

    def parse(self, openapi_spec_dict: dict[str, Any]) -> list[ParsedOperation]:
        """The spec's operations, in path order then method order. Raises
        :class:`OpenApiSpecError` for a spec that is not OpenAPI 3 or an operation
        that does not fit the OpenAPI model."""
        if not isinstance(openapi_spec_dict, dict):
            raise OpenApiSpecError(f"the OpenAPI spec must be an object, not {type(openapi_spec_dict).__name__}")
        _check_version(openapi_spec_dict)
        spec = _clean_types(_resolve_refs(openapi_spec_dict), False)
        return list(self._operations(spec))

    def _operations(self, spec: dict[str, Any]) -> Iterator[ParsedOperation]:
        servers = spec.get("servers") or []
        base_url = str(servers[0].get("url", "")) if isinstance(servers[0] if servers else None, dict) else ""
        global_scheme = required_scheme_name(spec.get("security"))
        components = spec.get("components") or {}
        schemes = (components.get("securitySchemes") or {}) if isinstance(components, dict) else {}
        for path, item in (spec.get("paths") or {}).items():
            if item is None:
                continue
            if not isinstance(item, dict):
                raise OpenApiSpecError(f"paths.{path}: a path item must be an object")
            shared = item.get("parameters") or []
            for method in _METHODS:
                raw = item.get(method)
                if raw is None:
                    continue
                where = f"paths.{path}.{method}"
                if not isinstance(raw, dict):
                    raise OpenApiSpecError(f"{where}: an operation must be an object")
                raw = dict(raw)
                own = raw.get("parameters") or []
                if not isinstance(own, list) or not isinstance(shared, list):
                    raise OpenApiSpecError(f"{where}: parameters must be a list")
                overridden = {(p["name"], p.get("in")) for p in own if isinstance(p, dict) and "name" in p}
                raw["parameters"] = own + [p for p in shared if not isinstance(p, dict)
                                           or (p.get("name"), p.get("in")) not in overridden]
                if "operationId" not in raw:
                    raw["operationId"] = snake_case(f"{path}_{method}")
                try:
                    operation = Operation.model_validate(raw)
                except ValidationError as exc:
                    raise OpenApiSpecError(f"{where}: {_first_problem(exc)}") from None
                try:
                    params = operation_parameters(operation, preserve_property_names=self._preserve_property_names)
                except OpenApiSpecError as exc:
                    raise OpenApiSpecError(f"{where}: {exc}") from None
                scheme_name = required_scheme_name(operation.security)
                if not scheme_name and operation.security is None:
                    scheme_name = global_scheme
                scheme = schemes.get(scheme_name) if scheme_name else None
                yield ParsedOperation(
                    name=snake_case(operation.operationId or "")[:MAX_TOOL_NAME_LENGTH],
                    description=operation.description or operation.summary or "",
                    endpoint=OperationEndpoint(base_url=base_url, path=path, method=method),
                    operation=operation,
                    parameters=params,
                    auth_scheme=scheme if isinstance(scheme, dict) else None,
                )
