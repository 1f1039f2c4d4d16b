"""google-adk's session routes, under ``/apps/{app}/users/{user}/sessions``.

What differs, on purpose: ``PATCH .../sessions/{id}`` applies ``stateDelta`` with the
kit's one rule (a key set to null is deleted; google-adk stores a null). State given
at once is at most ``_validate.MAX_STATE_BYTES`` of JSON (413 over it). Creating a
session with ``temp:`` keys in its state leaves them out, as google-adk does. The
deprecated ``POST .../sessions/{id}`` (its body: the initial state) still works.
Ours only: ``GET .../sessions/{id}/inputs``, the questions the session waits for.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, HTTPException, Request
from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from .._exceptions import LimitExceededError, SessionExistsError, SessionNotFoundError
from .._names import EVAL_SESSION_PREFIX
from .._types import Event
from .._validate import limit_problem
from ..workflow import waiting_inputs
from ._deps import Api, HostApi
from ._wire import session_json

__all__ = ["CreateSessionBody", "PatchSessionBody", "router"]

SESSIONS = "/apps/{app}/users/{user}/sessions"

router = APIRouter(prefix=SESSIONS, tags=["sessions"])


class _Camel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class CreateSessionBody(_Camel):
    """google-adk's ``CreateSessionRequest`` (``adk_actors.cli.api_server`` exports this
    model under that name). ``events`` and ``options`` are validated as google-adk's,
    then refused by the route when given (422): a host starts a session with no events
    and its store takes no options."""

    session_id: str | None = None
    state: dict[str, Any] | None = None
    events: list[Event] | None = None
    options: dict[str, Any] | None = None


class PatchSessionBody(_Camel):
    state_delta: dict[str, Any]


def _create(api: HostApi, app: str, user: str, session_id: str | None, state: dict[str, Any] | None) -> Any:
    """Create the session with ``state`` but its ``temp:`` keys: 413 for a state over
    ``MAX_STATE_BYTES`` (the deprecated route's whole body is the state, which the
    guard does not look into), 409 for an id taken, else the session."""
    kept = {k: v for k, v in (state or {}).items() if not k.startswith("temp:")}
    too_large = limit_problem("state", kept)
    if too_large is not None:
        raise LimitExceededError(too_large)
    try:
        info = api.runner(app).create_session(user, session_id, kept)
    except SessionExistsError:
        raise HTTPException(409, f"Session already exists: {session_id or ''}") from None
    return session_json(info)


@router.post("")
def create_session(app: str, user: str, request: Request, api: Api,
                   body: Annotated[CreateSessionBody | None, Body()] = None) -> Any:
    api.allowed(request, user, app)
    refused = [name for name in ("events", "options") if body is not None and getattr(body, name)]
    if refused:
        raise HTTPException(422, f"not supported by this host when creating a session: {', '.join(refused)}")
    return _create(api, app, user, body.session_id if body else None, body.state if body else None)


@router.post("/{session_id}", deprecated=True)
def create_session_with_id(app: str, user: str, session_id: str, request: Request, api: Api,
                           state: Annotated[dict[str, Any] | None, Body()] = None) -> Any:
    """google-adk's older way to create a session with a given id; the body is its state."""
    api.allowed(request, user, app)
    return _create(api, app, user, session_id, state)


@router.get("")
def list_sessions(app: str, user: str, request: Request, api: Api) -> Any:
    api.allowed(request, user, app)
    return [session_json(info) for info in api.runner(app).list_sessions(user)
            if not info.id.startswith(EVAL_SESSION_PREFIX)]  # as google-adk: eval runs' sessions left out


@router.get("/{session_id}")
def get_session(app: str, user: str, session_id: str, request: Request, api: Api) -> Any:
    api.allowed(request, user, app)
    return session_json(api.runner(app).get_session(user, session_id))


@router.get("/{session_id}/inputs")
def get_waiting_inputs(app: str, user: str, session_id: str, request: Request, api: Api) -> Any:
    """Ours (the console's): the questions workflow nodes asked (``RequestInput``) that
    the session still waits for, oldest first, each as ``waiting_inputs`` gives it
    (``interruptId``, ``message``, ``payload``, ``response_schema``, ``path`` ...)."""
    api.allowed(request, user, app)
    return [ask.to_dict() for ask in waiting_inputs(api.runner(app).get_session(user, session_id).events)]


@router.patch("/{session_id}")
def patch_session(app: str, user: str, session_id: str, body: PatchSessionBody, request: Request, api: Api) -> Any:
    api.allowed(request, user, app)
    return session_json(api.runner(app).update_state(user, session_id, body.state_delta))


@router.delete("/{session_id}")
def delete_session(app: str, user: str, session_id: str, request: Request, api: Api) -> None:
    api.allowed(request, user, app)
    try:
        api.runner(app).delete_session(user, session_id)
    except SessionNotFoundError:
        pass  # as google-adk: deleting an unknown session is not an error
