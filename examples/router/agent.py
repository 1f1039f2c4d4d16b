"""The router with two sub-agents (seed 000's worked example), offline.

The router's scripted model transfers weather questions to ``weather`` and
everything else to ``news``; the next turn stays with the specialist that answered
(google-adk's routing rule), which can transfer back to the router.
"""

from __future__ import annotations

from typing import Any

from adk_actors import LlmAgent, LlmRequest
from adk_actors.models import ScriptedModel, call
from adk_actors.tools import ToolContext


def get_weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
    """Current weather for a city."""
    return {"city": city, "forecast": "sunny, 22 °C"}


def get_news(topic: str) -> dict[str, Any]:
    """Headlines about a topic."""
    return {"topic": topic, "headlines": [f"{topic.title()} makes the news again"]}


def _router(request: LlmRequest) -> Any:
    text = _user_text(request).lower()
    return call("transfer_to_agent", agent_name="weather" if "weather" in text or "rain" in text else "news")


def _user_text(request: LlmRequest) -> str:
    """The user's latest words (not another agent's "For context:" note)."""
    for content in reversed(request.contents):
        if content.role == "user" and content.text and not content.text.startswith("For context:"):
            return content.text
    return ""


_THANKS = ("thanks", "thank you", "bye", "cheers")
_TOPIC = {"get_weather": ("weather", "rain", "sunny", "forecast", "temperature"), "get_news": ("news", "headline")}


def _subject(text: str, tool: str, argument: str, request: LlmRequest) -> str | None:
    """What to look up: the words after "in" / "about", else the last lookup of this
    conversation (a follow-up such as "and tomorrow?"), else None."""
    marker = " in " if tool == "get_weather" else " about "
    lowered = f" {text.lower()}"
    if marker in lowered:
        words = [w.strip("?.!,") for w in text[lowered.index(marker) + len(marker) - 1:].split()]
        if words and words[0]:
            return " ".join(words[:2]) if tool == "get_news" else words[0].title()
    for content in reversed(request.contents):
        for found in content.function_calls:
            if found.name == tool:
                return str(found.args.get(argument))
    return None


def _specialist(tool: str, argument: str) -> Any:
    """A specialist: looks up its subject, answers thanks politely, and hands a
    question about the other specialist's subject back to the router."""
    other = "get_news" if tool == "get_weather" else "get_weather"

    def answer(request: LlmRequest) -> Any:
        last = request.contents[-1]
        if last.function_responses and last.function_responses[0].name == tool:
            result = last.function_responses[0].response
            return ", ".join(f"{k}: {v}" for k, v in result.items())
        text = _user_text(request)
        lowered = text.lower()
        if any(word in lowered for word in _TOPIC[other]):
            return call("transfer_to_agent", agent_name="router")
        if any(word in lowered for word in _THANKS):
            return "You're welcome! Ask me anything else."
        subject = _subject(text, tool, argument, request)
        if subject is None:
            return "Which city?" if tool == "get_weather" else "Which topic?"
        return call(tool, **{argument: subject})

    return answer


weather = LlmAgent(name="weather", model=ScriptedModel(fallback=_specialist("get_weather", "city")),
                   instruction="You handle weather queries.", description="Handles weather-related questions",
                   tools=[get_weather])
news = LlmAgent(name="news", model=ScriptedModel(fallback=_specialist("get_news", "topic")),
                instruction="You handle news queries.", description="Handles news-related questions",
                tools=[get_news])
root_agent = LlmAgent(name="router", model=ScriptedModel(fallback=_router),
                      instruction="Route requests to the right specialist.", sub_agents=[weather, news])
