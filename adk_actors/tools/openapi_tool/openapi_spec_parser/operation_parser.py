"""google-adk's ``OperationParser``: one OpenAPI operation as a Python function's parts
(its name, parameters, return type, docstring, JSON schema, signature), on our OpenAPI
parser's rules (``openapi_tool._spec``: the same parameters, names and schema as the
toolset's tools get).

``OperationParser(operation, should_parse=True, *, preserve_property_names=False)``
takes an ``Operation``, its dict or its JSON text (pydantic's ValidationError when it
does not fit); when ``should_parse``, in order:

1. the parameters: ``operation_parameters`` of our parser (path, query, header and
   cookie parameters, then the request body's; snake_case names unless
   ``preserve_property_names``, a keyword prefixed ``param_``, a repeated name suffixed
   ``_0``, ``_1``...), each as google-adk's :class:`ApiParameter`; a schema that is
   ``false`` or an unresolved reference is a ``ValueError`` (``OpenApiSpecError``);
2. the return value: the schema of the first content with a schema of the 2xx response
   with the lowest code (as text), else the empty schema; a response that is an
   unresolved reference is a ``ValueError``.

:meth:`OperationParser.load` makes one from parameters already made (nothing parsed).
"""

from __future__ import annotations

import inspect
from textwrap import dedent
from typing import Any, cast

from fastapi.openapi.models import Operation, Reference, Response, Schema

from .._spec import (
    MAX_TOOL_NAME_LENGTH,
    arguments_schema,
    operation_parameters,
    required_scheme_name,
    snake_case,
)
from ..common.common import ApiParameter, PydocHelper, api_parameter, schema_from_openapi

__all__ = ["OperationParser"]


def _return_value(operation: Operation) -> ApiParameter:
    """Step 2 of the module."""
    responses = operation.responses or {}
    schema = Schema()
    codes = [code for code in responses if code.startswith("2")]
    if codes:
        response = responses[min(codes)]
        if isinstance(response, Reference):
            raise ValueError(f"the response refers to {response.ref!r}, which is not resolved")
        if not isinstance(response, Response):
            raise TypeError(f"an OpenAPI response was expected, not {type(response)!r}")
        for media_type, media in (response.content or {}).items():
            if media.schema_ is not None:
                schema = schema_from_openapi(media.schema_, context=f"response media type {media_type!r}")
                break
    return ApiParameter(original_name="", param_location="", param_schema=schema)


class OperationParser:
    """An OpenAPI operation as a Python function's parts (see the module)."""

    def __init__(self, operation: Operation | dict[str, Any] | str, should_parse: bool = True, *,
                 preserve_property_names: bool = False) -> None:
        """Validate ``operation`` and, when ``should_parse``, make its parameters and
        return value (see the module)."""
        if isinstance(operation, dict):
            self._operation = Operation.model_validate(operation)
        elif isinstance(operation, str):
            self._operation = Operation.model_validate_json(operation)
        else:
            self._operation = operation
        self._preserve_property_names = preserve_property_names
        self._params: list[ApiParameter] = []
        self._return_value: ApiParameter | None = None
        if should_parse:
            parsed = operation_parameters(self._operation, preserve_property_names=preserve_property_names)
            self._params = [api_parameter(param) for param in parsed]
            self._return_value = _return_value(self._operation)

    @classmethod
    def load(cls, operation: Operation | dict[str, Any], params: list[ApiParameter],
             return_value: ApiParameter | None = None, *, preserve_property_names: bool = False,
             ) -> OperationParser:
        """A parser of ``operation`` with these parameters and return value (nothing parsed)."""
        parser = cls(operation, should_parse=False, preserve_property_names=preserve_property_names)
        parser._params = params
        parser._return_value = return_value
        return parser

    def get_function_name(self) -> str:
        """The operation id in snake_case, cut at 60 characters; a ``ValueError``
        without an operation id."""
        if not self._operation.operationId:
            raise ValueError("Operation ID is missing")
        return snake_case(self._operation.operationId)[:MAX_TOOL_NAME_LENGTH]

    def get_parameters(self) -> list[ApiParameter]:
        """The parameters, in declaration order."""
        return self._params

    def get_return_value(self) -> ApiParameter:
        """The return value (a ``RuntimeError`` when it was not parsed)."""
        if self._return_value is None:
            raise RuntimeError("the operation's return value was not parsed")
        return self._return_value

    def get_return_type_hint(self) -> str:
        """The return value's type as text (``str``, ``Dict[str, Any]``...)."""
        return cast(str, self.get_return_value().type_hint)

    def get_return_type_value(self) -> Any:
        """The return value's Python type."""
        return self.get_return_value().type_value

    def get_auth_scheme_name(self) -> str:
        """The name of the scheme the operation's ``security`` requires ('' for none,
        or when an empty requirement makes auth optional)."""
        return required_scheme_name(self._operation.security)

    def get_pydoc_string(self) -> str:
        """The function's docstring: the summary (else the description), each
        parameter's line under ``Args:``, then the return value's part."""
        lines = "\n".join(f"        {param.to_pydoc_string()}" for param in self._params)
        summary = self._operation.summary or self._operation.description or ""
        returns = PydocHelper.generate_return_doc(cast(dict[str, Response], self._operation.responses or {}))
        return dedent(f'''
        """{summary}

        Args:
        {lines}

        {returns}
        """
            ''').strip()

    def get_json_schema(self) -> dict[str, Any]:
        """The JSON schema of the function's arguments (our parser's, as a tool declares
        it: each parameter's schema by its name, the required ones, the title
        ``<operationId>_Arguments``)."""
        return arguments_schema(self._operation, cast(Any, self._params))

    def get_signature_parameters(self) -> list[inspect.Parameter]:
        """The parameters as positional-or-keyword ``inspect.Parameter`` s, annotated
        with their Python types."""
        return [inspect.Parameter(cast(str, param.py_name), inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                  annotation=param.type_value) for param in self._params]

    def get_annotations(self) -> dict[str, Any]:
        """Each parameter's Python type by name, and the return value's as ``return``."""
        annotations: dict[str, Any] = {cast(str, param.py_name): param.type_value for param in self._params}
        annotations["return"] = self.get_return_type_value()
        return annotations
