"""A router on one host whose weather specialist lives on a second host, reached
over A2A (issue 32's example).

The specialist host serves ``weather_bot``; each of its apps is an A2A agent at
``/a2a/{app}``. This host's router transfers weather questions to ``forecaster``,
a :class:`~adk_actors.a2a.RemoteA2aAgent` whose card is the specialist's
(``ADK_A2A_SPECIALIST_CARD``; by default the specialist of
``examples/a2a_router/specialist.toml``), and answers the rest itself. If the
specialist is down, the turn ends with an ``a2a_unavailable`` error event that says
so; the router keeps working. Run both hosts (see the README).
"""

from __future__ import annotations

import os
from typing import Any

from adk_actors import LlmAgent, LlmRequest
from adk_actors.a2a import RemoteA2aAgent
from adk_actors.models import ScriptedModel, call

SPECIALIST_CARD = os.environ.get("ADK_A2A_SPECIALIST_CARD",
                                 "http://127.0.0.1:19481/a2a/weather_bot/.well-known/agent-card.json")


def _route(request: LlmRequest) -> Any:
    """Weather questions go to the remote specialist; anything else is answered here."""
    text = request.contents[-1].text
    if "weather" in text.lower():
        return call("transfer_to_agent", agent_name="forecaster")
    return f"router: {text}"


root_agent = LlmAgent(
    name="router", description="Answers, and sends weather questions to a specialist on another host.",
    model=ScriptedModel(fallback=_route),
    sub_agents=[RemoteA2aAgent(name="forecaster", description="The weather specialist of another host.",
                               card_url=SPECIALIST_CARD, timeout=20)])
