"""RestApiTool: one operation of an OpenAPI spec as a tool (google-adk's).

Declared as the operation's ``operationId`` in snake_case (at most 60 characters),
its description (else its summary), and the JSON schema of its arguments
(:func:`~._spec.arguments_schema`).

A call (:meth:`RestApiTool.call`), in order:

1. auth: with an auth scheme, the credential is the tool's own, else the one the
   credential service holds under ``credential_key`` for this user (an API key, or an
   OAuth2 access token sent as a bearer token); with none (or an OAuth2 credential
   without a token), the call asks for one under ``credential_key`` (else
   ``openapi_<tool name>``) with the scheme as ``auth_scheme``
   (``tool_context.request_credential``, which ends the turn with an auth request),
   sends nothing, and answers google-adk's
   ``{"pending": True, "message": ...}``. Without a scheme nothing is added. Under
   an OAuth2 or OpenID Connect scheme, the tool's own credential with an OAuth2
   client (``client_id``...) gets its access token from the token endpoint first
   (client credentials, an authorization code, or a refresh token; see ``_oauth2``),
   reused from ``oauth2_tokens`` while it is valid; a token endpoint that fails
   raises :class:`~._oauth2.OAuth2TokenError` and sends nothing. Under an
   authorization-code flow whose tool credential is only the client, each user has
   their own token in the credential service, got from their auth response in the
   session state and stored there (see ``_user_auth``); the auth request then
   carries the authorization URL;
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
   request that carried a token the tool fetched gets the token renewed once and the
   request sent once more; a 401 rejecting a user's own token (authorization code
   flow) asks the user again, at most once until a call succeeds (``_user_auth``).
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
from ._oauth2 import OAuth2TokenError, OAuth2Tokens, grant_of
from ._spec import (
    MAX_TOOL_NAME_LENGTH,
    ApiParameter,
    OperationEndpoint,
    ParsedOperation,
    arguments_schema,
    operation_parameters,
    snake_case,
)
from ._user_auth import (
    auth_request,
    auth_response,
    code_of,
    note_success,
    reauthorize,
    stored_form,
    token_rejected,
    user_flow,
)

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

    async def call(self, *, args: dict[str, Any], tool_context: ToolContext | None) -> Any:
        """Call the API with the model's ``args`` (see the module)."""
        params = list(self._parameters)
        values = dict(args or {})
        for param in params:
            if param.py_name not in values and param.required and param.param_schema.default is not None:
                values[param.py_name] = param.param_schema.default
        credential: AuthCredential | None = None
        per_user = False
        if self.auth_scheme is not None:
            per_user = user_flow(self.auth_scheme, self.auth_credential)
            if per_user:
                credential = await self._user_credential(tool_context)
            else:
                credential = self.auth_credential or self._stored_credential(tool_context)
                await self._oauth2_token(credential)
            auth_param, auth_values = _credential_to_param(self.auth_scheme, credential)
            if auth_param is None or not auth_values:
                if tool_context is not None:
                    key = self.credential_key or f"openapi_{self.name}"
                    asked = {"auth_scheme": self.auth_scheme.model_dump(mode="json", by_alias=True, exclude_none=True)}
                    if per_user and self.auth_credential is not None and self.auth_credential.oauth2 is not None:
                        asked = auth_request(self.auth_scheme, self.auth_credential.oauth2, key)
                    tool_context.request_credential(key, asked)
                return dict(_PENDING)
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
            if (response.status_code == 401 and credential is not None and self.auth_scheme is not None
                    and self._renewable(credential)):
                _log.info("tool %s: %s answered 401: the OAuth2 token is renewed once", self.name, where)
                self.oauth2_tokens.forget(credential)
                await self._oauth2_token(credential)
                auth_param, auth_values = _credential_to_param(self.auth_scheme, credential)
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
        if per_user and tool_context is not None and self.auth_scheme is not None \
                and self.auth_credential is not None and self.auth_credential.oauth2 is not None:
            key = self.credential_key or f"openapi_{self.name}"
            if token_rejected(response.status_code, response.headers.get("www-authenticate")):
                _log.warning("tool %s: %s rejected the user's token: the user is asked again", self.name, where)
                return reauthorize(tool_context, self.name, key, auth_request(
                    self.auth_scheme, self.auth_credential.oauth2, key), response.status_code, response.text)
            note_success(tool_context, key)
        if not response.is_success:  # a redirect too (never followed), as google-adk's
            _log.warning("tool %s: %s answered %d", self.name, where, response.status_code)
            return self._error(f"Status Code: {response.status_code}, {response.text}")
        _log.debug("tool %s: %s answered %d", self.name, where, response.status_code)
        try:
            return response.json()
        except ValueError:
            return {"text": redact(response.text)}

    async def _user_credential(self, tool_context: ToolContext | None) -> AuthCredential | None:
        """This user's credential under the authorization code flow (``_user_auth``):
        the credential service's, else one from the user's auth response in the state
        (exchanged, stored, the state entry cleared), else None (the user is asked).
        Raises OpenApiAuthError for an auth response that cannot be used,
        OAuth2TokenError when the token endpoint refuses the code."""
        if tool_context is None or self.auth_scheme is None or self.auth_credential is None \
                or self.auth_credential.oauth2 is None:
            return None
        key = self.credential_key or f"openapi_{self.name}"
        stored = self._stored_credential(tool_context, key)
        if stored is not None:
            return stored
        found = auth_response(tool_context.state, key)
        if found is None:
            return None
        name, answer = found
        assert answer.oauth2 is not None
        client = self.auth_credential.oauth2
        if answer.oauth2.access_token:  # a token the client got itself (google-adk's string form)
            tokens = client.model_copy(update={"access_token": answer.oauth2.access_token})
        else:
            tokens = client.model_copy(update={"auth_code": code_of(answer.oauth2),
                                               "redirect_uri": answer.oauth2.redirect_uri or client.redirect_uri})
            await OAuth2Tokens(clock=self.oauth2_tokens.clock).token(
                self.auth_scheme, AuthCredential(auth_type=AuthCredentialTypes.OAUTH2, oauth2=tokens),
                verify=self._ssl_verify, client_factory=self._httpx_client_factory,
                allow_private_network_access=self._allow_private_network_access)
        tool_context.state[name] = None  # the code is spent: it is not read again
        service = tool_context.invocation.credentials
        if service is not None:
            session = tool_context.invocation.session
            service.put(session.app_name, session.user_id, key, stored_form(self.auth_scheme, tokens))
            _log.info("tool %s: the user's authorization was exchanged and stored under %r", self.name, key)
        return as_credential(AuthCredential(auth_type=AuthCredentialTypes.HTTP, http=HttpAuth(
            scheme="bearer", credentials=HttpCredentials(token=tokens.access_token))))

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
