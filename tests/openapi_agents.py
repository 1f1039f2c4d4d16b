"""An agent with an OpenAPI toolset, for tests/test_openapi_toolset.py (imported by
path in a host's run workers, never by the test process: the toolset is built at import
from ``$ADK_TEST_PETSTORE_URL``, and actors forked from a process that had imported it
would keep that process's URL): the pet store's spec (tests/openapi_pets.py), its API
key looked up in the credential service under ``pet_store``.

The scripted model: ``call NAME {json args}`` calls that tool, then answers
``NAME said: <its result as JSON>``.
"""

from __future__ import annotations

import json
import os
from typing import Any

from openapi_pets import spec_at

from adk_actors import LlmAgent, LlmRequest
from adk_actors.models import ScriptedModel, call
from adk_actors.tools.openapi_tool import OpenAPIToolset


def _script(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if last.function_responses:
        response = last.function_responses[0]
        return f"{response.name} said: {json.dumps(response.response, sort_keys=True)}"
    _, name, *rest = (last.text or "").split(" ", 2)
    return call(name, **(json.loads(rest[0]) if rest else {}))


pets_agent = LlmAgent(name="pets", model=ScriptedModel(fallback=_script), instruction="Help with pets.", tools=[
    OpenAPIToolset(spec_dict=spec_at(os.environ.get("ADK_TEST_PETSTORE_URL", "http://127.0.0.1:9")),
                   credential_key="pet_store", allow_private_network_access=True)])
