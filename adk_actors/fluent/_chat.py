"""``async with builder.session() as chat``: a conversation with the built agent on
an embedded engine (in-memory sessions), one session for all its turns;
``await chat.send(text)`` answers the last text of the turn (adk-fluent's
``ChatSession``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from .._types import Content
from ..runners import InMemoryRunner

__all__ = ["ChatSession", "chat_session"]


class ChatSession:
    def __init__(self, runner: InMemoryRunner, session_id: str, user_id: str) -> None:
        self._runner = runner
        self.session_id = session_id
        self._user_id = user_id

    async def send(self, text: str) -> str:
        """One turn: the last text any event of it carried ("" when none did)."""
        last = ""
        async for event in self._runner.run_async(user_id=self._user_id, session_id=self.session_id,
                                                  new_message=Content.user(text)):
            for part in event.content.parts if event.content is not None and event.author != "user" else ():
                if part.text and not event.partial:
                    last = part.text
        return last


@asynccontextmanager
async def chat_session(agent: Any, plugins: Any = ()) -> AsyncIterator[ChatSession]:
    runner = InMemoryRunner(agent, app_name=f"_session_{agent.name}", plugins=plugins)
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="_session_user")
    yield ChatSession(runner, session.id, "_session_user")
