"""google-adk's import path of the OpenAPI auth helpers."""

from .._auth import (
    INTERNAL_AUTH_PREFIX,
    credential_to_param,
    dict_to_auth_scheme,
    token_to_scheme_credential,
)

__all__ = ["INTERNAL_AUTH_PREFIX", "credential_to_param", "dict_to_auth_scheme", "token_to_scheme_credential"]
