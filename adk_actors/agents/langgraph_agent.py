"""google-adk's ``LangGraphAgent``: a compiled LangGraph graph (``graph``, whose state
has a ``messages`` list) run as an agent of the tree, a custom agent here as any
``BaseAgent`` subclass with ``_run_async_impl``.

When built: ``langgraph`` and ``langchain-core`` are imported (either missing:
``ModuleNotFoundError`` naming the ``langgraph`` extra and its pip command); then the
fields are checked as any agent's.

Each turn, in order:

1. the graph's thread is the session's (:func:`thread_id`: the app, the user and the
   session id together, hashed), so a graph with a checkpointer keeps its own memory
   per session, under the thread id google-adk gives it;
2. with a checkpointer, the graph's saved ``messages`` are read; the ``instruction``,
   when set, goes first as a system message only while there are none (the first turn
   of a thread); without a checkpointer it goes first every turn;
3. the messages given to the graph: with a checkpointer, the user's messages since
   the last event by another author (the graph remembers the rest); without, the whole
   conversation of the session between the user and this agent (the first text of
   each event, as a human or an AI message);
4. the graph is invoked (``ainvoke``) with those messages; the text of the last
   message of its result is this agent's one event (role ``model``). What the graph
   raises, the turn raises.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import AsyncIterator
from typing import Any

from .._extras import extra_hint
from .._types import Content, Event, Part
from ._base import AgentBase

__all__ = ["LangGraphAgent", "thread_id"]


def _load(module: str) -> Any:
    """``module``, imported; ``ModuleNotFoundError`` naming the ``langgraph`` extra
    when it cannot be."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ModuleNotFoundError(f"LangGraphAgent needs langgraph: {extra_hint('langgraph')}",
                                  name=module.split(".")[0]) from exc


def thread_id(app_name: str, user_id: str, session_id: str) -> str:
    """The graph's thread for a session: the SHA-256 (hex) of the three names, each
    written as its length, ``:`` and itself, joined by ``|`` (a session id is unique
    only within its app and user; the lengths keep one triple from reading as another;
    the hash keeps the user id out of the checkpointer's rows). google-adk 2.13 names
    the thread the same way, so the two share a checkpointer's threads."""
    key = "|".join(f"{len(part)}:{part}" for part in (app_name, user_id, session_id))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _first_text(event: Any) -> Any:
    return event.content.parts[0].text


def _has_parts(event: Any) -> bool:
    return bool(event.content is not None and event.content.parts)


class LangGraphAgent(AgentBase):
    """See the module."""

    #: the compiled LangGraph graph (``CompiledStateGraph``) whose state has ``messages``
    graph: Any
    #: the system message put first in a thread's first turn ("" for none)
    instruction: str = ""

    def __init__(self, **data: Any) -> None:
        """Check that LangGraph is there, then the fields (see the module)."""
        _load("langgraph.graph")
        _load("langchain_core.messages")
        super().__init__(**data)

    async def _run_async_impl(self, ctx: Any) -> AsyncIterator[Event]:
        """One turn: the steps of the module, in order."""
        messages_module = _load("langchain_core.messages")
        session = ctx.session
        config: dict[str, Any] = {"configurable": {"thread_id": thread_id(session.app_name, session.user_id,
                                                                           session.id)}}
        remembered: list[Any] = []
        if self.graph.checkpointer:
            state = await self.graph.aget_state(config)
            remembered = state.values.get("messages", []) if state.values else []
        messages: list[Any] = []
        if self.instruction and not remembered:
            messages.append(messages_module.SystemMessage(content=self.instruction))
        messages += self._messages_for(list(session.events), messages_module)
        final_state = await self.graph.ainvoke({"messages": messages}, config)
        answer = final_state["messages"][-1].content
        yield Event(invocation_id=ctx.invocation_id, author=self.name, branch=ctx.branch,
                    content=Content(role="model", parts=[Part(text=answer)]))

    def _messages_for(self, events: list[Any], messages_module: Any) -> list[Any]:
        """Step 3 of the module: the messages of ``events`` the graph is given."""
        if self.graph.checkpointer:
            latest: list[Any] = []
            for event in reversed(events):
                if latest and event.author != "user":
                    break
                if event.author == "user" and _has_parts(event):
                    latest.append(messages_module.HumanMessage(content=_first_text(event)))
            return latest[::-1]
        conversation: list[Any] = []
        for event in events:
            if not _has_parts(event):
                continue
            if event.author == "user":
                conversation.append(messages_module.HumanMessage(content=_first_text(event)))
            elif event.author == self.name:
                conversation.append(messages_module.AIMessage(content=_first_text(event)))
        return conversation
