"""google-adk's ``AuthConfig`` (what a tool asks the client to collect: the scheme, the
tool's own credential, the credential the client fills in, and the key it is kept
under) and ``AuthToolArguments`` (the arguments of the ``adk_request_credential`` call
a run emits for it). Fields are camelCase on the wire, snake_case in Python; input
values stay out of validation errors (they may hold secrets)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from fastapi.openapi.models import SecurityBase
from pydantic import BaseModel, ConfigDict, SerializeAsAny, field_validator
from pydantic.alias_generators import to_camel

from .._credential_call import REQUEST_EUC_FUNCTION_CALL_NAME
from ._auth import AuthCredential, as_scheme
from ._auth_requests import auth_response, generate_auth_request

__all__ = ["REQUEST_EUC_FUNCTION_CALL_NAME", "AuthConfig", "AuthToolArguments"]

#: the OAuth2 fields of one sign-in, left out of a default credential key
_TRANSIENT = ("auth_uri", "state", "auth_response_uri", "auth_code", "access_token", "refresh_token", "expires_at",
              "expires_in", "redirect_uri")


class _Model(BaseModel, hide_input_in_errors=True):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow",
                              arbitrary_types_allowed=True)


def wire(model: BaseModel) -> dict[str, Any]:
    """``model`` as JSON on the wire (camelCase, no None; an OAuth2 part's extra
    fields, such as PKCE's ``code_verifier``, too), an OAuth2 part with no
    ``token_endpoint_auth_method`` showing google-adk's default, ``client_secret_basic``."""
    dumped: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)

    def default_method(value: Any) -> None:
        if isinstance(value, dict):
            oauth2 = value.get("oauth2")
            if isinstance(oauth2, dict):
                oauth2.setdefault("tokenEndpointAuthMethod", "client_secret_basic")
                for name in [n for n in oauth2 if "_" in n]:  # google-adk's fields we keep as extras
                    oauth2[to_camel(name)] = oauth2.pop(name)
            for item in value.values():
                default_method(item)

    default_method(dumped)
    return dumped


def _digest(value: dict[str, Any]) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def without_extras(model: Any) -> Any:
    """A copy of ``model`` without its own extra fields (google-adk's digests leave a
    model's ``model_extra`` out, e.g. an OpenID scheme's ``openIdConnectUrl``)."""
    if not getattr(model, "model_extra", None):
        return model
    copy = model.model_copy(deep=True)
    copy.model_extra.clear()
    return copy


def scheme_digest(scheme: SecurityBase) -> str:
    """google-adk's digest of an auth scheme (its extras left out)."""
    return _digest(without_extras(scheme).model_dump(mode="json", by_alias=True, exclude_none=True))


def credential_digest(credential: AuthCredential) -> str:
    """google-adk's digest of a credential (its own extras left out)."""
    return _digest(wire(without_extras(credential)))


class AuthConfig(_Model):
    """What a tool asks for (google-adk's fields). Without ``credential_key``, the key
    is google-adk's default: ``adk_<scheme type>_<digest>_<credential type>_<digest>``
    (digests of the scheme and of the tool's credential without one sign-in's fields),
    so that the same scheme and client share a key across calls and tools."""

    auth_scheme: SerializeAsAny[SecurityBase]
    raw_auth_credential: AuthCredential | None = None
    exchanged_auth_credential: AuthCredential | None = None
    credential_key: str | None = None

    @field_validator("auth_scheme", mode="before")
    @classmethod
    def _scheme(cls, value: Any) -> Any:
        return as_scheme(value)

    def __init__(self, **data: Any) -> None:
        super().__init__(**data)
        if not self.credential_key:
            self.credential_key = self._default_key()

    def _default_key(self) -> str:
        kind = self.auth_scheme.model_dump(mode="json", by_alias=True, exclude_none=True).get("type", "")
        key = f"adk_{kind}_{scheme_digest(self.auth_scheme)}_"
        credential = self.raw_auth_credential
        if credential is None:
            return key
        if credential.oauth2 is not None:
            credential = credential.model_copy(update={"oauth2": credential.oauth2.model_copy(
                update=dict.fromkeys(_TRANSIENT))})
        return f"{key}{credential.auth_type.value}_{credential_digest(credential)}"

    def _client_request(self) -> dict[str, Any]:
        """The auth request a tool's ``request_credential`` puts on its call's actions:
        google-adk's ``AuthHandler.generate_auth_request`` (see ``_requests``), on
        the wire. Raises ``ValueError`` as google-adk's does."""
        return wire(generate_auth_request(self))

    def _auth_response(self, state: Any) -> AuthCredential | None:
        """The client's answer kept in ``state`` (google-adk's
        ``AuthHandler.get_auth_response``; see ``_requests``)."""
        return auth_response(self, state)


class AuthToolArguments(_Model):
    """The arguments of an ``adk_request_credential`` call: the id of the call that
    asked, and the auth request."""

    function_call_id: str
    auth_config: AuthConfig

