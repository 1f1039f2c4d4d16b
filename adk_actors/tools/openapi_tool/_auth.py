"""Auth for the OpenAPI tools, in google-adk's shapes.

A scheme says where a credential goes (an OpenAPI security scheme: fastapi's
``APIKey``, ``HTTPBearer``, ``HTTPBase``, ``OAuth2``, ``OpenIdConnect``, or the same
as a dict); a credential is what goes there (:class:`AuthCredential`, the fields of
google-adk's: ``api_key``, ``http`` with a token or a user name and password, ``oauth2``
with a client, a code or tokens, ``service_account`` with a Google service account's
key or the application default credentials: :class:`ServiceAccount`). google-adk's own
objects are taken too, field by field. Getting an OAuth2 token (client credentials, an
authorization code, a refresh) is ``_oauth2``'s; turning a service account into a
bearer token is ``_service_account``'s.

:func:`credential_to_param` turns a (scheme, credential) pair into one request
parameter and its value, as google-adk does: an API key into the header, query
parameter or cookie the scheme names; an HTTP token into ``Authorization: Bearer``;
an HTTP user name and password into ``Authorization: Basic``; an OAuth2 or OpenID
Connect scheme's token (an ``http`` token, or an ``oauth2`` access token) into
``Authorization: Bearer``. A service-account credential becomes no parameter by itself:
it is exchanged for a token first (``_service_account``), and that token is sent.

Secrets stay out of sight: the credential fields that hold one are left out of
``repr`` and validation errors, and every secret a credential carries is registered
with :mod:`adk_actors._secrets` when the credential is taken, so events and error
texts of this process show ``***`` in its place.
"""

from __future__ import annotations

import base64
import enum
from typing import Annotated, Any, Literal

import httpx
from fastapi.openapi.models import (
    APIKey,
    APIKeyIn,
    HTTPBase,
    HTTPBearer,
    OAuth2,
    OAuthFlowClientCredentials,
    OAuthFlows,
    OpenIdConnect,
    Schema,
    SecurityBase,
    SecuritySchemeType,
)
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from ..._secrets import register_secret
from ._errors import OpenApiAuthError
from ._spec import ApiParameter

__all__ = [
    "INTERNAL_AUTH_PREFIX",
    "AuthCredential",
    "AuthCredentialTypes",
    "HttpAuth",
    "HttpCredentials",
    "OAuth2Auth",
    "OpenIdConfig",
    "OpenIdConnectWithConfig",
    "ServiceAccount",
    "ServiceAccountCredential",
    "as_credential",
    "as_scheme",
    "credential_to_param",
    "dict_to_auth_scheme",
    "openid_dict_to_scheme_credential",
    "openid_url_to_scheme_credential",
    "service_account_dict_to_scheme_credential",
    "service_account_scheme_credential",
    "token_to_scheme_credential",
]

#: The argument names auth parameters take inside a call (never a declared name).
INTERNAL_AUTH_PREFIX = "_auth_prefix_vaf_"


class _Model(BaseModel, hide_input_in_errors=True):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


class AuthCredentialTypes(enum.StrEnum):
    """google-adk's credential kinds."""

    API_KEY = "apiKey"
    HTTP = "http"
    OAUTH2 = "oauth2"
    OPEN_ID_CONNECT = "openIdConnect"
    SERVICE_ACCOUNT = "serviceAccount"


class HttpCredentials(_Model):
    username: str | None = None
    password: Annotated[str | None, Field(repr=False)] = None
    token: Annotated[str | None, Field(repr=False)] = None


class HttpAuth(_Model):
    """HTTP auth: ``scheme`` (``bearer``, ``basic``), its credentials, and headers
    sent with every request."""

    scheme: str
    credentials: HttpCredentials
    additional_headers: Annotated[dict[str, str] | None, Field(repr=False)] = None


class OAuth2Auth(_Model):
    """An OAuth2 client and its tokens, google-adk's fields: the client
    (``client_id``, ``client_secret``, ``token_endpoint_auth_method``), an
    authorization code to exchange (``auth_code``, or the ``auth_response_uri`` that
    carries it, ``redirect_uri``; the request's ``auth_uri`` and ``state``) and the tokens
    (``access_token``, ``refresh_token``, ``id_token``, ``expires_at``/``expires_in``);
    see ``_oauth2`` for their use."""

    client_id: str | None = None
    client_secret: Annotated[str | None, Field(repr=False)] = None
    redirect_uri: str | None = None
    #: the authorization URL the user is sent to, and its ``state`` (an auth request's)
    auth_uri: str | None = None
    state: str | None = None
    #: the URL the authorization server redirected the user to (an auth response's; it holds the code)
    auth_response_uri: Annotated[str | None, Field(repr=False)] = None
    auth_code: Annotated[str | None, Field(repr=False)] = None
    access_token: Annotated[str | None, Field(repr=False)] = None
    refresh_token: Annotated[str | None, Field(repr=False)] = None
    id_token: Annotated[str | None, Field(repr=False)] = None
    expires_at: int | None = None
    expires_in: int | None = None
    token_endpoint_auth_method: Literal["client_secret_basic", "client_secret_post", "client_secret_jwt",
                                        "private_key_jwt", "none"] | None = None


class ServiceAccountCredential(_Model):
    """A Google service account's JSON key, google-adk's fields (``type`` on the wire,
    ``type_`` in Python). ``private_key_id`` and ``private_key`` are left out of
    ``repr`` and validation errors, and registered as secrets when a credential
    carrying them is taken (:func:`as_credential`)."""

    type_: str = Field("", alias="type")
    project_id: str
    private_key_id: Annotated[str, Field(repr=False)]
    private_key: Annotated[str, Field(repr=False)]
    client_email: str
    client_id: str
    auth_uri: str
    token_uri: str
    auth_provider_x509_cert_url: str
    client_x509_cert_url: str
    universe_domain: str


class ServiceAccount(_Model):
    """What a service-account credential asks for, google-adk's fields: the key
    (``service_account_credential``) or the application default credentials
    (``use_default_credential``); the ``scopes`` of an access token (needed with a key;
    by default the cloud-platform scope with the default credentials); or an ID token
    for ``audience`` instead (``use_id_token``). Validation, in order: no key without
    the default credentials is a ValueError, and so is an ID token without an
    audience (pydantic's ``ValidationError``, no input value in its text)."""

    service_account_credential: ServiceAccountCredential | None = None
    scopes: list[str] | None = None
    use_default_credential: bool | None = False
    use_id_token: bool | None = False
    audience: str | None = None

    @model_validator(mode="after")
    def _check(self) -> ServiceAccount:
        if not self.use_default_credential and self.service_account_credential is None:
            raise ValueError("a service account needs its key (service_account_credential) unless "
                             "use_default_credential is set")
        if self.use_id_token and not self.audience:
            raise ValueError("an ID token (use_id_token) needs the audience it is for: the URL of the "
                             "service that receives it")
        return self


class AuthCredential(_Model):
    """A credential, as google-adk's ``AuthCredential``."""

    auth_type: AuthCredentialTypes
    resource_ref: str | None = None
    api_key: Annotated[str | None, Field(repr=False)] = None
    http: HttpAuth | None = None
    oauth2: OAuth2Auth | None = None
    service_account: Annotated[ServiceAccount | None, Field(repr=False)] = None


def _register(credential: AuthCredential) -> None:
    register_secret(credential.api_key)
    if credential.http is not None:
        register_secret(credential.http.credentials.token)
        register_secret(credential.http.credentials.password)
        for value in (credential.http.additional_headers or {}).values():
            register_secret(value)
    if credential.oauth2 is not None:
        for secret in (credential.oauth2.access_token, credential.oauth2.refresh_token,
                       credential.oauth2.client_secret, credential.oauth2.id_token, credential.oauth2.auth_code,
                       credential.oauth2.auth_response_uri):
            register_secret(secret)
    key = credential.service_account.service_account_credential if credential.service_account else None
    if key is not None:
        register_secret(getattr(key, "private_key", None))
        register_secret(getattr(key, "private_key_id", None))


def as_credential(value: Any) -> AuthCredential | None:
    """``value`` (ours, google-adk's, a dict of its fields or their JSON) as our
    :class:`AuthCredential`, its secrets registered; None as None. Raises
    :class:`OpenApiAuthError` naming the field that does not fit (never its value)."""
    if value is None or isinstance(value, AuthCredential):
        credential = value
    else:
        try:
            if isinstance(value, str):
                credential = AuthCredential.model_validate_json(value)
            else:
                if isinstance(value, BaseModel):
                    value = value.model_dump(mode="json", exclude_none=True)
                credential = AuthCredential.model_validate(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(step) for step in first["loc"]) or "value"
            raise OpenApiAuthError(f"not an auth credential: {where}: {first['msg']}") from None
    if credential is not None:
        _register(credential)
    return credential


class OpenIdConnectWithConfig(SecurityBase):
    """google-adk's OpenID Connect scheme with its provider's configuration written
    out (``authorization_endpoint``, ``token_endpoint``, ``grant_types_supported``...)
    instead of a discovery URL."""

    type_: SecuritySchemeType = Field(default=SecuritySchemeType.openIdConnect, alias="type")
    authorization_endpoint: str
    token_endpoint: str
    userinfo_endpoint: str | None = None
    revocation_endpoint: str | None = None
    token_endpoint_auth_methods_supported: list[str] | None = None
    grant_types_supported: list[str] | None = None
    scopes: list[str] | None = None


def dict_to_auth_scheme(data: dict[str, Any]) -> SecurityBase:
    """An OpenAPI security scheme object as fastapi's model of it (``apiKey``,
    ``http`` bearer or other, ``oauth2``, ``openIdConnect``; an ``openIdConnect`` one
    with a ``token_endpoint`` as :class:`OpenIdConnectWithConfig`). Raises
    :class:`OpenApiAuthError` for a missing or unknown ``type`` or fields that do
    not fit it."""
    kind = data.get("type")
    models: dict[str, type[SecurityBase]] = {"apiKey": APIKey, "oauth2": OAuth2, "openIdConnect": OpenIdConnect}
    if kind == "openIdConnect" and "token_endpoint" in data:
        models["openIdConnect"] = OpenIdConnectWithConfig
    if kind == "http":
        model: type[SecurityBase] = HTTPBearer if str(data.get("scheme", "")).lower() == "bearer" else HTTPBase
    elif isinstance(kind, str) and kind in models:
        model = models[kind]
    elif kind is None:
        raise OpenApiAuthError("a security scheme needs a 'type'")
    else:
        raise OpenApiAuthError(f"unknown security scheme type {kind!r} (apiKey, http, oauth2, openIdConnect)")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(step) for step in first["loc"]) or "value"
        raise OpenApiAuthError(f"invalid {kind} security scheme: {where}: {first['msg']}") from None


def as_scheme(value: Any) -> SecurityBase | None:
    """``value`` (fastapi's model, google-adk's ``OpenIdConnectWithConfig`` or any
    model of the same fields, or a dict) as fastapi's security scheme model; None as None."""
    if value is None or isinstance(value, SecurityBase):
        return value
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if not isinstance(value, dict):
        raise OpenApiAuthError(f"an auth scheme is an OpenAPI security scheme or a dict, not {type(value).__name__}")
    return dict_to_auth_scheme(value)


def _kind(scheme: SecurityBase) -> str:
    return str(getattr(scheme.type_, "value", scheme.type_))


def _header(value: str, description: str) -> tuple[ApiParameter, dict[str, Any]]:
    param = ApiParameter("Authorization", "header", Schema(type="string"), description,
                         INTERNAL_AUTH_PREFIX + "Authorization")
    register_secret(value)
    return param, {param.py_name: value}


def credential_to_param(scheme: SecurityBase, credential: AuthCredential | None,
                        ) -> tuple[ApiParameter | None, dict[str, Any] | None]:
    """The request parameter ``credential`` becomes under ``scheme`` and its value
    (see the module); (None, None) when there is nothing to send (no credential, an
    OAuth2 credential without a token, or a service account not yet exchanged). Raises :class:`OpenApiAuthError` when the
    credential does not fit the scheme."""
    if credential is None or credential.auth_type == AuthCredentialTypes.SERVICE_ACCOUNT:
        return None, None
    kind = _kind(scheme)
    if kind == "apiKey" and credential.api_key:
        where = getattr(scheme, "in_", None)
        location = str(getattr(where, "value", where))
        if location not in ("header", "query", "cookie"):
            raise OpenApiAuthError(f"an API key goes in a header, query or cookie, not {location!r}")
        name = str(getattr(scheme, "name", "") or "")
        param = ApiParameter(name, location, Schema(type="string"), scheme.description or "",
                             INTERNAL_AUTH_PREFIX + name)
        register_secret(credential.api_key)
        return param, {param.py_name: credential.api_key}
    if credential.auth_type == AuthCredentialTypes.HTTP:
        http = credential.http
        if http is not None and http.credentials.token:
            return _header(f"Bearer {http.credentials.token}", scheme.description or "Bearer token")
        if (http is not None and http.scheme.lower() == "basic"
                and (http.credentials.username is not None or http.credentials.password is not None)):
            username = http.credentials.username or ""
            if ":" in username:
                raise OpenApiAuthError("invalid HTTP auth credentials: a user name cannot contain ':'")
            pair = f"{username}:{http.credentials.password or ''}".encode()
            return _header(f"Basic {base64.b64encode(pair).decode('ascii')}",
                           scheme.description or "Basic authentication")
        raise OpenApiAuthError("invalid HTTP auth credentials: no token, nor a user name and password")
    if kind in ("oauth2", "openIdConnect"):
        if credential.http is not None and credential.http.credentials.token:
            return _header(f"Bearer {credential.http.credentials.token}", scheme.description or "Bearer token")
        if credential.oauth2 is not None and credential.oauth2.access_token:
            return _header(f"Bearer {credential.oauth2.access_token}", scheme.description or "Bearer token")
        return None, None
    raise OpenApiAuthError(f"a {credential.auth_type.value} credential does not fit a {kind} security scheme")


def token_to_scheme_credential(token_type: Literal["apikey", "oauth2Token"],
                               location: Literal["header", "query", "cookie"] | None = None,
                               name: str | None = None, credential_value: str | None = None,
                               ) -> tuple[SecurityBase, AuthCredential | None]:
    """google-adk's helper: an API key (``"apikey"``, in ``location`` under ``name``)
    or a bearer token (``"oauth2Token"``, always the Authorization header) as a
    (scheme, credential) pair; the credential is None without ``credential_value``.
    Raises :class:`OpenApiAuthError` for another token type or API-key location."""
    if token_type == "apikey":
        if location not in ("header", "query", "cookie"):
            raise OpenApiAuthError(f"invalid location for an API key: {location!r}")
        scheme: SecurityBase = APIKey.model_validate({"type": "apiKey", "in": APIKeyIn(location), "name": name})
        credential = (AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key=credential_value)
                      if credential_value else None)
    elif token_type == "oauth2Token":
        scheme = HTTPBearer(bearerFormat="JWT")
        credential = (AuthCredential(auth_type=AuthCredentialTypes.HTTP, http=HttpAuth(
            scheme="bearer", credentials=HttpCredentials(token=credential_value))) if credential_value else None)
    else:
        raise OpenApiAuthError(f"invalid token type {token_type!r} ('apikey' or 'oauth2Token')")
    if credential is not None:
        _register(credential)
    return scheme, credential


class OpenIdConfig(BaseModel, hide_input_in_errors=True):
    """google-adk's OpenID Connect client configuration (its fields)."""

    client_id: str
    auth_uri: str
    token_uri: str
    client_secret: Annotated[str, Field(repr=False)]
    redirect_uri: str | None


def openid_dict_to_scheme_credential(config_dict: dict[str, Any], scopes: list[str], credential_dict: dict[str, Any],
                                     ) -> tuple[OpenIdConnectWithConfig, AuthCredential]:
    """google-adk's helper: an OpenID provider's configuration (at least
    ``authorization_endpoint`` and ``token_endpoint``) and ``scopes`` as an
    :class:`OpenIdConnectWithConfig` scheme, and the client in ``credential_dict``
    (``client_id``, ``client_secret``, maybe ``redirect_uri``; also as the one entry of a
    client file downloaded from Google, ``{"web": {...}}``) as an ``openIdConnect``
    credential, its secret registered. ``config_dict`` gets the ``scopes`` (and an empty
    ``openIdConnectUrl`` when it has none), as google-adk's. A configuration that does
    not fit, or a client without its id or secret, is a ValueError
    (:class:`OpenApiAuthError`) naming what is wrong, never a secret."""
    config_dict["scopes"] = scopes
    config_dict.setdefault("openIdConnectUrl", "")
    try:
        scheme = OpenIdConnectWithConfig.model_validate(config_dict)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(step) for step in first["loc"]) or "value"
        raise OpenApiAuthError(f"Invalid OpenID Connect configuration: {where}: {first['msg']}") from None
    if len(credential_dict) == 1:
        [inner] = credential_dict.values()
        if isinstance(inner, dict) and "client_id" in inner and "client_secret" in inner:
            credential_dict = inner
    missing = [name for name in ("client_id", "client_secret") if name not in credential_dict]
    if missing:
        raise OpenApiAuthError(f"Missing required fields in credential_dict: {', '.join(missing)}")
    credential = AuthCredential(auth_type=AuthCredentialTypes.OPEN_ID_CONNECT, oauth2=OAuth2Auth(
        client_id=credential_dict["client_id"], client_secret=credential_dict["client_secret"],
        redirect_uri=credential_dict.get("redirect_uri")))
    _register(credential)
    return scheme, credential


def openid_url_to_scheme_credential(openid_url: str, scopes: list[str], credential_dict: dict[str, Any],
                                    ) -> tuple[OpenIdConnectWithConfig, AuthCredential]:
    """google-adk's helper: the provider's configuration fetched from its discovery
    URL (``GET``, 10 s), then :func:`openid_dict_to_scheme_credential` with
    ``openIdConnectUrl`` set to the URL. A URL that cannot be reached or an answer that
    is not JSON is a ValueError (:class:`OpenApiAuthError`); a non-2xx answer is
    httpx's ``HTTPStatusError``, as google-adk's."""
    try:
        response = httpx.get(openid_url, timeout=10)
        response.raise_for_status()
        config_dict = response.json()
    except httpx.RequestError as exc:
        raise OpenApiAuthError(f"Failed to fetch OpenID configuration from {openid_url}: "
                               f"{type(exc).__name__}: {exc}") from None
    except ValueError as exc:
        raise OpenApiAuthError(f"Invalid JSON response from OpenID configuration endpoint {openid_url}: "
                               f"{exc}") from None
    if not isinstance(config_dict, dict):
        raise OpenApiAuthError(f"Invalid JSON response from OpenID configuration endpoint {openid_url}: "
                               "not an object")
    config_dict["openIdConnectUrl"] = openid_url
    return openid_dict_to_scheme_credential(config_dict, scopes, credential_dict)


#: google-adk's placeholder token URL of a service account's scheme (no request goes
#: there: the key's own ``token_uri``, or the default credentials, say where to go)
_SERVICE_ACCOUNT_TOKEN_URL = "https://oauth2.mtls.googleapis.com/token"


def _service_account_scheme() -> OAuth2:
    """An OAuth2 client-credentials scheme, as google-adk gives a service account:
    ``CredentialManager`` exchanges the credential of such a scheme without asking."""
    return OAuth2(flows=OAuthFlows(clientCredentials=OAuthFlowClientCredentials(
        tokenUrl=_SERVICE_ACCOUNT_TOKEN_URL, scopes={})))


def service_account_scheme_credential(config: ServiceAccount) -> tuple[OAuth2, AuthCredential]:
    """google-adk's helper: ``config`` as a ``serviceAccount`` credential (its key's
    secrets registered) and the OAuth2 client-credentials scheme it goes with; the
    exchange (``_service_account``) turns it into an HTTP bearer credential."""
    credential = AuthCredential(auth_type=AuthCredentialTypes.SERVICE_ACCOUNT, service_account=config)
    _register(credential)
    return _service_account_scheme(), credential


def service_account_dict_to_scheme_credential(config: dict[str, Any], scopes: list[str],
                                              ) -> tuple[OAuth2, AuthCredential]:
    """google-adk's helper: a service account's JSON key (as a dict) and the ``scopes``
    of its access tokens as :func:`service_account_scheme_credential` makes them. The
    key is taken as it is, unchecked, as google-adk's (a field it lacks fails at the
    exchange, as google-auth says)."""
    key = ServiceAccountCredential.model_construct(**config)
    return service_account_scheme_credential(ServiceAccount(service_account_credential=key, scopes=scopes))
