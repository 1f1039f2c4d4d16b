"""RestApiTool: one operation of an OpenAPI spec as a tool (google-adk's).

Declared as the operation's ``operationId`` in snake_case (at most 60 characters),
its description (else its summary), and the JSON schema of its arguments
(:func:`~._spec.arguments_schema`).

A call (:meth:`RestApiTool.call`), in order:

1. auth (none without an auth scheme): the tool's own credential when it makes the
   request's auth by itself (an API key, HTTP auth, an OAuth2 token, or an OAuth2
   client this tool gets a token for at the token endpoint: client credentials, a
   configured code or refresh token; see ``_oauth2``; reused from ``oauth2_tokens``
   while valid; a token endpoint that fails raises
   :class:`~._oauth2.OAuth2TokenError` and sends nothing). Otherwise (no credential,
   or an OAuth2 / OpenID Connect client that needs the user's login) google-adk's
   ``ToolAuthHandler`` (``_tool_auth_handler``): the user's kept credential (refreshed
   when expired), else the client's answer to an ``adk_request_credential`` call (its
   code exchanged), else the client is asked (the run ends with that call) and the
   call answers google-adk's ``{"pending": True, "message": ...}`` without sending;
2. each argument goes where its parameter says: path parameters substituted into the
   path (percent-encoded, ``/`` included; a ``.`` or ``..`` segment refused), query
   parameters (None left out), headers and cookies (numbers as text, booleans as
   ``true``/``false``, lists and objects comma-joined), the body as JSON (or form data,
   text, bytes, as the operation's first media type says; a multipart body's
   ``format: binary`` properties as file parts, its others as fields, where google-adk's
   fails); a required argument missing with a default in its schema takes the
   default; the credential's
   parameter, the tool's default headers and ``header_provider``'s are added;
3. the request goes out (see :mod:`._network`: private targets are refused unless
   ``allow_private_network_access``);
4. the answer: a 2xx response's JSON (its text as ``{"text": ...}`` when it is not
   JSON); any other status (a redirect too) as google-adk's error, ``{"error": "Tool <name> execution
   failed. ... Execution Error: Status Code: <code>, <body>"}``; a refused target, a
   bad path argument or a timeout as the same error with its reason. A 401 to a
   request that carried a token the tool fetched itself gets the token renewed once
   and the request sent once more; a 401 rejecting a user's token
   (:func:`~._user_auth.token_rejected`) goes to google-adk's recovery: refreshed
   and the call made again, else the user asked again (pending), else google-adk's
   error saying re-authorizing did not help (``_tool_auth_handler``).
   Other transport
   failures (connection refused) are raised, and the run turns them into the call's
   error response. Known secrets are blanked out of every error text.

Logs name the tool, method, path template and status, never arguments or headers.
"""

from __future__ import annotations

import json
import logging
import re
import ssl
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit, urlunsplit

import httpx
from fastapi.openapi.models import Operation, SecurityBase

from ..._secrets import redact
from ..._types import FunctionDeclaration
from .._base import ToolContext
from .._classes import BaseTool
from ._auth import (
    AuthCredential,
    AuthCredentialTypes,
    HttpAuth,
    HttpCredentials,
    as_credential,
    as_scheme,
)
from ._auth import credential_to_param as _credential_to_param
from ._network import HttpxClientFactory, send
from ._oauth2 import CLIENT_CREDENTIALS, OAuth2TokenError, OAuth2Tokens, grant_of
from ._spec import (
    MAX_TOOL_NAME_LENGTH,
    ApiParameter,
    OperationEndpoint,
    ParsedOperation,
    arguments_schema,
    operation_parameters,
    snake_case,
)
from ._tool_auth_handler import ToolAuthHandler
from ._user_auth import token_rejected

__all__ = ["RestApiTool", "snake_to_lower_camel"]

_log = logging.getLogger("adk_actors.tools.openapi")

_USER_AGENT = "adk-actors/0.1.0"
_PENDING = {"pending": True, "message": "Needs your authorization to access your data."}
_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


def snake_to_lower_camel(snake_case_string: str) -> str:
    """``list_all_pets`` -> ``listAllPets`` (a string without ``_`` as it is)."""
    if "_" not in snake_case_string:
        return snake_case_string
    first, *rest = snake_case_string.split("_")
    return first.lower() + "".join(word.capitalize() for word in rest)


class _BadArgument(ValueError):
    """A model's argument that cannot go into the request (returned as the tool's error)."""


def _as_text(value: Any) -> str:
    """A path, header or cookie value as OpenAPI's ``simple`` style writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(_as_text(item) for item in value if item is not None)
    if isinstance(value, dict):
        return ",".join(f"{key},{_as_text(item)}" for key, item in value.items() if item is not None)
    return str(value)


def _multipart(data: Any, properties: dict[str, Any]) -> Any:
    """A multipart body's parts, for httpx's ``files``: a property whose schema has
    ``format: binary`` as a file part named after it; any other as a plain field (a
    string as it is, other values as JSON). Anything but a dict is left as it is."""
    if not isinstance(data, dict):
        return data
    parts: dict[str, Any] = {}
    for key, value in data.items():
        if value is None:
            continue
        if getattr(properties.get(key), "format", None) == "binary":
            parts[key] = (key, value.encode() if isinstance(value, str) else value)
        else:
            parts[key] = (None, value if isinstance(value, str | bytes) else json.dumps(value))
    return parts


def _path_segment(name: str, value: str) -> str:
    for segment in value.replace("\\", "/").split("/"):
        if segment in (".", ".."):
            raise _BadArgument(f"Path parameter {name!r} must not contain current-directory or "
                               "parent-directory segments.")
    return quote(value, safe="")


class RestApiTool(BaseTool):
    """One REST operation as a tool (see the module)."""

    def __init__(self, name: str, description: str, endpoint: OperationEndpoint | str,
                 operation: Operation | str | dict[str, Any], auth_scheme: Any = None, auth_credential: Any = None,
                 should_parse_operation: bool = True, ssl_verify: bool | str | ssl.SSLContext | None = None,
                 header_provider: Callable[[Any], dict[str, str]] | None = None,
                 httpx_client_factory: HttpxClientFactory | None = None, *, credential_key: str | None = None,
                 allow_private_network_access: bool = False) -> None:
        """google-adk's signature: ``endpoint`` and ``operation`` as models or their
        JSON; ``auth_scheme`` / ``auth_credential`` in any shape :mod:`._auth` takes."""
        super().__init__(name=name[:MAX_TOOL_NAME_LENGTH], description=description)
        self.endpoint = (OperationEndpoint.model_validate_json(endpoint) if isinstance(endpoint, str)
                         else endpoint)
        if isinstance(operation, str):
            operation = Operation.model_validate_json(operation)
        elif isinstance(operation, dict):
            operation = Operation.model_validate(operation)
        self.operation: Operation = operation
        self.credential_key = credential_key
        self.auth_scheme: SecurityBase | None = None
        self.auth_credential: AuthCredential | None = None
        self.configure_auth_scheme(auth_scheme)
        self.configure_auth_credential(auth_credential)
        self._default_headers: dict[str, str] = {}
        self._ssl_verify = ssl_verify
        self._header_provider = header_provider
        self._httpx_client_factory = httpx_client_factory
        self._allow_private_network_access = allow_private_network_access
        self._parameters: list[ApiParameter] = (operation_parameters(self.operation) if should_parse_operation
                                                else [])
        #: the OAuth2 token cache (its clock decides expiry; see ``_oauth2``)
        self.oauth2_tokens = OAuth2Tokens()

    @classmethod
    def from_parsed_operation(cls, parsed: ParsedOperation, ssl_verify: bool | str | ssl.SSLContext | None = None,
                              header_provider: Callable[[Any], dict[str, str]] | None = None,
                              httpx_client_factory: HttpxClientFactory | None = None, *,
                              allow_private_network_access: bool = False) -> RestApiTool:
        """The tool of one parsed operation (its parameters as parsed)."""
        tool = cls(name=snake_case(parsed.name), description=parsed.description, endpoint=parsed.endpoint,
                   operation=parsed.operation, auth_scheme=parsed.auth_scheme, should_parse_operation=False,
                   ssl_verify=ssl_verify, header_provider=header_provider,
                   httpx_client_factory=httpx_client_factory,
                   allow_private_network_access=allow_private_network_access)
        tool._parameters = parsed.parameters
        return tool

    def _get_declaration(self) -> FunctionDeclaration:
        return FunctionDeclaration(name=self.name, description=self.description,
                                   parameters=arguments_schema(self.operation, self._parameters))

    def configure_auth_scheme(self, auth_scheme: Any) -> None:
        """Use ``auth_scheme`` (a security scheme model or dict; None: no auth)."""
        self.auth_scheme = as_scheme(auth_scheme)

    def configure_auth_credential(self, auth_credential: Any = None) -> None:
        """Use ``auth_credential`` (ours, google-adk's, a dict or JSON; None: none)."""
        self.auth_credential = as_credential(auth_credential)

    def configure_credential_key(self, credential_key: str | None = None) -> None:
        """Look the credential up under ``credential_key`` when the tool has none."""
        self.credential_key = credential_key

    def configure_ssl_verify(self, ssl_verify: bool | str | ssl.SSLContext | None = None) -> None:
        self._ssl_verify = ssl_verify

    def set_default_headers(self, headers: dict[str, str]) -> None:
        """Headers sent with every call (an argument's header of the same name wins)."""
        self._default_headers = headers

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext | None) -> Any:
        return await self.call(args=args, tool_context=tool_context)

    def _stored_credential(self, tool_context: ToolContext | None, key: str | None = None) -> AuthCredential | None:
        """The credential service's credential under ``key`` (default
        ``credential_key``), as ours."""
        key = key or self.credential_key
        if tool_context is None or not key:
            return None
        stored = tool_context.get_credential(key)
        if stored is None:
            return None

        def secret(value: Any) -> str | None:
            plain = value.get_secret_value() if hasattr(value, "get_secret_value") else value
            return plain if isinstance(plain, str) else None

        if getattr(stored, "api_key", None) is not None:
            return as_credential(AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key=secret(stored.api_key)))
        token = secret(getattr(stored, "access_token", None))
        if token:
            return as_credential(AuthCredential(auth_type=AuthCredentialTypes.HTTP, http=HttpAuth(
                scheme="bearer", credentials=HttpCredentials(token=token))))
        return None

    def _serves_itself(self) -> bool:
        """Whether the tool's own credential makes the request's auth without the user
        (an API key, HTTP auth, an OAuth2 token, or an OAuth2 client this tool can get a
        token for: client credentials, a configured code or refresh token)."""
        credential = self.auth_credential
        if credential is None:
            return False
        if credential.api_key or credential.http is not None:
            return True
        oauth2 = credential.oauth2
        if oauth2 is None:
            return credential.auth_type not in (AuthCredentialTypes.OAUTH2, AuthCredentialTypes.OPEN_ID_CONNECT)
        if oauth2.access_token or oauth2.auth_code or oauth2.auth_response_uri or oauth2.refresh_token:
            return True
        return bool(oauth2.client_id) and grant_of(self.auth_scheme) == CLIENT_CREDENTIALS

    def _auth_handler(self, tool_context: ToolContext | None) -> ToolAuthHandler:
        return ToolAuthHandler.from_tool_context(
            tool_context, self.auth_scheme, self.auth_credential, credential_key=self.credential_key,
            verify=self._ssl_verify, client_factory=self._httpx_client_factory,
            allow_private_network_access=self._allow_private_network_access)

    async def call(self, *, args: dict[str, Any], tool_context: ToolContext | None) -> Any:
        """Call the API with the model's ``args`` (see the module)."""
        params = list(self._parameters)
        values = dict(args or {})
        for param in params:
            if param.py_name not in values and param.required and param.param_schema.default is not None:
                values[param.py_name] = param.param_schema.default
        credential: AuthCredential | None = None
        handler: ToolAuthHandler | None = None
        if self.auth_scheme is not None:
            auth_param: ApiParameter | None = None
            auth_values: dict[str, Any] | None = None
            if self._serves_itself():
                credential = self.auth_credential
                await self._oauth2_token(credential)
                auth_param, auth_values = _credential_to_param(self.auth_scheme, credential)
            if auth_param is None or not auth_values:
                credential = None
                handler = self._auth_handler(tool_context)
                prepared = await handler.prepare_auth_credentials()
                if prepared.state == "pending":
                    return dict(_PENDING)
                credential = prepared.auth_credential
                auth_param, auth_values = _credential_to_param(self.auth_scheme, credential)
            if auth_param is not None and auth_values:
                params.insert(0, auth_param)
                values.update(auth_values)
        try:
            request = self._request(params, values)
        except _BadArgument as exc:
            return self._error(str(exc))
        if self._header_provider is not None and tool_context is not None:
            request["headers"].update(self._header_provider(tool_context) or {})
        where = f"{request['method'].upper()} {self.endpoint.path}"
        try:
            response = await self._send(request)
            if (response.status_code == 401 and handler is None and credential is not None
                    and self._renewable(credential)):
                _log.info("tool %s: %s answered 401: the OAuth2 token is renewed once", self.name, where)
                self.oauth2_tokens.forget(credential)
                await self._oauth2_token(credential)
                auth_param, auth_values = _credential_to_param(self.auth_scheme, credential)  # type: ignore[arg-type]
                if auth_param is not None and auth_values:
                    request["headers"].update({auth_param.original_name: auth_values[auth_param.py_name]})
                    response = await self._send(request)
        except ValueError as exc:
            if isinstance(exc, OAuth2TokenError):
                raise
            return self._error(str(exc))
        except httpx.TimeoutException as exc:
            _log.warning("tool %s: %s timed out", self.name, where)
            return self._error(f"Request timed out ({type(exc).__name__}).")
        if handler is not None:
            if response.status_code != 401:
                handler.note_successful_call()
            if (response.status_code == 401 and credential is not None and tool_context is not None
                    and token_rejected(response.status_code, response.headers.get("www-authenticate"))):
                recovered = await self._recover(handler, args, tool_context, response, where)
                if recovered is not None:
                    return recovered
        if not response.is_success:  # a redirect too (never followed), as google-adk's
            _log.warning("tool %s: %s answered %d", self.name, where, response.status_code)
            return self._error(f"Status Code: {response.status_code}, {response.text}")
        _log.debug("tool %s: %s answered %d", self.name, where, response.status_code)
        try:
            return response.json()
        except ValueError:
            return {"text": redact(response.text)}

    async def _recover(self, handler: ToolAuthHandler, args: dict[str, Any], tool_context: ToolContext,
                       response: httpx.Response, where: str) -> Any:
        """After the API rejected the user's token (google-adk's recovery, one call
        chain at a time): refreshed, the call is made again; the user asked again,
        the pending answer; the budget spent, google-adk's error; else None."""
        with handler.claim_recovery() as claimed:
            if not claimed:
                return None
            recovery = await handler.handle_unauthorized_error()
            _log.warning("tool %s: %s rejected the user's token: %s", self.name, where, recovery)
            if recovery == "refreshed":
                return await self.call(args=args, tool_context=tool_context)
            if recovery == "reauth_requested":
                return dict(_PENDING)
            if recovery == "reauth_limit_reached":
                return {"error": redact(
                    f"Tool {self.name} execution failed. The user already re-authorized this connection and the "
                    "API still rejected the credential, so retrying will not help. Report this to the user and "
                    "suggest checking the application's access or permission settings. Status Code: "
                    f"{response.status_code}, {response.text}")}
        return None

    async def _send(self, request: dict[str, Any]) -> httpx.Response:
        return await send(request, verify=self._ssl_verify, client_factory=self._httpx_client_factory,
                          allow_private_network_access=self._allow_private_network_access)

    def _renewable(self, credential: AuthCredential | None) -> bool:
        """Whether a 401 may be met with a new OAuth2 token: the tool's own OAuth2
        credential under a scheme with a grant this tool can run."""
        return (credential is not None and credential is self.auth_credential and credential.oauth2 is not None
                and credential.http is None and grant_of(self.auth_scheme) is not None)

    async def _oauth2_token(self, credential: AuthCredential | None) -> None:
        """For an OAuth2 or OpenID Connect scheme and a credential with an OAuth2
        client: make sure it holds a valid access token (``oauth2_tokens``: reused
        while valid, else fetched; see ``_oauth2``). Raises OAuth2TokenError."""
        if credential is None or credential.oauth2 is None or credential.http is not None:
            return
        if grant_of(self.auth_scheme) is None or self.auth_scheme is None:
            return
        await self.oauth2_tokens.token(self.auth_scheme, credential, verify=self._ssl_verify,
                                       client_factory=self._httpx_client_factory,
                                       allow_private_network_access=self._allow_private_network_access)

    def _request(self, params: list[ApiParameter], values: dict[str, Any]) -> dict[str, Any]:
        """httpx's request arguments for ``values`` (see the module); a path argument
        that cannot be placed is a :class:`_BadArgument`."""
        by_name = {param.py_name: param for param in params}
        path: dict[str, str] = {}
        query: dict[str, Any] = {}
        headers: dict[str, str] = {"User-Agent": f"{_USER_AGENT} (tool: {self.name})"}
        cookies: dict[str, str] = {}
        if self.auth_credential is not None and self.auth_credential.http is not None:
            headers.update(self.auth_credential.http.additional_headers or {})
        for key, value in values.items():
            param = by_name.get(key)
            if param is None:
                continue  # not an argument of this operation: ignored
            if param.param_location == "path":
                path[param.original_name] = _path_segment(param.original_name, _as_text(value))
            elif value is None:
                continue
            elif param.param_location == "query":
                query[param.original_name] = value
            elif param.param_location == "header":
                headers[param.original_name] = _as_text(value)
            elif param.param_location == "cookie":
                cookies[param.original_name] = _as_text(value)

        def place(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in path:
                missing = next((p.py_name for p in params if p.param_location == "path" and p.original_name == name),
                               name)
                raise _BadArgument(f"Missing required path parameter '{missing}'.")
            return path[name]

        url = f"{(self.endpoint.base_url or '').removesuffix('/')}{_PLACEHOLDER.sub(place, self.endpoint.path)}"
        split = urlsplit(url)
        for part in (split.query, split.fragment):  # a query written into the spec's path
            for key, found in parse_qs(part).items():
                query.setdefault(key, found[0] if len(found) == 1 else found)
        url = urlunsplit(split._replace(query="", fragment=""))
        body = self._body(params, values)
        if "content_type" in body:
            headers["Content-Type"] = body.pop("content_type")
        for key, value in self._default_headers.items():
            headers.setdefault(key, value)
        return {"method": self.endpoint.method.lower(), "url": url, "params": query, "headers": headers,
                "cookies": cookies, **body}

    def _body(self, params: list[ApiParameter], values: dict[str, Any]) -> dict[str, Any]:
        """The body's httpx arguments (and its ``content_type``) for the first media type."""
        body = self.operation.requestBody
        content = getattr(body, "content", None)
        if not content:
            return {}
        media_type, media = next(iter(content.items()))
        schema = media.schema_
        data: Any = None
        if getattr(schema, "type", None) == "object":
            data = {p.original_name: values[p.py_name] for p in params
                    if p.param_location == "body" and p.py_name in values}
        else:
            data = next((values.get(p.py_name) for p in params if p.param_location == "body"), None)
        out: dict[str, Any] = {}
        if media_type == "application/json" or media_type.endswith("+json"):
            if data is not None:
                out["json"] = data
        elif media_type == "multipart/form-data":
            out["files"] = _multipart(data, getattr(schema, "properties", None) or {})
        elif media_type in ("application/x-www-form-urlencoded", "application/octet-stream", "text/plain"):
            out["data"] = data
        if media_type and media_type != "multipart/form-data":
            out["content_type"] = media_type
        return out

    def _error(self, message: str) -> dict[str, str]:
        """google-adk's error answer, known secrets blanked out."""
        return {"error": redact(
            f"Tool {self.name} execution failed. Analyze this execution error and your inputs. Retry with "
            f"adjustments if applicable. But make sure don't retry more than 3 times. Execution Error: {message}")}

    def __str__(self) -> str:
        return f'RestApiTool(name="{self.name}", description="{self.description}", endpoint="{self.endpoint}")'

    def __repr__(self) -> str:
        scheme = _scheme_kind(self.auth_scheme)
        return f'RestApiTool(name="{self.name}", endpoint="{self.endpoint}", auth_scheme={scheme!r})'


def _scheme_kind(scheme: SecurityBase | None) -> str | None:
    return None if scheme is None else str(getattr(scheme.type_, "value", scheme.type_))
