"""Any A2A agent as one of ours: :class:`RemoteA2aAgent` is a sub-agent (a transfer
reaches it) or, wrapped in ``AgentTool``, a tool.

When it runs, in order:

1. its card is fetched from ``card_url`` on first use and kept (a card that cannot
   be fetched is fetched again next time);
2. the last user message of its session (the one that led here: the user's turn, a
   transfer's, or an AgentTool's request) is sent to the remote agent, in the A2A
   context of its last answer in this session, so a conversation goes on there too;
3. with streaming (the card allows it), the remote agent's working messages of text
   come as partial events while the run streams, and its answer (the task's
   artifact, or its last message) as one final event of this agent, which names the
   remote task and context in ``custom_metadata``;
4. a remote task that fails, is rejected or canceled, a remote agent that cannot be
   reached or does not answer within ``timeout`` seconds, is an error event
   (``a2a_task_failed`` or ``a2a_unavailable``) with a clear message: the run goes
   on, it never crashes.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
from a2a.client import A2AClientError, ClientConfig, create_client
from a2a.client.card_resolver import parse_agent_card
from a2a.types import AgentCard, Message, Role, SendMessageRequest, StreamResponse, TaskState
from pydantic import Field, PrivateAttr

from .._types import Content, Event, Part, StreamingMode
from ..agents import AgentBase
from ._parts import a2a_parts, content_of

__all__ = ["RemoteA2aAgent"]

#: ``custom_metadata`` keys of a remote answer's event.
CONTEXT_KEY, TASK_KEY = "a2a_context_id", "a2a_task_id"
_ENDED_BADLY = {TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_REJECTED, TaskState.TASK_STATE_CANCELED}


class RemoteA2aAgent(AgentBase):
    """A remote A2A agent, reached through its card at ``card_url``. ``headers`` go
    with every request (an ``Authorization`` for a guarded host); ``timeout`` bounds
    each whole exchange, in seconds."""

    card_url: str
    headers: dict[str, str] = Field(default_factory=dict)
    timeout: float = 60.0

    _card: AgentCard | None = PrivateAttr(default=None)

    async def _run_impl(self, ctx: Any) -> AsyncIterator[Event]:
        message = _last_user_message(ctx.session.events)
        if message is None:
            yield ctx.event(error_code="a2a_no_message", error_message=f"{self.name}: nothing to send it")
            return
        streaming = ctx.run_config.streaming_mode == StreamingMode.SSE
        outcome: list[Event] = []
        try:
            async with asyncio.timeout(self.timeout), httpx.AsyncClient(headers=self.headers,
                                                                        timeout=self.timeout) as http:
                card = self._card or await self._fetch_card(http)
                client = await create_client(card, ClientConfig(streaming=bool(card.capabilities.streaming),
                                                                httpx_client=http))
                request = self._request(ctx, message)
                async for response in client.send_message(request):
                    partial = _working_text(response) if streaming else None
                    if partial:
                        yield ctx.event(content=Content(role="model", parts=(partial,)), partial=True)
                    outcome = self._outcome(ctx, response) or outcome
        except (TimeoutError, httpx.HTTPError, A2AClientError, ValueError) as error:
            why = "did not answer in time" if isinstance(error, TimeoutError) else f"{type(error).__name__}: {error}"
            yield ctx.event(error_code="a2a_unavailable",
                            error_message=f"remote agent {self.name} ({self.card_url}) {why}")
            return
        for event in outcome:
            yield event

    async def _fetch_card(self, http: httpx.AsyncClient) -> AgentCard:
        answer = await http.get(self.card_url)
        answer.raise_for_status()
        self._card = parse_agent_card(answer.json())
        return self._card

    def _request(self, ctx: Any, message: Content) -> SendMessageRequest:
        """The user's message, in the remote context of this agent's last answer."""
        context_id = next((e.custom_metadata[CONTEXT_KEY] for e in reversed(ctx.session.events)
                           if e.author == self.name and e.custom_metadata and CONTEXT_KEY in e.custom_metadata), "")
        return SendMessageRequest(message=Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER,
                                                  parts=a2a_parts(message), context_id=context_id))

    def _outcome(self, ctx: Any, response: StreamResponse) -> list[Event]:
        """The events a response ends the exchange with (none while it works)."""
        kind = response.WhichOneof("payload")
        if kind == "message":
            return [self._answer(ctx, content_of(response.message), response.message.context_id, "")]
        if kind == "task":
            task = response.task
            if task.status.state in _ENDED_BADLY:
                return [self._failure(ctx, task.status)]
            parts = [p for artifact in task.artifacts for p in artifact.parts]
            if task.status.state in (TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_INPUT_REQUIRED):
                said = parts or list(task.status.message.parts)
                return [self._answer(ctx, _model(said), task.context_id, task.id)]
            return []
        if kind == "artifact_update":
            update = response.artifact_update
            return [self._answer(ctx, _model(list(update.artifact.parts)), update.context_id, update.task_id)]
        if kind == "status_update" and response.status_update.status.state in _ENDED_BADLY:
            return [self._failure(ctx, response.status_update.status)]
        return []

    def _answer(self, ctx: Any, content: Content, context_id: str, task_id: str) -> Event:
        event: Event = ctx.event(content=Content(role="model", parts=content.parts),
                         custom_metadata={CONTEXT_KEY: context_id, TASK_KEY: task_id})
        return event

    def _failure(self, ctx: Any, status: Any) -> Event:
        said = content_of(status.message).text if status.HasField("message") else ""
        event: Event = ctx.event(error_code="a2a_task_failed",
                                 error_message=f"remote agent {self.name}: task {TaskState.Name(status.state)}"
                                               + (f": {said}" if said else ""))
        return event


def _last_user_message(events: list[Event]) -> Content | None:
    return next((e.content for e in reversed(events) if e.author == "user" and e.content is not None
                 and e.content.parts), None)


def _model(parts: list[Any]) -> Content:
    return Content(role="model", parts=content_of(Message(parts=parts)).parts)


def _working_text(response: StreamResponse) -> Part | None:
    """The text of a working status message, as one of our parts (None if none)."""
    if response.WhichOneof("payload") != "status_update":
        return None
    status = response.status_update.status
    if status.state != TaskState.TASK_STATE_WORKING or not status.HasField("message"):
        return None
    text = "".join(p.text for p in status.message.parts if p.WhichOneof("content") == "text")
    return Part(text=text) if text else None

