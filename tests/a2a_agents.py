"""Agents of the A2A client tests, loaded by a host that reaches another host's app
over A2A: ``ADK_A2A_SPECIALIST_CARD`` is the remote app's card URL (the router is
examples/a2a_router's)."""

from __future__ import annotations

import os
from typing import Any

from adk_actors import LlmAgent, LlmRequest
from adk_actors.a2a import RemoteA2aAgent
from adk_actors.models import ScriptedModel, call
from adk_actors.tools import AgentTool

CARD = os.environ.get("ADK_A2A_SPECIALIST_CARD", "http://127.0.0.1:9/a2a/none/.well-known/agent-card.json")


def _last(request: LlmRequest) -> Any:
    return request.contents[-1]


def _ask(request: LlmRequest) -> Any:
    """Ask the remote specialist as a tool, then say what it said."""
    last = _last(request)
    if last.function_responses:
        return f"the specialist says: {last.function_responses[0].response.get('result', '')}"
    return call("forecaster", request=last.text)


asker_agent = LlmAgent(name="asker", model=ScriptedModel(fallback=_ask),
                       tools=[AgentTool(RemoteA2aAgent(name="forecaster", card_url=CARD, timeout=20))])
