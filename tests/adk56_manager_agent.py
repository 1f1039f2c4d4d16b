"""An agent whose custom tool gets its OAuth2 credential through google-adk's
``CredentialManager``, for tests/test_adk56_openapi_auth.py (imported by path in a
host's run workers, never by the test process: the config is built at import from
``$ADK_TEST_OAUTH_PROVIDER_URL``). On a host the credential service keeps the user's
token between turns.

The scripted model: ``call NAME`` calls that tool, then answers
``NAME said: <its result as JSON>``.
"""

from __future__ import annotations

import json
import os
from typing import Any

import httpx
from adk56_credential_agent import AUTH

from adk_actors import LlmAgent, LlmRequest
from adk_actors.auth.credential_manager import CredentialManager
from adk_actors.models import ScriptedModel, call
from adk_actors.tools import ToolContext

URL = os.environ.get("ADK_TEST_OAUTH_PROVIDER_URL", "http://127.0.0.1:9")


async def who_am_i(tool_context: ToolContext) -> dict[str, Any]:
    """Says who the user is."""
    manager = CredentialManager(AUTH)
    credential = await manager.get_auth_credential(tool_context)
    if credential is None or credential.oauth2 is None or not credential.oauth2.access_token:
        await manager.request_credential(tool_context)
        return {"pending": True}
    async with httpx.AsyncClient(timeout=10) as client:
        answer = await client.get(URL + "/whoami", headers={"Authorization": "Bearer " + credential.oauth2.access_token})
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
