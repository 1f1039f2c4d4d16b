"""weather_bot: the seed example (seed 000), with a tool and a sub-agent.

Runs offline on a ScriptedModel that answers from the request: it calls
``get_weather`` for the city the user names, then reports the result; questions
about alerts are handed to ``alert_agent``. Real model providers come with their
connectors (issue 6); until then this example always runs offline.
"""

from __future__ import annotations

import re
from typing import Any

from adk_actors import LlmAgent, LlmRequest
from adk_actors.models import ScriptedModel, call
from adk_actors.tools import ToolContext, idempotent

_FORECASTS = {"paris": (21, "clear"), "london": (15, "drizzle"), "oslo": (-3, "snow"), "new york": (18, "windy")}


@idempotent  # a lookup: a resumed run may simply call it again (durable runs)
def get_weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
    """Current weather for a city.

    Args:
        city: The city to look up.
    """
    temp, sky = _FORECASTS.get(city.lower(), (20, "fair"))
    tool_context.state["last_city"] = city
    return {"city": city, "temp_c": temp, "sky": sky}


def _city(text: str) -> str | None:
    lowered = text.lower()
    for city in _FORECASTS:
        if city in lowered:
            return city.title()
    match = re.search(r"\bin ([A-Z][a-zA-Z]+)", text)
    return match.group(1) if match else None


def _last_user_text(request: LlmRequest) -> str:
    """What the user said last (not the "For context:" notes the compiler writes, as
    user turns, about what other agents said and did)."""
    for content in reversed(request.contents):
        if content.role == "user" and content.text and not content.text.startswith("For context:"):
            return content.text
    return ""


def _about_alerts(text: str) -> bool:
    return re.search(r"\b(alerts?|storms?)\b", text, re.IGNORECASE) is not None


def _weather_model(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if last.function_responses and last.function_responses[0].name == "get_weather":
        result = last.function_responses[0].response
        return f"It is {result['temp_c']} °C and {result['sky']} in {result['city']}."
    text = _last_user_text(request)
    if _about_alerts(text):
        return call("transfer_to_agent", agent_name="alert_agent")
    city = _city(text)
    if city:
        return call("get_weather", city=city)
    return "Ask me about the weather in a city, for example: what's the weather in Paris?"


def _alert_model(request: LlmRequest) -> Any:
    """Alerts; anything else goes back to weather_bot (as a real model would hand back a
    question outside its remit), so the conversation never stays stuck here."""
    if _about_alerts(_last_user_text(request)):
        return "No severe weather alerts right now."
    return call("transfer_to_agent", agent_name="weather_bot")


alert_agent = LlmAgent(name="alert_agent", model=ScriptedModel(fallback=_alert_model),
                       description="Handles severe weather alerts",
                       instruction="You handle severe weather alerts.")

root_agent = LlmAgent(
    name="weather_bot",
    model=ScriptedModel(fallback=_weather_model),
    instruction="You help users with weather. The user is in {last_city?}.",
    tools=[get_weather],
    sub_agents=[alert_agent],
)
