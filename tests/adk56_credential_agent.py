"""An agent whose custom tool asks for an OAuth2 credential the google-adk way
(``tool_context.request_credential(auth_config)``), for
tests/test_adk56_credential_request.py (imported by path in a host's run workers,
never by the test process: the config is built at import from
``$ADK_TEST_OAUTH_PROVIDER_URL``). The tool's ``AuthConfig`` holds the client (id,
secret, redirect URI); the user's token comes from their answer to the
``adk_request_credential`` call, exchanged by ``tool_context.get_auth_response``.

The scripted model: ``call NAME`` calls that tool, then answers
``NAME said: <its result as JSON>``.
"""

from __future__ import annotations

import json
import os
from typing import Any

import httpx
from fastapi.openapi.models import OAuth2, OAuthFlowAuthorizationCode, OAuthFlows

from adk_actors import LlmAgent, LlmRequest
from adk_actors.auth import AuthConfig, AuthCredential, AuthCredentialTypes, OAuth2Auth
from adk_actors.models import ScriptedModel, call
from adk_actors.tools import ToolContext

CLIENT_ID = "agent-client"
CLIENT_SECRET = "client-secret-7f3a9c1e5b"
REDIRECT_URI = "https://agent.example/callback"
URL = os.environ.get("ADK_TEST_OAUTH_PROVIDER_URL", "http://127.0.0.1:9")

AUTH = AuthConfig(
    auth_scheme=OAuth2(flows=OAuthFlows(authorizationCode=OAuthFlowAuthorizationCode(
        authorizationUrl=URL + "/authorize", tokenUrl=URL + "/token", scopes={"read": "read"}))),
    raw_auth_credential=AuthCredential(auth_type=AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth(
        client_id=CLIENT_ID, client_secret=CLIENT_SECRET, redirect_uri=REDIRECT_URI)),
    credential_key="who_api")


def who_am_i(tool_context: ToolContext) -> dict[str, Any]:
    """Says who the user is."""
    credential = tool_context.get_auth_response(AUTH)
    if credential is None or credential.oauth2 is None or not credential.oauth2.access_token:
        tool_context.request_credential(AUTH)
        return {"pending": True, "message": "Sign in first."}
    answer = httpx.get(URL + "/whoami", headers={"Authorization": "Bearer " + credential.oauth2.access_token},
                       timeout=10)
    result: dict[str, Any] = answer.json()
    return result


def _script(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if last.function_responses:
        response = last.function_responses[0]
        return f"{response.name} said: {json.dumps(response.response, sort_keys=True)}"
    _, name = (last.text or "").split(" ", 1)
    return call(name)


who_agent = LlmAgent(name="who", model=ScriptedModel(fallback=_script), instruction="Say who the user is.",
                     tools=[who_am_i])
