"""google-adk's credential request round trip (``adk_request_credential``), on our flow.

A tool asks with ``tool_context.request_credential(auth_config)``: the auth request
(``adk_actors.auth``: the scheme, the client without its secret, an OAuth2
authorization URL and state) goes on its call's actions (``requested_auth_configs``,
camelCase as on the wire). :func:`request_event` then gives, before the call's
tool-response event, one ``adk_request_credential`` call per credential key asked
(arguments ``functionCallId``: the call that asked, ``authConfig``: the request),
long-running, authored by the agent with the tool-response event's role; the flow ends
after the tool-response event (google-adk ends the invocation).

The client answers with a function response named ``adk_request_credential`` (its id
the request's) carrying the ``AuthConfig`` with the credential filled in
(``exchangedAuthCredential.oauth2.authResponseUri``, an access token, an API key), or
that credential alone. :class:`CredentialStep` runs first in the next flow of the
agent, in order: the answers read from the last event with content when it is the
user's (none: nothing happens), each as the user's message carried it (its stored event
has known secrets blanked out); an answer whose id no call in the history has is
google-adk's ``ValueError`` (its runner's text); an id that is a call but not a
credential request is ignored with google-adk's warning; each other answer is pinned
to the request the run sent (its OAuth state must be the request's) and kept under
``temp:<credential key>`` in the session state, for this invocation only
(``adk_actors.auth._requests.store_answer``; an answer that cannot be used is ignored
with google-adk's warning); the calls those requests name (and the calls that asked
for a key now answered) run again, when the agent made them, with their result as one
tool-response event; then the flow goes on to the model.

Requests made with our ``request_credential(key, config)`` are not google-adk's (no
``authScheme`` key): they keep the auth event of their own (``_flow_tool_step``).

:func:`without_requests` is the history the model sees: the credential requests and
answers left out and, after the re-run, the events between the call and its latest
result left out (google-adk's contents).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncGenerator, Sequence
from importlib import import_module
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from .._prefix_scan import PrefixScan
from .._types import Content, Event, FunctionCall, Part
from ..tools._credential_call import REQUEST_EUC_FUNCTION_CALL_NAME as REQUEST_EUC
from ._context import InvocationContext
from ._flow_step import unmatched_answer
from ._flow_tools import run_tool, tool_response_event

if TYPE_CHECKING:
    from ..auth.auth_tool import AuthToolArguments

__all__ = ["REQUEST_EUC", "CredentialStep", "is_adk_request", "request_event", "without_requests"]

_log = logging.getLogger("adk_actors.auth")

#: the ids of toolset-level requests (google-adk's prefix: no call to run again)
TOOLSET_AUTH_PREFIX = "_adk_toolset_auth_"


def is_adk_request(value: Any) -> bool:
    """Is this ``requested_auth_configs`` entry google-adk's auth request (made by
    ``request_credential(auth_config)``)?"""
    return isinstance(value, dict) and "authScheme" in value


def _key(value: Any) -> str | None:
    if isinstance(value, dict):
        key = value.get("credentialKey", value.get("credential_key"))
        return key if isinstance(key, str) else None
    return getattr(value, "credential_key", None)


def request_event(ctx: InvocationContext, tool_event: Event) -> Event | None:
    """The ``adk_request_credential`` calls for the google-adk requests on
    ``tool_event``'s actions, one per credential key, as one long-running event of
    the agent; None when none was asked for."""
    asked = {call_id: config for call_id, config in tool_event.actions.requested_auth_configs.items()
             if is_adk_request(config)}
    if not asked:
        return None
    parts, ids, seen = [], [], set()
    for call_id, config in asked.items():
        key = _key(config)
        if key:
            if key in seen:
                continue
            seen.add(key)
        request_id = f"adk-{uuid.uuid4()}"
        ids.append(request_id)
        parts.append(Part(function_call=FunctionCall(id=request_id, name=REQUEST_EUC, args={
            "functionCallId": call_id, "authConfig": config})))
    role = tool_event.content.role if tool_event.content is not None else None
    return ctx.event(content=Content(role=role, parts=tuple(parts)), long_running_tool_ids=tuple(ids))


def _answers(events: Sequence[Event]) -> dict[str, Any]:
    """The credential answers (request id -> response) of the last event with content,
    when the user wrote it."""
    for event in reversed(events):
        if event.content is None:
            continue
        if event.author != "user":
            return {}
        return {r.id: r.response for r in event.get_function_responses() if r.name == REQUEST_EUC and r.id}
    return {}


def _unredacted(message: Content | None, ids: set[str]) -> dict[str, Any]:
    """The answers among ``ids`` as the user's message that began this invocation
    carried them: its stored event has every value this process knows as a secret
    blanked out (an API key or token the client gives again would arrive as ``***``)."""
    if message is None:
        return {}
    return {p.function_response.id: p.function_response.response for p in message.parts
            if p.function_response is not None and p.function_response.name == REQUEST_EUC
            and p.function_response.id in ids}


def _auth(module: str) -> Any:
    """``adk_actors.auth.<module>``, imported when this process first reads a
    credential answer: the auth types bring FastAPI's OpenAPI models and the OpenAPI
    toolset (~0.25 s of import), which no run without such an answer needs, nor a
    host's start (``bench/first_hour.py``)."""
    return import_module(f"adk_actors.auth.{module}")


def _requests(events: Sequence[Event], ids: set[str]) -> dict[str, AuthToolArguments]:
    """request id -> the arguments of the ``adk_request_credential`` call, for ``ids``
    (a call whose arguments do not parse is left out)."""
    arguments = _auth("auth_tool").AuthToolArguments
    found: dict[str, AuthToolArguments] = {}
    for event in events:
        for call in event.get_function_calls():
            if call.id in ids and call.name == REQUEST_EUC:
                try:
                    found[call.id] = arguments.model_validate(dict(call.args or {}))
                except (ValidationError, TypeError, ValueError):
                    continue
    return found


def _to_resume(events: Sequence[Event], requests: dict[str, AuthToolArguments], keys: set[str]) -> set[str]:
    """The calls to run again: those the requests name, and the calls of the same
    tool-response events that asked for a key now answered."""
    resume = {r.function_call_id for r in requests.values() if not r.function_call_id.startswith(TOOLSET_AUTH_PREFIX)}
    for event in events:
        asked = event.actions.requested_auth_configs
        if asked and resume & set(asked):
            resume |= {call_id for call_id, config in asked.items() if _key(config) in keys}
    return resume


class CredentialStep:
    """The calls a user's credential answers name run again (see the module)."""

    def __init__(self, agent: Any, ctx: InvocationContext) -> None:
        self.agent, self.ctx = agent, ctx

    async def events(self, resolve_tools: Any) -> AsyncGenerator[Event, None]:
        """``resolve_tools`` is the flow's own (passed in: the request module reads
        :func:`without_requests` from here)."""
        agent, ctx = self.agent, self.ctx
        events = ctx.session.events
        answers = _answers(events)
        if not answers:
            return
        answers.update(_unredacted(ctx.user_content, set(answers)))
        called = {c.id for e in events for c in e.get_function_calls()}
        missing = set(answers) - called
        if missing:  # google-adk's runner refuses such an answer
            raise unmatched_answer(missing)
        requests = _requests(events, set(answers))
        keys: set[str] = set()
        for request_id, response in answers.items():
            request = requests.get(request_id)
            if request is None:
                _log.warning("Ignoring auth response for function call ID %r, which this session never requested.",
                             request_id)
                continue
            stored = _auth("_requests").store_answer(request.auth_config, response, ctx.session.state, request_id)
            if stored is not None and stored.credential_key:
                keys.add(stored.credential_key)
        resume = _to_resume(events, requests, keys)
        if not resume:
            return
        for event in reversed(events[:-1]):
            calls = [c for c in event.get_function_calls() if c.id in resume]
            if not calls:
                continue
            if event.author != agent.name:
                continue  # another agent's call: that agent's flow runs it again
            tools, _, _ = await resolve_tools(agent, ctx)
            results = await asyncio.gather(*(run_tool(agent, ctx, call, tools) for call in calls))
            answered = tool_response_event(ctx, calls, list(results))
            if answered is not None:
                yield answered
            return


def _is_credential(event: Event) -> bool:
    return any(c.name == REQUEST_EUC for c in event.get_function_calls()) or \
        any(r.name == REQUEST_EUC for r in event.get_function_responses())


#: Whether a session's events hold a credential request or answer (its new events read only)
_has_credential_events = PrefixScan(_is_credential)


def without_requests(events: Sequence[Event], history: Sequence[Event]) -> Sequence[Event]:
    """``history`` (what the model would read of the session's ``events``) without the
    credential requests and answers and, when its last event answers a call made
    before the event just preceding it, without the events between that call and its
    last answer (google-adk's contents); ``history`` itself when the session has no
    credential event."""
    if not _has_credential_events(events):
        return history
    kept = [e for e in history if not _is_credential(e)]
    if len(kept) < 2:
        return kept
    answered = {r.id for r in kept[-1].get_function_responses() if r.id}
    if not answered or answered & {c.id for c in kept[-2].get_function_calls()}:
        return kept
    for index in range(len(kept) - 2, -1, -1):
        if answered & {c.id for c in kept[index].get_function_calls()}:
            return [*kept[:index + 1], kept[-1]]
    return kept
