"""How the HTTP API answers what went wrong: JSON ``{"detail": ...}`` that names what
was wrong with the request, never the host's internals.

* A typed error of the kit (``AdkError``) maps to its status (:func:`status_of`) and
  a detail meant for the caller (:func:`detail_of`; a 503 never says which part of
  the host was away: :data:`HOST_UNAVAILABLE`, or :data:`HOST_STOPPED` when the whole
  host has stopped; it says when to ask again: ``Retry-After``).
* FastAPI's own 422 no longer echoes the input (its text may not even encode).
* Any other exception is a bug of this server: a typed 500, its traceback logged.
* Names in the path outside the grammar (``_names``) are 422 before any route runs
  (:func:`check_path_names`; a WebSocket is closed, 1008).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import FastAPI, HTTPException, Request, WebSocketException
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.requests import HTTPConnection

from .._exceptions import (
    AdkError,
    HostError,
    HostStopped,
    InternalError,
    InvalidRequestError,
    LimitExceededError,
    NotFoundError,
    RunFailedError,
    SessionBusyError,
    SessionElsewhereError,
    SessionExistsError,
    SessionFailedError,
    SessionNotFoundError,
    SessionUnreadableError,
    UnknownAppError,
)
from .._names import ArtifactError, name_problem

__all__ = ["HOST_STOPPED", "HOST_UNAVAILABLE", "SafeJSONResponse", "add_error_handlers", "check_path_names", "detail_of", "status_of"]

_log = logging.getLogger("adk_actors.http")

_STATUS: tuple[tuple[type[AdkError], int], ...] = (
    (SessionNotFoundError, 404), (UnknownAppError, 404), (NotFoundError, 404), (SessionExistsError, 409),
    (SessionBusyError, 409), (SessionFailedError, 409), (LimitExceededError, 413), (InvalidRequestError, 400),
    (ArtifactError, 400), (HostError, 503), (RunFailedError, 500), (SessionUnreadableError, 500),
    (SessionElsewhereError, 503),
    (InternalError, 500))

#: When to ask again after a 503 (its ``Retry-After``, in seconds): a part of the tree
#: restarts in about that time.
RETRY_AFTER = 2
#: What a 503 says: why the host could not answer is in its log, not in the answer.
HOST_UNAVAILABLE = "the host could not answer this request now (a part of it is restarting, or busy); try again"
#: What a 503 says when the whole host has stopped (``HostStopped``): not worth asking
#: again until it is started again.
HOST_STOPPED = "the host has stopped: it answers no request until it is started again"
#: The path parameters that are names (``_names``), and what each is called.
_PATH_NAMES = {"app": "app name", "user": "user id", "session_id": "session id", "name": "artifact name",
               "app_name": "app name"}


def status_of(error: AdkError) -> int:
    return next((status for kind, status in _STATUS if isinstance(error, kind)), 500)


def detail_of(error: AdkError) -> str:
    if isinstance(error, SessionNotFoundError):
        return "Session not found"
    if isinstance(error, RunFailedError):
        return f"{error.reason}: {error.detail}" if error.detail else error.reason
    if isinstance(error, HostStopped):
        return HOST_STOPPED
    if isinstance(error, HostError):
        return HOST_UNAVAILABLE
    return str(error)


class SafeJSONResponse(JSONResponse):
    """FastAPI's JSON (UTF-8 as it is), or, for content whose text cannot be encoded
    (an error message quoting a caller's bad text), the same JSON with escapes."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return json.dumps(content, separators=(",", ":")).encode()


async def check_path_names(connection: HTTPConnection) -> None:
    """422 for a name in the path outside the grammar (``..``, a control character,
    over 255 bytes ...), checked before any route runs (a WebSocket is closed, 1008).
    A coroutine, run on the event loop (see ``host_api``)."""
    for key, what in _PATH_NAMES.items():
        value = connection.path_params.get(key)
        problem = name_problem(value, what) if value is not None else None
        if problem is not None:
            if connection.scope["type"] == "websocket":
                raise WebSocketException(1008, problem[:120])
            raise HTTPException(422, problem)


def add_error_handlers(app: FastAPI) -> None:
    """Answer the kit's typed errors, FastAPI's validation errors and any other
    exception as the module says."""

    @app.exception_handler(AdkError)
    async def adk_error(request: Request, error: AdkError) -> JSONResponse:
        status = status_of(error)
        return SafeJSONResponse({"detail": detail_of(error)}, status_code=status,
                                headers={"Retry-After": str(RETRY_AFTER)} if status == 503 else None)

    @app.exception_handler(RequestValidationError)
    async def invalid_body(request: Request, error: RequestValidationError) -> JSONResponse:
        return SafeJSONResponse({"detail": [{"type": e.get("type"), "loc": list(e.get("loc", ())),
                                             "msg": str(e.get("msg", ""))} for e in error.errors()]},
                                status_code=422)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> JSONResponse:
        _log.error("%s %s failed", request.method, request.url.path, exc_info=error)
        return SafeJSONResponse({"detail": "the request failed inside the host's HTTP server; it was logged"},
                                status_code=500)
