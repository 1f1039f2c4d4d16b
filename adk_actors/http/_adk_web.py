"""google-adk's adk-web UI at ``/dev-ui/``, when google-adk happens to be installed.

The UI's files are served straight from the installed package
(``google/adk/cli/browser``), never copied here. Same origin, so the UI calls this
host's API at the root; its runtime config says so (``backendUrl: ""``) and turns its
telemetry consent dialog off. The ``/dev/*`` routes the UI calls on load answer what
it needs (the agent graph, ``build_graph``), so the page raises no errors. Chat,
sessions, state, artifacts, streaming, traces (``_trace``), evals (``_evals``) and the
agent builder (``_builder``) go through the host's API, as anywhere.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from .._types import model_name

__all__ = ["add_adk_web", "adk_web_files"]


def adk_web_files() -> Path | None:
    """The installed adk-web UI's directory, or None when google-adk is not installed."""
    try:
        spec = importlib.util.find_spec("google.adk.cli")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    browser = Path(next(iter(spec.submodule_search_locations))) / "browser"
    return browser if (browser / "index.html").is_file() else None


def _graph(agent: Any) -> dict[str, Any]:
    tools = [{"name": getattr(t, "name", getattr(t, "__name__", str(t))), "type": "function"}
             for t in getattr(agent, "tools", ()) or ()]
    instruction = getattr(agent, "instruction", "")
    return {"name": agent.name, "description": getattr(agent, "description", "") or "",
            "agent_class": type(agent).__name__, "model": model_name(getattr(agent, "model", "")),
            "instruction": instruction if isinstance(instruction, str) else "", "tools": tools,
            "sub_agents": [_graph(sub) for sub in getattr(agent, "sub_agents", ()) or ()]}


def add_adk_web(api: FastAPI, files: Path, root_agent_of: Callable[[str], Any]) -> None:
    """Serve the adk-web UI in ``files`` at ``/dev-ui/`` with the ``/dev/*`` routes it
    calls; ``root_agent_of(app)`` is the app's root agent (None: no such app)."""

    def known(app: str) -> Any:
        agent = root_agent_of(app)
        if agent is None:
            raise HTTPException(404, f"App not found: {app}")
        return agent

    @api.get("/dev-ui", include_in_schema=False)
    def to_ui() -> RedirectResponse:
        return RedirectResponse("/dev-ui/", status_code=307)

    @api.get("/dev-ui/assets/config/runtime-config.json", include_in_schema=False)
    def runtime_config() -> JSONResponse:
        return JSONResponse({"backendUrl": "", "telemetry": False}, headers={"cache-control": "no-store"})

    @api.get("/dev/apps/{app}/build_graph", include_in_schema=False)
    def build_graph(app: str) -> dict[str, Any]:
        return {"name": app, "root_agent": _graph(known(app))}

    @api.get("/dev/apps/{app}/build_graph_image", include_in_schema=False)
    def build_graph_image(app: str) -> dict[str, Any]:
        known(app)
        return {}

    @api.get("/config/telemetry", include_in_schema=False)
    def telemetry() -> dict[str, Any]:
        return {"telemetry": False}

    api.mount("/dev-ui", StaticFiles(directory=files, html=True), name="adk-web")
