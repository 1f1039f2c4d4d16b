"""Any A2A agent as one of ours, at google-adk's path (``google.adk.agents.remote_a2a_agent``;
also named in :mod:`adk_actors.a2a` and :mod:`adk_actors.a2a.agent`; needs a2a-sdk,
``pip install 'adk-actors[a2a]'``): :class:`RemoteA2aAgent` is a sub-agent (a transfer
reaches it) or, wrapped in ``AgentTool``, a tool. It is made as google-adk's is
(``RemoteA2aAgent(name, agent_card, description=..., httpx_client=..., timeout=...)``,
``agent_card`` an ``AgentCard``, a URL or a JSON file's path: :mod:`._a2a_card`), or
with ``card_url`` (ours, a URL).

When it runs, in order:

1. its card is had on first use and kept (:mod:`._a2a_card`; a card that cannot be
   had is tried again next time); an empty ``description`` takes the card's (one
   fetched from a URL cut to 1,024 characters and fenced as another agent's words,
   as google-adk 2.13 takes it);
2. what it sends is google-adk's: the session's events since its last answer (all of
   them before its first), oldest first: the user's parts, and another agent's turn
   quoted as context, fenced as our request compiler fences it (google-adk 2.13's
   preamble and quote markers: :func:`._fencing.other_agent_message`), each marked
   ``is_user_input``; a tool's result it did not ask for as text; in the
   A2A context of its last answer (so a conversation goes on there), and in the task
   of that answer when it was waiting for input; with ``a2a_request_meta_provider``'s
   metadata (a provider that raises, or gives no JSON object, is an error event,
   ``a2a_request_failed``, and nothing is sent);
   with ``config`` (google-adk's ``A2aRemoteAgentConfig``, :mod:`._a2a_config`): a
   first message goes in the context ``forward_session_id_as_context_id`` names; once
   the card is had, the ``request_interceptors``' ``before_request`` hooks change the
   message and its parameters (metadata, HTTP headers) or answer in its stead, before
   the provider (whose metadata, when there is one, is the request's); their
   ``after_request`` hooks see each event made from a response and may change or drop
   it; the ``card_request_interceptors`` give the headers of the card's fetch (such a
   card is fetched for each run, never kept); a hook that fails is an error event,
   ``a2a_request_failed``, saying which;
3. with streaming (the card allows it, the run streams), the remote agent's working
   messages of text come as partial events; its answer (the task's artifact, or its
   last message) comes as one final event of this agent whose ``custom_metadata``
   holds google-adk's keys: ``a2a:context_id``, ``a2a:task_id`` (a task's),
   ``a2a:request`` (the message sent) and ``a2a:response`` (the task or message that
   answered, as JSON), and ours (``a2a_context_id``, ``a2a_task_id``);
4. a remote task that fails, is rejected or canceled, a remote agent whose card cannot
   be had or that cannot be reached or does not answer within ``timeout`` seconds, is
   an error event (``a2a_task_failed`` or ``a2a_unavailable``) with a clear message,
   carrying ``a2a:error`` and ``a2a:request`` when a request was made: the run goes
   on, it never crashes.

Bad definitions are refused when the agent is made, with google-adk's exception
types: no card (``ValueError``), an empty one (``ValueError``), a card of another type
(``TypeError``); google-adk's options this agent does not have (its converters,
client factory, context builder, auth) are refused too, named; a ``config`` that is
not ours (:class:`~._a2a_config.A2aRemoteAgentConfig`) is a ``TypeError``.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
from a2a.client import A2AClientError as SdkClientError
from a2a.client import ClientConfig, create_client
from a2a.types import AgentCard, Message, Role, SendMessageRequest, StreamResponse, TaskState
from google.protobuf.json_format import MessageToDict
from google.protobuf.struct_pb2 import Struct
from pydantic import Field, PrivateAttr

from .._exceptions import AgentDefinitionError
from .._types import Content, Event, Part, StreamingMode
from ._a2a_card import (
    AGENT_CARD_WELL_KNOWN_PATH,
    A2AClientError,
    AgentCardResolutionError,
    card_from_source,
    check_card,
    is_url,
)
from ._a2a_config import (
    A2aRemoteAgentConfig,
    InterceptorError,
    ResponseShaper,
    context_id_of_session,
    execute_after_request_interceptors,
    execute_before_card_request_interceptors,
    execute_before_request_interceptors,
)
from ._a2a_credentials import without_credential_parts
from ._a2a_parts import a2a_parts, content_of
from ._base import AgentBase
from ._fencing import other_agent_message, quote_untrusted

__all__ = ["A2A_METADATA_PREFIX", "AGENT_CARD_WELL_KNOWN_PATH", "DEFAULT_TIMEOUT", "A2AClientError",
           "AgentCardResolutionError", "RemoteA2aAgent"]

#: google-adk's prefix of the ``custom_metadata`` keys of a remote answer's event.
A2A_METADATA_PREFIX = "a2a:"
#: google-adk's default ``timeout`` (seconds).
DEFAULT_TIMEOUT = 600.0
#: our own ``custom_metadata`` keys of a remote answer's event (kept beside google-adk's).
CONTEXT_KEY, TASK_KEY = "a2a_context_id", "a2a_task_id"
_ENDED_BADLY = {TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_REJECTED, TaskState.TASK_STATE_CANCELED}
_WAITING = ("TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED", "input-required", "auth-required")
#: google-adk's keywords this agent does not have, with the value that means "not used".
_NOT_HERE: dict[str, Any] = {"genai_part_converter": None, "a2a_part_converter": None, "a2a_client_factory": None,
                             "context_builder": None, "use_legacy": True, "auth_scheme": None,
                             "auth_credential": None, "credential_key": None}


class RemoteA2aAgent(AgentBase):
    """A remote A2A agent (see the module). ``headers`` go with every request (an
    ``Authorization`` for a guarded host); ``timeout`` bounds the card's fetch and each
    whole exchange, in seconds; ``httpx_client``, when given, carries every request
    instead, as it is (its own headers and timeouts; it is never closed here);
    ``full_history_when_stateless``: a remote agent that keeps no context gets the
    whole session each time."""

    card_url: str = ""
    agent_card: AgentCard | str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT
    httpx_client: httpx.AsyncClient | None = None
    a2a_request_meta_provider: Callable[[Any, Message], dict[str, Any]] | None = None
    full_history_when_stateless: bool = False
    config: A2aRemoteAgentConfig = Field(default_factory=A2aRemoteAgentConfig)

    _card: AgentCard | None = PrivateAttr(default=None)

    def __init__(self, name: str | None = None, agent_card: AgentCard | str | None = None, **data: Any) -> None:
        """google-adk's constructor (see the module); ``card_url`` is ours, a URL."""
        if name is not None:
            data["name"] = name
        card_url = data.get("card_url") or ""
        if agent_card is None and "agent_card" in data:
            agent_card = data.pop("agent_card")
        if agent_card is None and not card_url:
            raise AgentDefinitionError(f"remote agent {data.get('name')!r}: agent_card cannot be None "
                                       "(give an AgentCard, its URL or the path of its JSON file)")
        if agent_card is not None and not isinstance(agent_card, (AgentCard, str)):
            raise TypeError(f"remote agent {data.get('name')!r}: agent_card must be an AgentCard, a URL or a file "
                            f"path, not {type(agent_card).__name__}")
        if isinstance(agent_card, str):
            if not agent_card.strip():
                raise AgentDefinitionError(f"remote agent {data.get('name')!r}: agent_card cannot be empty")
            agent_card = agent_card.strip()
        if agent_card is not None and card_url and agent_card != card_url:
            raise AgentDefinitionError(f"remote agent {data.get('name')!r}: give agent_card or card_url, not both")
        for option, unused in _NOT_HERE.items():
            if option in data and data.pop(option) != unused:
                raise AgentDefinitionError(f"remote agent {data.get('name')!r}: google-adk's {option!r} is "
                                           "not supported here")
        config = data.pop("config", None)
        if config is not None and not isinstance(config, A2aRemoteAgentConfig):
            raise TypeError(f"remote agent {data.get('name')!r}: config must be an "
                            "adk_actors.a2a.agent.config.A2aRemoteAgentConfig, not "
                            f"{type(config).__module__}.{type(config).__qualname__}")
        data["config"] = config or A2aRemoteAgentConfig()
        if isinstance(agent_card, AgentCard) and not data.get("description") and agent_card.description:
            data["description"] = agent_card.description
        super().__init__(agent_card=agent_card, **data)
        if isinstance(agent_card, AgentCard):
            self._card = agent_card

    async def cleanup(self) -> None:
        """google-adk's: release the agent's HTTP client. Nothing to do here: its own
        clients live for one exchange, and a given ``httpx_client`` is its owner's."""

    @property
    def _source(self) -> str:
        return self.agent_card if isinstance(self.agent_card, str) else self.card_url

    async def _run_impl(self, ctx: Any) -> AsyncIterator[Event]:
        config = self.config
        events = list(ctx.session.events)
        parts, context_id, task_id = self._history(events)
        if not parts:
            yield ctx.event(error_code="a2a_no_message", error_message=f"{self.name}: nothing to send it")
            return
        if any(i.after_request is not None for i in config.request_interceptors or ()):
            task_id = ""  # an after-hook may have dropped the answer: the record no longer tells (google-adk's)
        message = Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=parts,
                          context_id=context_id or context_id_of_session(config.forward_session_id_as_context_id,
                                                                         ctx.session),
                          task_id=task_id)
        streaming = ctx.run_config.streaming_mode == StreamingMode.SSE
        outcome: list[Event] = []
        sent = False
        shape = ResponseShaper()
        try:
            async with asyncio.timeout(self.timeout), self._http() as http:
                card = await self._card_of_run(ctx, http)
                client = await create_client(card, ClientConfig(streaming=bool(card.capabilities.streaming),
                                                                httpx_client=http))
                sending, params = await execute_before_request_interceptors(config.request_interceptors, ctx, message)
                if isinstance(sending, Event):  # an interceptor answered in the request's stead
                    yield sending
                    return
                message = sending
                request = SendMessageRequest(message=message)
                failed = self._add_metadata(ctx, request, params.request_metadata)
                if failed is not None:
                    yield failed
                    return
                sent = True
                async for response in client.send_message(request, context=params.client_call_context):
                    shaped = shape(response)
                    partial = _working_text(response) if streaming else None
                    if partial:
                        shown = await execute_after_request_interceptors(
                            config.request_interceptors, ctx, shaped,
                            ctx.event(content=Content(role="model", parts=(partial,)), partial=True))
                        if shown is not None:
                            yield shown
                    made = self._outcome(ctx, response, message)
                    if made:
                        kept = [await execute_after_request_interceptors(config.request_interceptors, ctx, shaped, e)
                                for e in made]
                        outcome = [e for e in kept if e is not None]
        except InterceptorError as error:
            yield self._request_failed(ctx, str(error), message if sent else None)
            return
        except (TimeoutError, httpx.HTTPError, SdkClientError, AgentCardResolutionError, ValueError) as error:
            why = "did not answer in time" if isinstance(error, TimeoutError) else f"{type(error).__name__}: {error}"
            said = f"remote agent {self.name} ({self._source or 'its card'}) {why}"
            metadata: dict[str, Any] = {A2A_METADATA_PREFIX + "error": said}
            if sent:
                metadata[A2A_METADATA_PREFIX + "request"] = MessageToDict(message)
            yield ctx.event(error_code="a2a_unavailable", error_message=said, custom_metadata=metadata)
            return
        for event in outcome:
            yield event

    def _add_metadata(self, ctx: Any, request: SendMessageRequest, given: dict[str, Any] | None) -> Event | None:
        """Puts the request's metadata on it: ``a2a_request_meta_provider``'s when there
        is one (google-adk's: it replaces the interceptors'), else the interceptors'
        ``given``; the error event when the provider raises or either is no JSON object."""
        provider = self.a2a_request_meta_provider
        try:
            request.metadata.update(provider(ctx, request.message) if provider is not None else given or {})
        except Exception as error:  # the user's callable or metadata: this run's error event
            whose = "a2a_request_meta_provider" if provider is not None else "the interceptors' request_metadata"
            return self._request_failed(ctx, f"{whose} failed: {type(error).__name__}: {error}", None)
        return None

    def _request_failed(self, ctx: Any, why: str, sent: Message | None) -> Event:
        """The error event of a request that a hook of this agent's spoiled."""
        said = f"remote agent {self.name}: {why}"
        metadata: dict[str, Any] = {A2A_METADATA_PREFIX + "error": said}
        if sent is not None:
            metadata[A2A_METADATA_PREFIX + "request"] = MessageToDict(sent)
        event: Event = ctx.event(error_code="a2a_request_failed", error_message=said, custom_metadata=metadata)
        return event

    async def _card_of_run(self, ctx: Any, http: httpx.AsyncClient) -> AgentCard:
        """The card this run uses: the one kept, else fetched (and kept), or, when
        ``card_request_interceptors`` give the headers of a fetch from a URL, fetched
        with them for this run alone."""
        if not (self.config.card_request_interceptors and is_url(self._source)):
            return self._card or await self._resolve(http)
        extra = await execute_before_card_request_interceptors(self.config.card_request_interceptors, ctx)
        return await card_from_source(self._source, http, headers=(extra or {}).get("headers"))

    def _http(self) -> Any:
        """The agent's HTTP client (not closed here), or one of this exchange's."""
        if self.httpx_client is not None:
            return _Borrowed(self.httpx_client)
        return httpx.AsyncClient(headers=self.headers, timeout=self.timeout)

    async def _resolve(self, http: httpx.AsyncClient) -> AgentCard:
        card = await card_from_source(self._source, http)
        check_card(card)
        self._card = card
        if not self.description and card.description:
            self.description = _adopted_description(card.description, self._source)
        return card

    # -- what is sent ----------------------------------------------------------------------

    def _history(self, events: list[Event]) -> tuple[list[Any], str, str]:
        """The parts of the session's events since this agent's last answer, oldest
        first; the A2A context of that answer, and its task when it waits for input."""
        taken: list[Event] = []
        context_id = task_id = ""
        for event in reversed(events):
            if self._is_answer(event):
                metadata = event.custom_metadata or {}
                context_id = str(metadata.get(A2A_METADATA_PREFIX + "context_id") or metadata.get(CONTEXT_KEY) or "")
                task_id = _waiting_task(metadata, context_id)
                if not self.full_history_when_stateless or context_id:
                    break
            taken.append(event)
        own_calls = {p.function_call.id for e in events if e.author == self.name and e.content is not None
                     for p in e.content.parts if p.function_call is not None and p.function_call.id}
        parts: list[Any] = []
        for event in reversed(taken):
            event = without_credential_parts(event)  # before anything reads it (google-adk's order)
            content = event.content
            if content is None or not content.parts:
                continue
            users = event.author == "user"
            if event.author not in ("user", self.name):
                content = other_agent_message(event)  # fenced, it is the user's input (google-adk's marking)
                if content is None:
                    continue
                users = True
            for part in content.parts:
                result = part.function_response
                if result is not None and result.id not in own_calls:
                    part = Part(text=f"Tool {result.name} returned: {json.dumps(result.response, default=str)}")
                for converted in a2a_parts(Content(role=content.role, parts=(part,))):
                    if users:
                        marked = Struct()
                        marked.update({**MessageToDict(converted.metadata), "is_user_input": True})
                        converted.metadata.CopyFrom(marked)
                    parts.append(converted)
        return parts, context_id, task_id

    def _is_answer(self, event: Event) -> bool:
        metadata = event.custom_metadata or {}
        return event.author == self.name and (A2A_METADATA_PREFIX + "response" in metadata or CONTEXT_KEY in metadata)

    # -- what comes back -------------------------------------------------------------------

    def _outcome(self, ctx: Any, response: StreamResponse, sent: Message) -> list[Event]:
        """The events a response ends the exchange with (none while it works)."""
        kind = response.WhichOneof("payload")
        if kind == "message":
            reply = response.message
            return [self._answer(ctx, content_of(reply), reply.context_id, "", sent, MessageToDict(reply))]
        if kind == "task":
            task = response.task
            if task.status.state in _ENDED_BADLY:
                return [self._failure(ctx, task.status, sent)]
            parts = [p for artifact in task.artifacts for p in artifact.parts]
            if task.status.state in (TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_INPUT_REQUIRED):
                said = parts or list(task.status.message.parts)
                return [self._answer(ctx, _model(said), task.context_id, task.id, sent, MessageToDict(task))]
            return []
        if kind == "artifact_update":
            update = response.artifact_update
            return [self._answer(ctx, _model(list(update.artifact.parts)), update.context_id, update.task_id, sent,
                                 MessageToDict(update))]
        if kind == "status_update" and response.status_update.status.state in _ENDED_BADLY:
            return [self._failure(ctx, response.status_update.status, sent)]
        return []

    def _answer(self, ctx: Any, content: Content, context_id: str, task_id: str, sent: Message,
                response: dict[str, Any]) -> Event:
        metadata: dict[str, Any] = {CONTEXT_KEY: context_id, TASK_KEY: task_id}
        if task_id:
            metadata[A2A_METADATA_PREFIX + "task_id"] = task_id
        if context_id:
            metadata[A2A_METADATA_PREFIX + "context_id"] = context_id
        metadata[A2A_METADATA_PREFIX + "request"] = MessageToDict(sent)
        metadata[A2A_METADATA_PREFIX + "response"] = response
        event: Event = ctx.event(content=Content(role="model", parts=content.parts), custom_metadata=metadata)
        return event

    def _failure(self, ctx: Any, status: Any, sent: Message) -> Event:
        said = content_of(status.message).text if status.HasField("message") else ""
        message = f"remote agent {self.name}: task {TaskState.Name(status.state)}" + (f": {said}" if said else "")
        event: Event = ctx.event(error_code="a2a_task_failed", error_message=message,
                                 custom_metadata={A2A_METADATA_PREFIX + "error": message,
                                                  A2A_METADATA_PREFIX + "request": MessageToDict(sent)})
        return event


class _Borrowed:
    """A caller's HTTP client for one exchange: used as it is, not closed at its end."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def __aenter__(self) -> httpx.AsyncClient:
        return self.client

    async def __aexit__(self, *exc: object) -> None:
        return None


def _waiting_task(metadata: dict[str, Any], context_id: str) -> str:
    """The task of a recorded answer that waits for the caller's input, else ""."""
    response = metadata.get(A2A_METADATA_PREFIX + "response")
    status = response.get("status") if isinstance(response, dict) else None
    if not context_id or not isinstance(status, dict) or status.get("state") not in _WAITING:
        return ""
    return str(metadata.get(A2A_METADATA_PREFIX + "task_id") or "")


#: a card's description longer than this (from the network) is cut, and says so
_MAX_CARD_DESCRIPTION = 1024
_TRUNCATED = "... [truncated]"


def _adopted_description(description: str, source: str) -> str:
    """The description an agent takes from its card (google-adk 2.13's): a card fetched
    from a URL is peer-controlled text that a parent's instruction will quote, so it is
    cut to :data:`_MAX_CARD_DESCRIPTION` characters (then ``... [truncated]`` is added)
    and fenced between the quote markers (:func:`._fencing.quote_untrusted`); a card
    read from a file is the caller's own text: as it is."""
    if not is_url(source):
        return description
    capped = description[:_MAX_CARD_DESCRIPTION]
    if len(capped) < len(description):
        capped += _TRUNCATED
    return quote_untrusted(capped)


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
