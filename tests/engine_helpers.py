"""Helpers for engine tests: run one turn in process and collect its events."""

from __future__ import annotations

import asyncio
from typing import Any

from adk_actors import Content, Event
from adk_actors.engine import ModelRaised, SessionView, run_invocation


async def collect(agent: Any, message: str | Content, session: SessionView | None = None, **kwargs: Any) -> list[Event]:
    """The run's events; a run that a model error ends (``ModelRaised``, after its error
    event) gives its events up to there."""
    session = session if session is not None else SessionView()
    content = Content.user(message) if isinstance(message, str) else message
    events: list[Event] = []
    try:
        async for event in run_invocation(agent, session, content, **kwargs):
            events.append(event)
    except ModelRaised:
        pass
    return events


def run(agent: Any, message: str | Content, session: SessionView | None = None, **kwargs: Any) -> list[Event]:
    return asyncio.run(collect(agent, message, session, **kwargs))


def summary(events: list[Event]) -> list[tuple[str, str]]:
    """(author, what) per event: text, call:name, result:name=..., or error:code."""
    out: list[tuple[str, str]] = []
    for event in events:
        if event.error_code:
            out.append((event.author, f"error:{event.error_code}"))
            continue
        if event.content is None:
            out.append((event.author, "actions"))
            continue
        for part in event.content.parts:
            if part.text is not None:
                out.append((event.author, part.text))
            elif part.function_call is not None:
                out.append((event.author, f"call:{part.function_call.name}"))
            elif part.function_response is not None:
                out.append((event.author, f"result:{part.function_response.name}={part.function_response.response}"))
    return out
