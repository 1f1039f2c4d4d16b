"""google-adk's adk-web UI at ``/dev-ui/``, when google-adk happens to be installed.

The UI's files are served straight from the installed package
(``google/adk/cli/browser``), never copied here. Same origin, so the UI calls this
host's API at the root; its runtime config says so (``backendUrl: ""``) and turns its
telemetry consent dialog off. The ``/dev/*`` routes the UI calls on load (``_dev``)
are served whether the UI is installed or not. Chat,
sessions, state, artifacts, streaming, traces (``_trace``), evals (``_evals``) and the
agent builder (``_builder``) go through the host's API, as anywhere.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

__all__ = ["adk_web_files", "mount_adk_web"]


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


def mount_adk_web(api: FastAPI, files: Path) -> None:
    """Serve the adk-web UI in ``files`` at ``/dev-ui/``, with its runtime config."""

    @api.get("/dev-ui", include_in_schema=False)
    def to_ui() -> RedirectResponse:
        return RedirectResponse("/dev-ui/", status_code=307)

    @api.get("/dev-ui/assets/config/runtime-config.json", include_in_schema=False)
    def runtime_config() -> JSONResponse:
        return JSONResponse({"backendUrl": "", "telemetry": False}, headers={"cache-control": "no-store"})

    api.mount("/dev-ui", StaticFiles(directory=files, html=True), name="adk-web")
