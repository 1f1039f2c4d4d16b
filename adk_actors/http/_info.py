"""What the host serves: ``/health``, ``/version``, ``/list-apps`` and
``/apps/{app}/app-info``, as google-adk answers them."""

from __future__ import annotations

import platform
from typing import Any

from fastapi import APIRouter, HTTPException
from starlette.concurrency import run_in_threadpool

from .. import __version__
from ..agents import LlmAgent
from ..compiler import declaration_of, is_toolset
from ._deps import Api, HostApi

__all__ = ["agent_json", "router"]

router = APIRouter()


def agent_json(agent: Any) -> dict[str, Any]:
    """One agent as google-adk's app-info shows it (``sub_agents`` in snake case, as there)."""
    tools = [declaration_of(t).model_dump(mode="json", by_alias=True, exclude_none=True)
             for t in getattr(agent, "tools", ()) or () if not is_toolset(t)]
    instruction = getattr(agent, "instruction", "")
    return {"name": agent.name, "description": getattr(agent, "description", "") or "",
            "instruction": instruction if isinstance(instruction, str) else "",
            "tools": [{"functionDeclarations": tools}] if tools else [],
            "sub_agents": [sub.name for sub in getattr(agent, "sub_agents", ()) or ()]}


def _summary(api: HostApi, app: str) -> dict[str, Any]:
    """google-adk's summary of an app; with ``loadError`` when the current files of an
    agent folder do not import (its last good version, if any, serving meanwhile)."""
    agent = api.root_agent_of(app)
    summary = {"name": app, "rootAgentName": getattr(agent, "name", ""),
               "description": getattr(agent, "description", "") or "", "language": api.apps.language(app),
               "isComputerUse": False}
    error = api.apps.load_error(app)
    return summary if error is None else {**summary, "loadError": error}


@router.get("/health")
def health() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/version")
def version() -> dict[str, str]:
    return {"version": __version__, "language": "python", "language_version": platform.python_version()}


@router.get("/list-apps")
async def list_apps(api: Api, detailed: bool = False, relative_path: str | None = None) -> Any:
    """The apps' names (``detailed``: a summary of each). An app the agent builder has
    drafted but not saved is listed too (adk-web opens it in builder mode by name); it
    cannot run until it is saved.

    The names are read on the event loop (a listing of the agents folder: a few ``stat``
    calls per entry), so the answer waits for no worker thread: this is the request
    a starting server is polled with (``_app.warm_up``), while its loop is busy
    building the other routes. The summaries load each app's agent (its import): on
    a worker thread."""
    names = sorted({*api.apps.names(), *api.apps.drafts()})
    if not detailed:
        return names
    return await run_in_threadpool(_summaries, api, names)


def _summaries(api: HostApi, names: list[str]) -> dict[str, Any]:
    """``/list-apps?detailed=true``'s answer: google-adk's summary of each app."""
    return {"apps": [{**_summary(api, name), "agents": None} for name in names]}


@router.get("/apps/{app}/app-info")
def app_info(app: str, api: Api) -> Any:
    api.runner(app)  # an unknown app: 404
    agent = api.root_agent_of(app)
    if not isinstance(agent, LlmAgent):
        raise HTTPException(400, f"the root agent of {app!r} is not an LlmAgent")
    agents: dict[str, Any] = {}
    pending = [agent]
    while pending:
        current = pending.pop(0)
        agents[current.name] = agent_json(current)
        pending.extend(getattr(current, "sub_agents", ()) or ())
    return {**_summary(api, app), "agents": agents}
