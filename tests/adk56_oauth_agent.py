"""An agent whose OpenAPI tool calls an API under the OAuth2 authorization code flow,
for tests/test_adk56_openapi_user_auth.py (imported by path in a host's run workers,
never by the test process: the toolset is built at import from
``$ADK_TEST_OAUTH_PROVIDER_URL``). The tool holds only the client (id, secret,
redirect URI); each user's token comes from the credential service under ``who_api``.

The scripted model: ``call NAME {json args}`` calls that tool, then answers
``NAME said: <its result as JSON>``.
"""

from __future__ import annotations

import json
import os
from typing import Any

from adk_actors import LlmAgent, LlmRequest
from adk_actors.models import ScriptedModel, call
from adk_actors.tools.openapi_tool import OpenAPIToolset
from adk_actors.tools.openapi_tool.auth import AuthCredential, AuthCredentialTypes, OAuth2Auth

CLIENT_ID = "agent-client"
CLIENT_SECRET = "client-secret-7f3a9c1e5b"
REDIRECT_URI = "https://agent.example/callback"
URL = os.environ.get("ADK_TEST_OAUTH_PROVIDER_URL", "http://127.0.0.1:9")

SPEC = {"openapi": "3.0.3", "info": {"title": "Who", "version": "1"}, "servers": [{"url": URL}],
        "security": [{"oauth": ["read"]}],
        "components": {"securitySchemes": {"oauth": {"type": "oauth2", "flows": {"authorizationCode": {
            "authorizationUrl": URL + "/authorize", "tokenUrl": URL + "/token", "scopes": {"read": "read"}}}}}},
        "paths": {"/whoami": {"get": {"operationId": "whoAmI", "summary": "Who is calling",
                                      "responses": {"200": {"description": "ok"}}}}}}


def _script(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if last.function_responses:
        response = last.function_responses[0]
        return f"{response.name} said: {json.dumps(response.response, sort_keys=True)}"
    _, name, *rest = (last.text or "").split(" ", 2)
    return call(name, **(json.loads(rest[0]) if rest else {}))


who_agent = LlmAgent(name="who", model=ScriptedModel(fallback=_script), instruction="Say who the user is.", tools=[
    OpenAPIToolset(spec_dict=SPEC, credential_key="who_api", allow_private_network_access=True,
                   auth_credential=AuthCredential(auth_type=AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth(
                       client_id=CLIENT_ID, client_secret=CLIENT_SECRET, redirect_uri=REDIRECT_URI)))])
