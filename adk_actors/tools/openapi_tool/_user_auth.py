"""Two readings of the OAuth2 authorization code flow that the credential round trip
(``_auth_requests``) and ``RestApiTool`` share:

- :func:`code_of`: the authorization code of a user's answer: its ``auth_code``, else
  the ``code`` of the ``auth_response_uri`` the authorization server redirected to,
  whose ``state`` must be the one the request carried. An ``error`` in the redirect, a
  state that does not match, or no code is an :class:`~._errors.OpenApiAuthError`
  (never naming the code, which is registered as a secret at once).
- :func:`token_rejected`: google-adk's reading of a 401: the API rejected the token
  when its ``WWW-Authenticate`` challenge names ``invalid_token``, or there is none (a
  401 for ``insufficient_scope`` is not: asking again would ask for the same scopes).
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from ..._secrets import register_secret
from ._auth import OAuth2Auth
from ._errors import OpenApiAuthError

__all__ = ["code_of", "token_rejected"]


def code_of(answer: OAuth2Auth) -> str:
    """The authorization code of an auth response (see the module)."""
    if answer.auth_code:
        return answer.auth_code
    if not answer.auth_response_uri:
        raise OpenApiAuthError("the auth response has neither auth_code nor auth_response_uri")
    query = parse_qs(urlsplit(answer.auth_response_uri).query)
    if "error" in query:
        raise OpenApiAuthError(f"the authorization server refused: error {query['error'][0]!r}")
    given = query["state"][0] if query.get("state") else None
    if answer.state is not None and given != answer.state:
        raise OpenApiAuthError("the auth response's state is not the one the auth request carried")
    code = query["code"][0] if query.get("code") else None
    if not code:
        raise OpenApiAuthError("the auth response's redirect carries no code")
    register_secret(code)
    return code


def token_rejected(status: int, challenge: str | None) -> bool:
    """Did the API reject the token (see the module)?"""
    text = (challenge or "").lower()
    return status == 401 and ("invalid_token" in text or not text)
