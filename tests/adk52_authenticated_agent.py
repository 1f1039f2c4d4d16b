"""An agent with google-adk's authenticated tools (``AuthenticatedFunctionTool`` and a
``BaseAuthenticatedTool`` subclass) behind one OAuth2 authorization code flow, for
tests/test_adk52_tool_names_r22.py's host test (imported by path in a host's run
workers: the config is built at import from ``$ADK_TEST_OAUTH_PROVIDER_URL``).

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
from adk_actors.tools.authenticated_function_tool import AuthenticatedFunctionTool
from adk_actors.tools.base_authenticated_tool import BaseAuthenticatedTool

URL = os.environ.get("ADK_TEST_OAUTH_PROVIDER_URL", "http://127.0.0.1:9")

AUTH = AuthConfig(
    auth_scheme=OAuth2(flows=OAuthFlows(authorizationCode=OAuthFlowAuthorizationCode(
        authorizationUrl=URL + "/authorize", tokenUrl=URL + "/token", scopes={"read": "read"}))),
    raw_auth_credential=AuthCredential(auth_type=AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth(
        client_id="agent-client", client_secret="client-secret-7f3a9c1e5b",
        redirect_uri="https://agent.example/callback")),
    credential_key="who_api")


def _whoami(credential: AuthCredential) -> dict[str, Any]:
    assert credential.oauth2 is not None and credential.oauth2.access_token
    answer = httpx.get(URL + "/whoami", headers={"Authorization": "Bearer " + credential.oauth2.access_token},
                       timeout=10)
    result: dict[str, Any] = answer.json()
    return result


def who_am_i(credential: AuthCredential) -> dict[str, Any]:
    """Says who the user is."""
    return _whoami(credential)


class WhoElse(BaseAuthenticatedTool):
    """The same, as a user's subclass."""

    def __init__(self) -> None:
        super().__init__(name="who_else", description="Says who the user is, again.", auth_config=AUTH)

    async def _run_async_impl(self, *, args: dict[str, Any], tool_context: ToolContext,
                              credential: AuthCredential) -> Any:
        return {"again": True, **_whoami(credential)}


def _script(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if last.function_responses:
        response = last.function_responses[0]
        return f"{response.name} said: {json.dumps(response.response, sort_keys=True)}"
    _, name = (last.text or "").split(" ", 1)
    return call(name)


who_agent = LlmAgent(name="who", model=ScriptedModel(fallback=_script), instruction="Say who the user is.",
                     tools=[AuthenticatedFunctionTool(func=who_am_i, auth_config=AUTH), WhoElse()])
