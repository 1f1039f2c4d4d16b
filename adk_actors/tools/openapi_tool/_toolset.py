"""OpenAPIToolset: every operation of an OpenAPI 3 spec as a tool (google-adk's).

``OpenAPIToolset(spec_str=text, spec_str_type="yaml")`` or ``(spec_dict=spec)``. When
built, in order: the spec is loaded (:func:`~._spec.load_spec`) and parsed into
operations (:class:`~._spec.OpenApiSpecParser`), each made a :class:`RestApiTool`;
names that two operations share (long operationIds cut at 60 characters) get ``_2``,
``_3`` ... (cut to fit); ``auth_scheme`` / ``auth_credential`` / ``credential_key`` are
given to every tool (a scheme given here replaces the spec's). A spec that cannot be
read raises :class:`OpenApiSpecError` here, never at a call; an auth value that cannot
be used, :class:`OpenApiAuthError`.

In an agent's ``tools``, the engine asks :meth:`get_tools` once per invocation: the
tools ``tool_filter`` keeps (a list of names, or a predicate of the tool and the
context), named with ``tool_name_prefix`` and ``_`` before when set (on copies).
An agent crosses to an actor process by import path, so the toolset is built again
there from the same spec; it holds no connection (each call opens its own client).
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Callable
from typing import Any, Literal

from .._classes import BaseToolset, ToolPredicate
from ._auth import as_credential, as_scheme
from ._network import HttpxClientFactory
from ._rest_api_tool import RestApiTool
from ._spec import MAX_TOOL_NAME_LENGTH, OpenApiSpecParser, load_spec

__all__ = ["OpenAPIToolset"]

_log = logging.getLogger("adk_actors.tools.openapi")


class OpenAPIToolset(BaseToolset):
    """An OpenAPI spec's operations as tools (see the module)."""

    def __init__(self, *, spec_dict: dict[str, Any] | None = None, spec_str: str | None = None,
                 spec_str_type: Literal["json", "yaml"] = "json", auth_scheme: Any = None,
                 auth_credential: Any = None, credential_key: str | None = None,
                 tool_filter: ToolPredicate | list[str] | None = None, tool_name_prefix: str | None = None,
                 ssl_verify: bool | str | ssl.SSLContext | None = None,
                 header_provider: Callable[[Any], dict[str, str]] | None = None,
                 httpx_client_factory: HttpxClientFactory | None = None, preserve_property_names: bool = False,
                 allow_private_network_access: bool = False) -> None:
        super().__init__(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
        self._auth_scheme = as_scheme(auth_scheme)
        self._auth_credential = as_credential(auth_credential)
        self._ssl_verify = ssl_verify
        self._header_provider = header_provider
        self._httpx_client_factory = httpx_client_factory
        self._preserve_property_names = preserve_property_names
        self._allow_private_network_access = allow_private_network_access
        spec = load_spec(spec_dict, spec_str, spec_str_type)
        self._tools: list[RestApiTool] = self._parse(spec)
        for tool in self._tools:
            if self._auth_scheme is not None:
                tool.configure_auth_scheme(self._auth_scheme)
            if self._auth_credential is not None:
                tool.configure_auth_credential(self._auth_credential)
            if credential_key:
                tool.configure_credential_key(credential_key)

    def _parse(self, spec: dict[str, Any]) -> list[RestApiTool]:
        operations = OpenApiSpecParser(preserve_property_names=self._preserve_property_names).parse(spec)
        tools = [RestApiTool.from_parsed_operation(
            operation, ssl_verify=self._ssl_verify, header_provider=self._header_provider,
            httpx_client_factory=self._httpx_client_factory,
            allow_private_network_access=self._allow_private_network_access) for operation in operations]
        taken = {tool.name for tool in tools}
        given: set[str] = set()
        for tool in tools:
            if tool.name in given:
                base, n = tool.name, 2
                while tool.name in given or tool.name in taken:
                    suffix = f"_{n}"
                    tool.name = base[:MAX_TOOL_NAME_LENGTH - len(suffix)] + suffix
                    n += 1
            given.add(tool.name)
            _log.debug("OpenAPI tool %s: %s %s", tool.name, tool.endpoint.method.upper(), tool.endpoint.path)
        return tools

    async def get_tools(self, readonly_context: Any = None) -> list[RestApiTool]:  # type: ignore[override]
        """The tools ``tool_filter`` keeps in ``readonly_context``."""
        return [tool for tool in self._tools if self._is_tool_selected(tool, readonly_context)]

    def get_tool(self, tool_name: str) -> RestApiTool | None:
        """The tool named ``tool_name`` (its name without the prefix), or None."""
        return next((tool for tool in self._tools if tool.name == tool_name), None)

    def configure_ssl_verify_all(self, ssl_verify: bool | str | ssl.SSLContext | None = None) -> None:
        """Verify TLS with ``ssl_verify`` on every tool (a CA bundle path, a context, False)."""
        self._ssl_verify = ssl_verify
        for tool in self._tools:
            tool.configure_ssl_verify(ssl_verify)

    async def close(self) -> None:
        """Nothing to release: every call closes its own client."""

    def __repr__(self) -> str:
        return f"OpenAPIToolset({len(self._tools)} tools, prefix={self.tool_name_prefix!r})"
