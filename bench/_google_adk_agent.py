"""google-adk's agent for every bench with a peer, and what its process reports.

This file is the peer's, not ours: the benches copy it into a working folder of the
peer's own (beside the peer's script, or as ``agents/echo/agent.py`` for ``adk
api_server``) and the peer imports it from there. It imports only the standard
library and google-adk, never a file of this repository (issue 60).

- ``root_agent``: the scripted agent (echo for text turns; for a text starting with
  "tool", one call of ``bump`` then "counted"), no network.
- ``setup()``: the peer's setup as it ran (google-adk's version, the interpreter, its
  venv, a2a-sdk's version or None, adk-actors' or None).
- ``repo_modules(repo)``: the modules of this process whose file lies in ``repo``
  outside this interpreter's own prefix (its venv) and any ``site-packages``.
- ``report_at_exit(repo, path)``: at the process's end, both of the above written to
  ``path`` as one JSON object (for servers, which the bench stops with SIGTERM).
"""

from __future__ import annotations

import atexit
import importlib.metadata
import json
import os
import platform
import sys
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.genai import types


class MockLlm(BaseLlm):
    model: str = "mock"

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
        last = llm_request.contents[-1]
        parts = last.parts or []
        if any(p.function_response for p in parts):
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="counted")]))
            return
        text = next((p.text for p in parts if p.text), "")
        if text.startswith("tool"):
            call = types.FunctionCall(name="bump", args={})
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))
        else:
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=f"echo: {text}")]))


def bump(tool_context: Any) -> dict[str, Any]:
    """Count a tool turn."""
    count = int(tool_context.state.get("count", 0)) + 1
    tool_context.state["count"] = count
    return {"count": count}


root_agent = LlmAgent(name="bench", model=MockLlm(), tools=[bump])


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def setup() -> dict[str, Any]:
    """This interpreter's google-adk setup, as it runs."""
    return {"google_adk": _version("google-adk"), "a2a_sdk": _version("a2a-sdk"),
            "adk_actors": _version("adk-actors"), "python": sys.executable, "prefix": sys.prefix,
            "venv": sys.prefix != sys.base_prefix, "python_version": platform.python_version(),
            "sys_path": list(sys.path), "cwd": os.getcwd()}


def repo_modules(repo: str) -> list[str]:
    """Every loaded module (``name (file)``) whose file, or namespace folder, lies in
    ``repo`` but not in this interpreter's prefix nor in a ``site-packages`` folder."""
    root = os.path.realpath(repo) + os.sep
    prefix = os.path.realpath(sys.prefix) + os.sep
    found = []
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        places = [file] if file else [p for p in getattr(module, "__path__", []) if isinstance(p, str)]
        for place in places:
            real = os.path.realpath(place)
            if real.startswith(root) and not real.startswith(prefix) and "site-packages" not in real.split(os.sep):
                found.append(f"{name} ({real})")
                break
    return sorted(found)


def report_at_exit(repo: str, path: str) -> None:
    """At this process's normal end, write ``{"setup", "repo_modules"}`` to ``path``."""

    def write() -> None:
        with open(path, "w") as out:
            json.dump({"setup": setup(), "repo_modules": repo_modules(repo)}, out)

    atexit.register(write)
