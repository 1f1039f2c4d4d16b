"""google-adk's import path of the OpenAPI auth helpers."""

from .._auth import (
    INTERNAL_AUTH_PREFIX,
    OpenIdConfig,
    credential_to_param,
    dict_to_auth_scheme,
    openid_dict_to_scheme_credential,
    openid_url_to_scheme_credential,
    service_account_dict_to_scheme_credential,
    service_account_scheme_credential,
    token_to_scheme_credential,
)

__all__ = ["INTERNAL_AUTH_PREFIX", "OpenIdConfig", "credential_to_param", "dict_to_auth_scheme",
           "openid_dict_to_scheme_credential", "openid_url_to_scheme_credential",
           "service_account_dict_to_scheme_credential", "service_account_scheme_credential",
           "token_to_scheme_credential"]
