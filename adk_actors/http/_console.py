"""The web console's routes: the page itself, and what it needs besides google-adk's API.

* ``GET /``: the console (one HTML page, a stylesheet and a script, no build step).
* ``GET /console/api/whoami``: the request's principal, and whether it is an operator.
* ``GET /console/api/tree?offset=&limit=&search=`` (operators): the live supervision
  tree, one row per actor (path, status, pid, restarts; a partition busy past the
  walk's wait is ``busy``, one gone or stopped ``unreachable``), a page of the held
  sessions (``limit``, default 50, from ``offset``; ``search``: those whose
  app/user/session or a run id contains it; ``sessions``: how many there are in all),
  every model's circuit breaker, and in a cluster the other hosts' trees
  (``others``: name, leader, rows; shown, not killed, from here).
* ``POST /console/api/kill`` (operators): ``{"path": ...}``: SIGKILL that actor, as
  ``adk-actors chaos kill`` does; its supervisor restarts it (a session is crashed,
  a run killed alone: ``chaos.kill_row``). A session or run is found by its path at
  the partition that owns it, on the page shown or not (``chaos.find_rows``).
* ``POST /console/api/reset`` (operators): ``{"path": ...}`` of a failed session (found
  so too): it serves again.
* ``GET /apps/{app}/users/{user}/approvals``: the user's pending approvals.
* ``POST /apps/{app}/users/{user}/approvals/{id}``: ``{"approve": bool, "reason"?}``.
* ``PUT /apps/{app}/users/{user}/credentials/{key}``: ``{"accessToken", "expiresIn"?}``
  or ``{"apiKey"}``: the answer to a tool's credential request.

A user reaches only their own approvals and credentials (403 otherwise).
"""

from __future__ import annotations

import time
from importlib import resources
from typing import Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, ConfigDict, SecretStr
from pydantic.alias_generators import to_camel

from .._exceptions import AdkError
from ..chaos import SESSIONS_SHOWN, cluster_trees, find_rows, kill_row, killable, tree_rows
from ..runtime import Credential
from ._deps import Api, HostApi
from ._guard import OPERATOR, require_operator

__all__ = ["router"]

router = APIRouter(tags=["console"])

_FILES = resources.files("adk_actors.http") / "console"
_TYPES = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8"}


class KillBody(BaseModel):
    path: str


class DecisionBody(BaseModel):
    approve: bool
    reason: str = ""


class CredentialBody(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")
    access_token: str | None = None
    expires_in: float | None = None
    api_key: str | None = None



def _rows(api: HostApi, offset: int = 0, limit: int = SESSIONS_SHOWN, search: str = "") -> list[dict[str, Any]]:
    with api.host.system.private() as endpoint:
        return tree_rows(api.host, endpoint=endpoint, offset=offset, sessions=limit, search=search)


def _found(api: HostApi, path: str) -> list[dict[str, Any]]:
    """The rows ``path`` names (``chaos.find_rows``); 503 while the partitions restart."""
    try:
        return find_rows(api.host, path)
    except AdkError as exc:
        raise HTTPException(503, f"the session partitions cannot be asked now: {exc}") from None


def _operator(request: Request) -> None:
    require_operator(request, "see or touch the supervision tree")


@router.get("/", include_in_schema=False)
def page() -> HTMLResponse:
    return HTMLResponse((_FILES / "index.html").read_text(), headers={"cache-control": "no-store"})


@router.get("/console/{name}", include_in_schema=False)
def asset(name: str) -> Response:
    if name not in _TYPES:
        raise HTTPException(404, "Not Found")
    return Response((_FILES / name).read_text(), media_type=_TYPES[name])


@router.get("/console/api/whoami")
def whoami(request: Request) -> dict[str, Any]:
    principal = request.state.principal
    return {"principal": principal, "operator": principal == OPERATOR}


@router.get("/console/api/tree")
def tree(request: Request, api: Api, offset: int = Query(0, ge=0), limit: int = Query(SESSIONS_SHOWN, ge=0, le=1000),
         search: str = Query("", max_length=200)) -> dict[str, Any]:
    _operator(request)
    breakers: dict[str, Any] = {}
    try:
        names = api.apps.names()
        breakers = api.runner(names[0]).breaker_states() if names else {}
    except Exception:  # the breaker actor is restarting: the tree shows it
        breakers = {}
    try:  # in a cluster: the other hosts' trees, to look at (their kill buttons are on their consoles)
        others = cluster_trees(api.host, others_only=True, offset=offset, sessions=limit, search=search)
    except Exception as exc:  # the cluster actor is restarting
        others = [{"name": "cluster", "leader": False, "this": False, "rows": [], "unreachable": str(exc)}]
    rows = _rows(api, offset, limit, search)
    held = sum(row.get("sessions", 0) for row in rows)
    return {"rows": rows, "breakers": breakers, "others": others, "time": time.time(),
            "sessions": held, "offset": offset, "limit": limit, "search": search}


@router.post("/console/api/kill")
def kill(body: KillBody, request: Request, api: Api) -> dict[str, Any]:
    _operator(request)
    target = next((r for r in _found(api, body.path) if r["path"] == body.path and killable(r)), None)
    if target is None:
        raise HTTPException(404, f"no running actor {body.path!r}")
    return {"killed": target["pid"], "path": body.path, "done": kill_row(api.host, target)}


@router.post("/console/api/reset")
def reset(body: KillBody, request: Request, api: Api) -> dict[str, Any]:
    _operator(request)
    target = next((r for r in _found(api, body.path) if r["path"] == body.path and r["type"] == "session"), None)
    if target is None:
        raise HTTPException(404, f"no session {body.path!r} held")
    api.runner(target["app"]).reset_session(target["user"], target["session"])
    return {"reset": body.path}


@router.get("/apps/{app}/users/{user}/approvals")
def approvals(app: str, user: str, request: Request, api: Api) -> list[dict[str, Any]]:
    api.allowed(request, user, app)
    return [{"id": a.id, "sessionId": a.session_id, "agent": a.agent, "tool": a.tool, "args": a.args,
             "hint": a.hint, "status": a.status} for a in api.runner(app).approvals(user)]


@router.post("/apps/{app}/users/{user}/approvals/{approval_id}")
def decide(app: str, user: str, approval_id: str, body: DecisionBody, request: Request,
           api: Api) -> dict[str, Any]:
    api.allowed(request, user, app)
    run = api.runner(app)
    if not any(a.id == approval_id for a in run.approvals(user, status=None)):
        raise HTTPException(404, "Approval not found")
    decided = run.approve(approval_id) if body.approve else run.deny(approval_id, body.reason or "denied")
    return {"id": approval_id, "status": getattr(decided, "status", "approved" if body.approve else "denied")}


@router.put("/apps/{app}/users/{user}/credentials/{key}")
def put_credential(app: str, user: str, key: str, body: CredentialBody, request: Request,
                   api: Api) -> None:
    api.allowed(request, user, app)
    if body.access_token:
        credential = Credential(kind="oauth2", access_token=SecretStr(body.access_token),
                                expires_at=time.time() + body.expires_in if body.expires_in else None)
    elif body.api_key:
        credential = Credential(kind="api_key", api_key=SecretStr(body.api_key))
    else:
        raise HTTPException(422, "give accessToken or apiKey")
    api.runner(app).put_credential(user, key, credential)
