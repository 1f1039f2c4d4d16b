"""The configuration of a :class:`~.remote_a2a_agent.RemoteA2aAgent` (google-adk 2.13's
``google.adk.a2a.agent.config``, named at :mod:`adk_actors.a2a.agent.config`), and the
steps that apply it to one exchange (google-adk's ``google.adk.a2a.agent.utils``,
named at :mod:`adk_actors.a2a.agent.utils`).

``RemoteA2aAgent(..., config=A2aRemoteAgentConfig(...))``:

* ``request_interceptors``: each :class:`RequestInterceptor`'s async
  ``before_request(ctx, message, params)`` runs in list order before the message is
  sent, given the message and a :class:`ParametersConfig` (``request_metadata``: the
  A2A request's metadata; ``client_call_context``: a2a-sdk's ``ClientCallContext``,
  whose ``service_parameters`` are sent as HTTP headers and whose ``state`` starts as
  the session's state); it returns the message (changed or not) and the parameters,
  or an :class:`~adk_actors.types.Event` that ends the exchange there (that event is
  the agent's answer, nothing is sent). Each async ``after_request(ctx, response,
  event)`` runs in reverse list order on each event made from a response (``response``
  google-adk's shape: the answering ``Message``, or ``(task, update)``: the task so
  far and the status or artifact update that came, ``None`` for a whole task); it
  returns the event (changed or not), or ``None`` to drop it;
* ``card_request_interceptors``: each :class:`CardRequestInterceptor`'s async
  ``before_request(ctx)`` gives an :class:`A2aCardRequestConfig` whose ``headers``
  go with the fetch of a card given by URL (later interceptors win a clash); such a
  card is fetched for each run, never kept (the headers may be one user's);
* ``forward_session_id_as_context_id``: a message with no A2A context of its own
  (none recorded from an earlier answer) goes in the session's id (``True``), or in
  a SHA-256 digest of the app, user and session ids (``"namespaced"``, so two users'
  sessions with one id never share a remote context); ``False`` (the default): none;
* the converters (``a2a_message_converter``, ``a2a_task_converter``,
  ``a2a_status_update_converter``, ``a2a_artifact_update_converter``,
  ``a2a_part_converter``): not here; ``None`` (the default, meaning this agent's own
  conversion) is the only value taken.

A bad value is refused when the config is made, with pydantic's ``ValidationError``
(a ``ValueError``) naming the field: a hook that is not callable, an interceptor of
another type, ``forward_session_id_as_context_id`` other than ``True``, ``False`` or
``"namespaced"``, a converter. What a hook does wrong when it runs (it raises, it is
not async, it returns something else than it should) is a :class:`InterceptorError`
saying which hook and what it did; the agent makes it its error event.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Literal

from a2a.client.client import ClientCallContext
from a2a.types import Message, StreamResponse, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent
from pydantic import BaseModel, ConfigDict, StrictBool, field_validator

from .._types import Event

__all__ = ["A2aCardRequestConfig", "A2aRemoteAgentConfig", "CardRequestInterceptor", "InterceptorError",
           "ParametersConfig", "RequestInterceptor", "ResponseShape", "ResponseShaper", "context_id_of_session",
           "execute_after_request_interceptors", "execute_before_card_request_interceptors",
           "execute_before_request_interceptors"]

#: what an ``after_request`` hook is given: google-adk's shape of a response
ResponseShape = Message | tuple[Task, TaskStatusUpdateEvent | TaskArtifactUpdateEvent | None]

_CONVERTERS = ("a2a_message_converter", "a2a_task_converter", "a2a_status_update_converter",
               "a2a_artifact_update_converter", "a2a_part_converter")


class InterceptorError(TypeError):
    """An interceptor's hook failed or broke its contract when it ran (the message says
    which hook and how)."""


class ParametersConfig(BaseModel):
    """The parameters of one A2A send: ``request_metadata``, the request's metadata (a
    JSON object); ``client_call_context``, a2a-sdk's call context (its
    ``service_parameters`` go as HTTP headers)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    request_metadata: dict[str, Any] | None = None
    client_call_context: ClientCallContext | None = None


class RequestInterceptor(BaseModel):
    """Hooks around one A2A send (see the module)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    before_request: Callable[[Any, Message, ParametersConfig],
                             Awaitable[tuple[Message | Event, ParametersConfig]]] | None = None
    after_request: Callable[[Any, Any, Event], Awaitable[Event | None]] | None = None


class A2aCardRequestConfig(BaseModel):
    """What goes with one fetch of an agent card: extra HTTP ``headers``."""

    model_config = ConfigDict(extra="forbid")

    headers: dict[str, str] | None = None


class CardRequestInterceptor(BaseModel):
    """A hook before a card given by URL is fetched (see the module)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    before_request: Callable[[Any], Awaitable[A2aCardRequestConfig]] | None = None


class A2aRemoteAgentConfig(BaseModel):
    """A remote agent's interceptors and context-id rule (see the module)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    a2a_message_converter: Callable[..., Any] | None = None
    a2a_task_converter: Callable[..., Any] | None = None
    a2a_status_update_converter: Callable[..., Any] | None = None
    a2a_artifact_update_converter: Callable[..., Any] | None = None
    a2a_part_converter: Callable[..., Any] | None = None
    request_interceptors: list[RequestInterceptor] | None = None
    card_request_interceptors: list[CardRequestInterceptor] | None = None
    forward_session_id_as_context_id: StrictBool | Literal["namespaced"] = False

    @field_validator(*_CONVERTERS)
    @classmethod
    def _no_converter(cls, value: Any) -> None:
        if value is not None:
            raise ValueError("google-adk's A2A converters are not supported here: this agent converts A2A "
                             "responses itself (leave it None)")
        return None

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> A2aRemoteAgentConfig:
        """A copy whose interceptor lists are new lists of the same interceptors (a hook
        is a function, shared, never copied)."""
        fields: dict[str, Any] = {name: (list(value) if isinstance(value, list) else value)
                                  for name, value in self.__dict__.items()}
        made = type(self).model_construct(**fields)
        if memo is not None:
            memo[id(self)] = made
        return made


async def _awaited(hook: Any, what: str, *args: Any) -> Any:
    """``hook(*args)`` awaited; InterceptorError if it raises or gives no awaitable."""
    try:
        result = hook(*args)
    except Exception as error:  # the user's hook
        raise InterceptorError(f"{what} raised {type(error).__name__}: {error}") from error
    if not inspect.isawaitable(result):
        raise InterceptorError(f"{what} must be async (it returned {type(result).__name__}, not an awaitable)")
    try:
        return await result
    except Exception as error:  # the user's hook
        raise InterceptorError(f"{what} raised {type(error).__name__}: {error}") from error


async def execute_before_card_request_interceptors(
        card_request_interceptors: list[CardRequestInterceptor] | None, ctx: Any) -> dict[str, Any] | None:
    """Runs each card interceptor's ``before_request(ctx)`` in list order, merging the
    headers they give (a later one wins a clash); returns ``{"headers": ...}``, or
    None when there are none (or no ``ctx``). InterceptorError when a hook fails or
    gives something else than an A2aCardRequestConfig (or None)."""
    headers: dict[str, str] = {}
    if ctx is not None:
        for index, interceptor in enumerate(card_request_interceptors or ()):
            if interceptor.before_request is None:
                continue
            what = f"card request interceptor {index}'s before_request"
            given = await _awaited(interceptor.before_request, what, ctx)
            if given is not None and not isinstance(given, A2aCardRequestConfig):
                raise InterceptorError(f"{what} must return an A2aCardRequestConfig, not {type(given).__name__}")
            headers.update((given.headers or {}) if given is not None else {})
    return {"headers": headers} if headers else None


async def execute_before_request_interceptors(
        request_interceptors: list[RequestInterceptor] | None, ctx: Any,
        a2a_request: Message) -> tuple[Message | Event, ParametersConfig]:
    """Runs each ``before_request(ctx, message, params)`` in list order, each given what
    the one before returned (the first: ``a2a_request`` and parameters whose call
    context's ``state`` is the session's); stops at the first that returns an Event.
    Returns the message (or that Event) and the parameters. InterceptorError when a
    hook fails or returns another shape."""
    state = getattr(getattr(ctx, "session", None), "state", None)
    if not isinstance(state, MutableMapping):
        state = dict(state or {})
    params = ParametersConfig(client_call_context=ClientCallContext(state=state))
    for index, interceptor in enumerate(request_interceptors or ()):
        if interceptor.before_request is None:
            continue
        what = f"request interceptor {index}'s before_request"
        given = await _awaited(interceptor.before_request, what, ctx, a2a_request, params)
        if not (isinstance(given, tuple) and len(given) == 2 and isinstance(given[0], (Message, Event))
                and isinstance(given[1], ParametersConfig)):
            raise InterceptorError(f"{what} must return (a2a Message or Event, ParametersConfig), "
                                   f"not {type(given).__name__}")
        result, params = given
        if isinstance(result, Event):
            return result, params
        a2a_request = result
    return a2a_request, params


async def execute_after_request_interceptors(
        request_interceptors: list[RequestInterceptor] | None, ctx: Any, a2a_response: Any,
        event: Event) -> Event | None:
    """Runs each ``after_request(ctx, response, event)`` in reverse list order, each
    given the event the one after returned; None as soon as one returns None (the
    event is dropped). InterceptorError when a hook fails or returns another type."""
    for index in reversed(range(len(request_interceptors or ()))):
        hook = (request_interceptors or [])[index].after_request
        if hook is None:
            continue
        what = f"request interceptor {index}'s after_request"
        given = await _awaited(hook, what, ctx, a2a_response, event)
        if given is None:
            return None
        if not isinstance(given, Event):
            raise InterceptorError(f"{what} must return an Event or None, not {type(given).__name__}")
        event = given
    return event


def context_id_of_session(rule: bool | str, session: Any) -> str:
    """The A2A context a first message goes in under ``forward_session_id_as_context_id``
    ``rule``: "" (``False``, or no session id), the session's id (``True``), or the
    hex SHA-256 of the app, user and session ids, each as its length, ``:`` and itself,
    joined by the unit separator (``"namespaced"``; google-adk's derivation, so the
    same session gets the same remote context from either)."""
    session_id = getattr(session, "id", None)
    if rule is False or not isinstance(session_id, str) or not session_id:
        return ""
    if rule != "namespaced":
        return session_id
    fields = [value if isinstance(value, str) else ""
              for value in (getattr(session, "app_name", ""), getattr(session, "user_id", ""), session_id)]
    return hashlib.sha256("\x1f".join(f"{len(v)}:{v}" for v in fields).encode()).hexdigest()


class ResponseShaper:
    """Turns each item of one A2A stream into google-adk's response shape (see
    :data:`ResponseShape`): a message as it is; a task as ``(task, None)``; a status or
    artifact update as ``(the task so far, update)``, the task so far being the last
    whole task with the updates since applied (a status replaces its status, its
    message added to the history; an artifact is added, or extends the one of its id
    when it says ``append``). Each task given is a copy, never changed later."""

    def __init__(self) -> None:
        self._task: Task | None = None

    def __call__(self, response: StreamResponse) -> ResponseShape | None:
        kind = response.WhichOneof("payload")
        if kind == "message":
            return response.message
        if kind == "task":
            self._task = copy.deepcopy(response.task)
            return (copy.deepcopy(response.task), None)
        if kind not in ("status_update", "artifact_update"):
            return None
        update: TaskStatusUpdateEvent | TaskArtifactUpdateEvent = getattr(response, kind)
        if self._task is None:
            self._task = Task(id=update.task_id, context_id=update.context_id)
        if isinstance(update, TaskStatusUpdateEvent):
            self._task.status.CopyFrom(update.status)
            if update.status.HasField("message"):
                self._task.history.append(update.status.message)
        else:
            known = [a for a in self._task.artifacts if a.artifact_id == update.artifact.artifact_id]
            if known and update.append:
                known[0].parts.extend(update.artifact.parts)
            elif known:
                known[0].CopyFrom(update.artifact)
            else:
                self._task.artifacts.append(update.artifact)
        return (copy.deepcopy(self._task), update)
