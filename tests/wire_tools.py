"""Tools the side-by-side wire test gives the same YAML agent on both servers: each
runs under google-adk's ToolContext (async artifacts, google.genai Parts) and under
ours (sync artifacts, our Parts), so both servers make the same kinds of events."""

from __future__ import annotations

import inspect
from typing import Any


def remember_city(city: str, tool_context: Any) -> dict[str, Any]:
    """Remember the user's city in the session's state."""
    tool_context.state["city"] = city
    return {"remembered": city}


async def save_report(text: str, tool_context: Any) -> dict[str, Any]:
    """Save a weather report as the artifact report.txt."""
    if type(tool_context).__module__.startswith("google.adk"):
        from google.genai import types

        part: Any = types.Part.from_text(text=text)
    else:
        from adk_actors import Part

        part = Part(text=text)
    version = tool_context.save_artifact("report.txt", part)
    if inspect.isawaitable(version):
        version = await version
    return {"version": version}
