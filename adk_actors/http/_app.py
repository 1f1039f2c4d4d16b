"""google-adk's HTTP API, served from a host: the same routes, shapes and casing.

``create_app(host, apps, section)`` builds a FastAPI app whose routes call the host
through :class:`~adk_actors.runtime.Runner` (one per app). JSON is google-adk's:
camelCase, None fields omitted, errors ``{"detail": ...}``. What differs, on purpose:

* ``PATCH .../sessions/{id}`` applies ``stateDelta`` with the kit's one rule: a key
  set to null is deleted (google-adk stores a null).
* A run's ``stateDelta`` is committed on the user's event, as in google-adk; a key
  set to null is deleted there too.
* A run that fails (deadline, kill -9 of its actor...) ends ``/run`` with 500
  ``{"detail": "<reason>: ..."}`` and ``/run_sse`` with google-adk's error line;
  every event sent before it is committed.
* A client that leaves an SSE stream does not stop the run: it runs to its end and
  is committed (cancel it with the Runner or ``adk-actors``).

Routes a request's user may not reach answer 403: a token of user ``ann`` reaches
only ``/apps/{app}/users/ann/...`` and runs whose ``userId`` is ``ann``.

Every error is JSON ``{"detail": ...}`` that names what was wrong with the request,
never the host's internals: names in the path outside the grammar (``_names``) and
bodies the guard refuses are 422, a request that failed inside the host is a typed
500 (logged there), a host that cannot answer now a 503. No path is redirected.
"""

from __future__ import annotations

import json
import logging
import platform
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Body, Depends, FastAPI, HTTPException, Query, Request, WebSocketException
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel
from starlette.concurrency import run_in_threadpool
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import HTTPConnection

from .. import __version__
from .._exceptions import (
    AdkError,
    HostError,
    InternalError,
    InvalidRequestError,
    LimitExceededError,
    NotFoundError,
    RunFailedError,
    SessionBusyError,
    SessionExistsError,
    SessionFailedError,
    SessionNotFoundError,
    SessionUnreadableError,
    UnknownAppError,
)
from .._names import ArtifactError, name_problem
from .._types import Content, Event, Part, RunConfig, StreamingMode
from ..agents import LlmAgent
from ..compiler import declaration_of, is_toolset
from ..config import HttpSection
from ..engine import BUILDER_ASSISTANT, ROOT_AGENT_FILE, AppCatalog, load_agent_config
from ..evals import EVAL_SESSION_PREFIX, EvalFiles
from ..messages import Limits
from ._adk_web import add_adk_web, adk_web_files
from ._builder import add_builder_routes
from ._console import add_console
from ._evals import add_eval_routes
from ._guard import OPERATOR, Guard
from ._live import add_live
from ._trace import add_trace_routes
from ._wire import compact_json, event_json, is_user_echo, part_json, session_json, sse_events

__all__ = ["create_app"]

_log = logging.getLogger("adk_actors.http")


class _Camel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class CreateSessionBody(_Camel):
    session_id: str | None = None
    state: dict[str, Any] | None = None


class PatchSessionBody(_Camel):
    state_delta: dict[str, Any]


class RunAgentRequest(_Camel):
    app_name: str
    user_id: str
    session_id: str
    new_message: dict[str, Any] | None = None
    streaming: bool = False
    state_delta: dict[str, Any] | None = None
    function_call_event_id: str | None = None
    invocation_id: str | None = None
    custom_metadata: dict[str, Any] | None = None


class SaveArtifactBody(_Camel):
    filename: str
    artifact: dict[str, Any]
    custom_metadata: dict[str, Any] | None = None


class MemoryBody(_Camel):
    session_id: str


_STATUS: tuple[tuple[type[AdkError], int], ...] = (
    (SessionNotFoundError, 404), (UnknownAppError, 404), (NotFoundError, 404), (SessionExistsError, 409),
    (SessionBusyError, 409), (SessionFailedError, 409), (LimitExceededError, 413), (InvalidRequestError, 400), (ArtifactError, 400),
    (HostError, 503), (RunFailedError, 500), (SessionUnreadableError, 500), (InternalError, 500))

#: What a 503 says: why the host could not answer is in its log, not in the answer.
HOST_UNAVAILABLE = "the host could not answer this request now (a part of it is restarting, or busy); try again"
#: The path parameters that are names (``_names``), and what each is called.
_PATH_NAMES = {"app": "app name", "user": "user id", "session_id": "session id", "name": "artifact name",
               "app_name": "app name"}


def _status_of(error: AdkError) -> int:
    return next((status for kind, status in _STATUS if isinstance(error, kind)), 500)


def _detail_of(error: AdkError) -> str:
    if isinstance(error, SessionNotFoundError):
        return "Session not found"
    if isinstance(error, RunFailedError):
        return f"{error.reason}: {error.detail}" if error.detail else error.reason
    if isinstance(error, HostError):
        return HOST_UNAVAILABLE
    return str(error)


class _SafeJSONResponse(JSONResponse):
    """FastAPI's JSON (UTF-8 as it is), or, for content whose text cannot be encoded
    (an error message quoting a caller's bad text), the same JSON with escapes."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return json.dumps(content, separators=(",", ":")).encode()


def _check_path_names(connection: HTTPConnection) -> None:
    """422 for a name in the path outside the grammar (``..``, a control character,
    over 255 bytes ...), checked before any route runs (a WebSocket is closed, 1008)."""
    for key, what in _PATH_NAMES.items():
        value = connection.path_params.get(key)
        problem = name_problem(value, what) if value is not None else None
        if problem is not None:
            if connection.scope["type"] == "websocket":
                raise WebSocketException(1008, problem[:120])
            raise HTTPException(422, problem)


def agent_json(agent: Any) -> dict[str, Any]:
    """One agent as google-adk's app-info shows it (``sub_agents`` in snake case, as there)."""
    tools = [declaration_of(t).model_dump(mode="json", by_alias=True, exclude_none=True)
             for t in getattr(agent, "tools", ()) or () if not is_toolset(t)]
    instruction = getattr(agent, "instruction", "")
    return {"name": agent.name, "description": getattr(agent, "description", "") or "",
            "instruction": instruction if isinstance(instruction, str) else "",
            "tools": [{"functionDeclarations": tools}] if tools else [],
            "sub_agents": [sub.name for sub in getattr(agent, "sub_agents", ()) or ()]}


def create_app(host: Any, apps: AppCatalog, section: HttpSection, evals_dir: str | None = None, *,
               max_json_depth: int = Limits.max_json_depth) -> Any:
    """The API for ``host``'s ``apps``, guarded as ``section`` says
    (:mod:`adk_actors.http._guard`), bodies nested no deeper than ``max_json_depth``
    (the host's ``[limits]``); eval sets live in ``evals_dir`` (None: no eval
    routes)."""
    runners: dict[str, Any] = {}

    def root_agent_of(app: str) -> Any:
        """The app's root agent, for ``/list-apps?detailed=true``, ``app-info`` and
        adk-web's graph; a draft's, from its draft (None if its definition is broken:
        its turns say why)."""
        try:
            if apps.is_draft(app):
                draft = apps.draft_folder(app)
                return load_agent_config(draft / ROOT_AGENT_FILE) if draft is not None else None
            return apps.load(app).root_agent
        except Exception:
            return None

    def runner(app: str) -> Any:
        if app not in apps:
            if apps.is_draft(app):
                raise UnknownAppError(f"app {app!r} is a draft of the agent builder: save it to run it")
            raise UnknownAppError(f"unknown app {app!r}; known apps: {apps.names()}")
        if app not in runners:
            runners[app] = host.runner(app)
        return runners[app]

    def allowed(request: Request, user: str, app: str) -> None:
        """403 unless the request's token may act for ``user`` in ``app`` (the agent
        builder's assistant writes the host's agent files: the operator's only)."""
        principal = request.state.principal
        if principal != OPERATOR and principal != user:
            raise HTTPException(403, "this token may not act for that user")
        if app == BUILDER_ASSISTANT and principal != OPERATOR:
            raise HTTPException(403, "the agent builder's assistant writes the host's agent files: operator only")

    api = FastAPI(title="adk-actors", version=__version__, redirect_slashes=False,
                  default_response_class=_SafeJSONResponse,
                  dependencies=[Depends(_check_path_names)],
                  description="google-adk's HTTP API, served by an adk-actors host.")

    @api.exception_handler(AdkError)
    async def adk_error(request: Request, error: AdkError) -> JSONResponse:
        return _SafeJSONResponse({"detail": _detail_of(error)}, status_code=_status_of(error))

    @api.exception_handler(RequestValidationError)
    async def invalid_body(request: Request, error: RequestValidationError) -> JSONResponse:
        """FastAPI's 422, without echoing the input (its text may not even encode)."""
        return _SafeJSONResponse({"detail": [{"type": e.get("type"), "loc": list(e.get("loc", ())),
                                              "msg": str(e.get("msg", ""))} for e in error.errors()]},
                                 status_code=422)

    @api.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> JSONResponse:
        """A bug of this server: a typed 500 (the traceback goes to its log), never a bare one."""
        _log.error("%s %s failed", request.method, request.url.path, exc_info=error)
        return _SafeJSONResponse({"detail": "the request failed inside the host's HTTP server; it was logged"},
                                  status_code=500)

    @api.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @api.get("/version")
    def version() -> dict[str, str]:
        return {"version": __version__, "language": "python", "language_version": platform.python_version()}

    @api.get("/list-apps")
    def list_apps(detailed: bool = False, relative_path: str | None = None) -> Any:
        # An app the agent builder has drafted but not saved is listed too (adk-web opens
        # it in builder mode by name); it cannot run until it is saved.
        names = sorted({*apps.names(), *apps.drafts()})
        if not detailed:
            return names
        return {"apps": [{**app_summary(name), "agents": None} for name in names]}

    def app_summary(app: str) -> dict[str, Any]:
        agent = root_agent_of(app)
        return {"name": app, "rootAgentName": getattr(agent, "name", ""),
                "description": getattr(agent, "description", "") or "",
                "language": apps.language(app),
                "isComputerUse": False}

    @api.get("/apps/{app}/app-info")
    def app_info(app: str) -> Any:
        runner(app)  # an unknown app: 404
        agent = root_agent_of(app)
        if not isinstance(agent, LlmAgent):
            raise HTTPException(400, f"the root agent of {app!r} is not an LlmAgent")
        agents: dict[str, Any] = {}
        pending = [agent]
        while pending:
            current = pending.pop(0)
            agents[current.name] = agent_json(current)
            pending.extend(getattr(current, "sub_agents", ()) or ())
        return {**app_summary(app), "agents": agents}

    sessions = "/apps/{app}/users/{user}/sessions"

    @api.post(sessions)
    def create_session(app: str, user: str, request: Request,
                       body: Annotated[CreateSessionBody | None, Body()] = None) -> Any:
        allowed(request, user, app)
        state = {k: v for k, v in (body.state or {}).items() if not k.startswith("temp:")} if body else {}
        try:
            info = runner(app).create_session(user, body.session_id if body else None, state)
        except SessionExistsError:
            raise HTTPException(409, f"Session already exists: {body.session_id if body else ''}") from None
        return session_json(info)

    @api.get(sessions)
    def list_sessions(app: str, user: str, request: Request) -> Any:
        allowed(request, user, app)
        return [session_json(info) for info in runner(app).list_sessions(user)
                if not info.id.startswith(EVAL_SESSION_PREFIX)]  # as google-adk: eval runs' sessions left out

    @api.get(sessions + "/{session_id}")
    def get_session(app: str, user: str, session_id: str, request: Request) -> Any:
        allowed(request, user, app)
        return session_json(runner(app).get_session(user, session_id))

    @api.patch(sessions + "/{session_id}")
    def patch_session(app: str, user: str, session_id: str, body: PatchSessionBody, request: Request) -> Any:
        allowed(request, user, app)
        return session_json(runner(app).update_state(user, session_id, body.state_delta))

    @api.delete(sessions + "/{session_id}")
    def delete_session(app: str, user: str, session_id: str, request: Request) -> None:
        allowed(request, user, app)
        try:
            runner(app).delete_session(user, session_id)
        except SessionNotFoundError:
            pass  # as google-adk: deleting an unknown session is not an error

    def prepare(body: RunAgentRequest, request: Request) -> tuple[Any, Content, RunConfig]:
        allowed(request, body.user_id, body.app_name)
        run = runner(body.app_name)
        if body.new_message is None:
            raise HTTPException(422, "newMessage is required")
        try:
            message = Content.model_validate(body.new_message)
        except ValidationError as exc:
            raise HTTPException(422, f"newMessage is not a Content: {exc.errors()[0]['msg']}") from None
        mode = StreamingMode.SSE if body.streaming else StreamingMode.NONE
        return run, message, RunConfig(streaming_mode=mode, custom_metadata=body.custom_metadata)

    @api.post("/run")
    def run_agent(body: RunAgentRequest, request: Request) -> Any:
        run, message, config = prepare(body, request)
        events = list(run.run(body.user_id, body.session_id, message, run_config=config, state_delta=body.state_delta))
        return [event_json(e) for e in _answers(events) if not e.partial]

    @api.post("/run_sse")
    async def run_sse(body: RunAgentRequest, request: Request) -> Any:
        run, message, config = await run_in_threadpool(prepare, body, request)
        events = run.run_async(body.user_id, body.session_id, message, run_config=config, state_delta=body.state_delta)
        first = await anext(events)  # the run was accepted (or this raises, before any stream)
        return StreamingResponse(_sse(events, first), media_type="text/event-stream")

    artifacts = sessions + "/{session_id}/artifacts"

    @api.get(artifacts)
    def list_artifacts(app: str, user: str, session_id: str, request: Request) -> Any:
        allowed(request, user, app)
        return runner(app).list_artifacts(user, session_id)

    @api.post(artifacts)
    def save_artifact(app: str, user: str, session_id: str, body: SaveArtifactBody, request: Request) -> Any:
        allowed(request, user, app)
        try:
            part = Part.model_validate(body.artifact)
        except ValidationError as exc:
            raise HTTPException(422, f"artifact is not a Part: {exc.errors()[0]['msg']}") from None
        run = runner(app)
        version = run.save_artifact(user, session_id, body.filename, part, body.custom_metadata)
        return version_json(app, user, session_id, body.filename,
                            run.artifact_metadata(user, session_id, body.filename, version))

    def version_json(app: str, user: str, session_id: str, name: str, meta: dict[str, Any] | None) -> dict[str, Any]:
        """google-adk's ArtifactVersion for what the store recorded (404 when nothing)."""
        if meta is None:
            raise HTTPException(404, "Artifact not found")
        version = meta["version"]
        return {"version": version, "mimeType": meta["mime_type"], "createTime": meta["created"],
                "customMetadata": meta.get("custom_metadata") or {},
                "canonicalUri": f"artifact://apps/{app}/users/{user}/sessions/{session_id}/artifacts/{name}"
                                f"/versions/{version}"}

    def load(app: str, user: str, session_id: str, name: str, version: int | None) -> Any:
        part = runner(app).load_artifact(user, session_id, name, version)
        if part is None:
            raise HTTPException(404, "Artifact not found")
        return part_json(part)

    @api.get(artifacts + "/{name}/versions/metadata")
    def artifact_versions_metadata(app: str, user: str, session_id: str, name: str, request: Request) -> Any:
        allowed(request, user, app)
        run = runner(app)
        return [version_json(app, user, session_id, name, run.artifact_metadata(user, session_id, name, v))
                for v in run.artifact_versions(user, session_id, name)]

    @api.get(artifacts + "/{name}/versions/{version}/metadata")
    def artifact_version_metadata(app: str, user: str, session_id: str, name: str, version: str,
                                  request: Request) -> Any:
        allowed(request, user, app)
        return version_json(app, user, session_id, name,
                            runner(app).artifact_metadata(user, session_id, name, _version_param(version)))

    @api.get(artifacts + "/{name}/versions")
    def artifact_versions(app: str, user: str, session_id: str, name: str, request: Request) -> Any:
        allowed(request, user, app)
        return runner(app).artifact_versions(user, session_id, name)

    @api.get(artifacts + "/{name}/versions/{version}")
    def artifact_version(app: str, user: str, session_id: str, name: str, version: str, request: Request) -> Any:
        allowed(request, user, app)
        return load(app, user, session_id, name, _version_param(version))

    @api.get(artifacts + "/{name}")
    def get_artifact(app: str, user: str, session_id: str, name: str, request: Request,
                     version: Annotated[int | None, Query(ge=0)] = None) -> Any:
        allowed(request, user, app)
        return load(app, user, session_id, name, version)

    @api.delete(artifacts + "/{name}")
    def delete_artifact(app: str, user: str, session_id: str, name: str, request: Request) -> None:
        allowed(request, user, app)
        runner(app).delete_artifact(user, session_id, name)

    @api.patch("/apps/{app}/users/{user}/memory")
    def add_to_memory(app: str, user: str, body: MemoryBody, request: Request) -> None:
        allowed(request, user, app)
        runner(app).add_session_to_memory(user, body.session_id)

    add_live(api, runner)
    add_trace_routes(api, runner)
    if evals_dir is not None:
        add_eval_routes(api, EvalFiles(evals_dir), runner)
    add_builder_routes(api, apps)
    add_console(api, host, apps.names, runner, allowed)
    adk_web = adk_web_files()
    if adk_web is not None:  # google-adk is installed: its own UI may be used too
        add_adk_web(api, adk_web, root_agent_of)
    guarded: Any = Guard(api, section, max_json_depth)
    if section.allow_origins:
        guarded = CORSMiddleware(guarded, allow_origins=section.allow_origins, allow_methods=["*"],
                                 allow_headers=["*"])
    return guarded


def _version_param(version: str) -> int | None:
    """A version in a path: a number, or ``latest`` (None); anything else is a 422."""
    if version == "latest":
        return None
    if not version.isdigit():
        raise HTTPException(422, "version must be a number or 'latest'")
    return int(version)


def _answers(events: list[Event]) -> list[Event]:
    """A run's events as google-adk answers them: without the user's own."""
    return [event for position, event in enumerate(events) if not is_user_echo(position, event)]


async def _sse(events: AsyncIterator[Event], first: Event) -> AsyncIterator[str]:
    """One ``data:`` line per event (``first`` too, unless it is the user's own),
    compact JSON, a blank line after each; a run that fails ends with google-adk's
    error line."""

    def line(event: Event) -> str:
        return "".join(f"data: {compact_json(frame)}\n\n" for frame in sse_events(event))

    if not is_user_echo(0, first):
        yield line(first)
    try:
        async for event in events:
            yield line(event)
    except AdkError as error:
        kind = error.error_type if isinstance(error, RunFailedError) and error.error_type else type(error).__name__
        text = _detail_of(error)
        failure = {"error": f"{kind}: {text}",
                   "error_details": {"error_type": kind, "error_message": text, "timestamp": time.time()}}
        yield f"data: {json.dumps(failure)}\n\n"
