"""google-adk's ``AuthHandler``: the steps of the credential round trip on one
``AuthConfig`` (see ``_requests``)."""

from __future__ import annotations

from typing import Any

from ..tools.openapi_tool._auth import AuthCredential
from ._requests import auth_response, authorization_uri, generate_auth_request, store_answer
from .auth_tool import AuthConfig

__all__ = ["AuthHandler"]


class AuthHandler:
    """google-adk's handler of one ``auth_config``."""

    def __init__(self, auth_config: AuthConfig) -> None:
        self.auth_config = auth_config

    def generate_auth_request(self) -> AuthConfig:
        """What is sent to the client (no configured secret in it)."""
        request: AuthConfig = generate_auth_request(self.auth_config)
        return request

    def generate_auth_uri(self) -> AuthCredential | None:
        """The tool's credential with the authorization URL and its state."""
        raw = self.auth_config.raw_auth_credential
        if raw is None or raw.oauth2 is None:
            raise ValueError("raw_auth_credential or oauth2 is empty")
        return authorization_uri(self.auth_config.auth_scheme, raw)

    def has_auth_response(self, state: Any) -> bool:
        """Whether ``state`` holds a credential for the config: a credential (or its
        dict, or a non-empty string) under ``temp:<credential key>``, else under
        ``<credential key>``; nothing is exchanged."""
        key = self.auth_config.credential_key
        if not key:
            return False
        for name in (f"temp:{key}", key):
            value = state.get(name)
            if isinstance(value, AuthCredential | dict) or (isinstance(value, str) and value):
                return True
        return False

    def get_auth_response(self, state: Any) -> AuthCredential | None:
        """The client's answer in ``state``, its code exchanged for a token."""
        return auth_response(self.auth_config, state)

    async def parse_and_store_auth_response(self, state: Any) -> None:
        """The config's exchanged credential kept under ``temp:<credential key>``."""
        if not self.auth_config.credential_key:
            raise ValueError("credential_key is empty.")
        store_answer(self.auth_config, self.auth_config.model_dump(mode="json", by_alias=True, exclude_none=True),
                     state, "")
