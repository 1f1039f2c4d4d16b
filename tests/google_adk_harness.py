"""What the google-adk side-by-side tests share (tests/test_google_adk_parity.py,
tests/test_google_adk_plugins.py): a google-adk program's source with its imports
rewritten for ours; one Gemini REST stand-in named to both sides by environment
variables only; and what is compared of a run: its events through google-adk's
Event readers, and the requests the stand-in received, as the model reads them
(what is left out of each, and why, is in test_google_adk_parity's docstring).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import os
import re
import sys
import threading
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from adk_actors.testing import StubResponse, StubServer, gemini_response
from supervision.lowlevel import free_port
from supervision.testing import wait_until

__all__ = ["agent_packages", "assert_alike", "calls", "event_rows", "gemini", "gemini_by_environment",
           "google_adk_api_server", "on_stand_in", "request_rows", "rewritten", "run_case", "run_program", "stand_in"]


def rewritten(source: str) -> str:
    """The case's source for ours: its imports, and only they, changed by search-and-replace."""
    source = source.replace("from google.genai import types", "from adk_actors import types")
    source = source.replace("google.genai.types", "adk_actors.types")
    return re.sub(r"\bgoogle\.adk\b", "adk_actors", source)


@contextlib.contextmanager
def gemini_by_environment(url: str) -> Iterator[dict[str, str]]:
    """google-genai's own variables naming the Gemini stand-in at ``url`` (and no other
    Gemini or Vertex AI setting), in this process's environment while it lasts, for
    both servers of a side-by-side test; what was there before is put back."""
    names = {"GOOGLE_API_KEY": "test-key-not-a-secret", "GOOGLE_GEMINI_BASE_URL": url, "ADK_DISABLE_TELEMETRY": "1"}
    cleared = ("GEMINI_API_KEY", "GEMINI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT",
               "GOOGLE_CLOUD_LOCATION")
    saved = {name: os.environ.get(name) for name in (*names, *cleared)}
    for name in cleared:
        os.environ.pop(name, None)
    os.environ.update(names)
    try:
        yield names
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def google_adk_api_server(agents: Path, program: str, apps: dict[str, str]) -> Iterator[httpx.Client]:
    """google-adk's FastAPI app (what ``adk api_server`` serves: ``get_fast_api_app``,
    in-memory services) on uvicorn on a free loopback port, serving ``program`` as the
    agent folders under ``agents`` that ``apps`` names (app -> the program's agent
    variable, each folder's ``root_agent``); a client of it. (google-adk and uvicorn
    are imported here: only the tests that run its server need them.)"""
    import uvicorn
    from google.adk.cli.fast_api import get_fast_api_app

    for app, name in apps.items():
        (agents / app).mkdir()
        (agents / app / "__init__.py").write_text("from . import agent\n")
        (agents / app / "agent.py").write_text(program + f"\nroot_agent = {name}\n")
    served = get_fast_api_app(agents_dir=str(agents), web=False, session_service_uri="memory://",
                              artifact_service_uri="memory://", memory_service_uri="memory://")
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(served, host="127.0.0.1", port=port, log_level="critical"))
    thread = threading.Thread(target=server.run, name="google-adk-api-server", daemon=True)
    thread.start()
    try:
        wait_until(lambda: server.started or not thread.is_alive(), timeout=30)
        assert server.started, "google-adk's app did not start"
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
            yield http
    finally:
        server.should_exit = True
        thread.join(30)


def calls(*items: tuple[str, dict[str, Any]]) -> StubResponse:
    return gemini_response(function_calls=list(items))


# -- one stand-in, reached by the environment only --------------------------------------


@pytest.fixture(scope="module")
def stand_in() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


def on_stand_in(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Name the Gemini stand-in at ``url`` to both sides by environment variables alone
    (google-genai's own: a google-adk user's environment serves ours unchanged)."""
    for name in ("GEMINI_API_KEY", "GEMINI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT",
                 "GOOGLE_CLOUD_LOCATION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key-not-a-secret")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", url)
    monkeypatch.setenv("ADK_DISABLE_TELEMETRY", "1")


def agent_packages(folder: Path, source: str, their: str, our: str,
                   monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """For a fixture to ``yield from``: two importable agent packages under
    ``folder/agents``, ``their`` (google-adk's ``source``) and ``our`` (it rewritten),
    each ``agent.py`` imported by its ``__init__``; ``folder`` is yielded, then both
    packages are forgotten (``sys.modules``)."""
    for package, text in ((their, source), (our, rewritten(source))):
        where = folder / "agents" / package
        where.mkdir(parents=True)
        (where / "__init__.py").write_text("from . import agent\n")
        (where / "agent.py").write_text(text)
    monkeypatch.syspath_prepend(str(folder / "agents"))
    yield folder
    for package in (their, our):
        for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
            del sys.modules[name]


@pytest.fixture
def gemini(stand_in: StubServer, monkeypatch: pytest.MonkeyPatch) -> StubServer:
    """The stand-in, named to both sides by environment variables alone."""
    on_stand_in(stand_in.url, monkeypatch)
    return stand_in


# -- what is compared ---------------------------------------------------------------------


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str, sort_keys=True))


class _Ids:
    """Function-call ids by order of appearance (they are random on both sides)."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def __call__(self, value: str | None) -> str | None:
        if value is None:
            return None
        return self.seen.setdefault(value, f"call-{len(self.seen)}")


def event_rows(events: list[Any]) -> list[dict[str, Any]]:
    """What a google-adk user reads of each event, through google-adk's Event readers."""
    ids = _Ids()
    rows = []
    for event in events:
        content = event.content
        text = "".join(p.text for p in (content.parts or []) if p.text and not p.thought) if content else ""
        rows.append({
            "author": event.author,
            "final": event.is_final_response(),
            "calls": [(ids(c.id), c.name, _plain(c.args or {})) for c in event.get_function_calls()],
            "responses": [(ids(r.id), r.name, _plain(r.response)) for r in event.get_function_responses()],
            "text": text,
            "trailing_code_result": event.has_trailing_code_execution_result(),
            "long_running": sorted(ids(i) for i in event.long_running_tool_ids or ()),
            "partial": bool(event.partial),
            "transfer": event.actions.transfer_to_agent,
            "skip_summarization": bool(event.actions.skip_summarization),
        })
    return rows


def _schema(schema: Any) -> Any:
    """A JSON schema without ``title`` keys (google-adk's pydantic-made schemas have them);
    an object with no properties as None (google-adk sends no schema for a tool without
    parameters, we send that empty object)."""
    if schema == {"type": "object", "properties": {}}:
        return None
    if isinstance(schema, dict):
        return {k: _schema(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_schema(v) for v in schema]
    return schema


def _contents(contents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The request's contents without function-call ids; another agent's turn, quoted
    to the agent as context, as who did what (its wording differs, see the module)."""
    contents = copy.deepcopy(contents)
    for index, content in enumerate(contents):
        parts = content.get("parts", [])
        if parts and parts[0].get("text", "").startswith("For context"):
            contents[index] = {"role": content.get("role"),
                               "context": [p.get("text", "").split(":")[0] for p in parts[1:]]}
            continue
        for part in parts:
            for key in ("functionCall", "functionResponse"):
                if key in part:
                    part[key].pop("id", None)
    return contents


def _tool(declaration: dict[str, Any]) -> dict[str, Any]:
    """A tool as the model reads it; ``transfer_to_agent`` as its name and the agents it
    offers (its description's words differ, see the module)."""
    parameters = declaration.get("parameters") or declaration.get("parameters_json_schema") \
        or declaration.get("parametersJsonSchema")
    if declaration["name"] == "transfer_to_agent":
        return {"name": "transfer_to_agent", "agents": parameters["properties"]["agent_name"]["enum"]}
    return {"name": declaration["name"], "description": declaration.get("description", ""),
            "parameters": _schema(parameters)}


def request_rows(server: StubServer) -> list[dict[str, Any]]:
    """What the stand-in received, as the model would read it (see the module)."""
    rows = []
    for request in server.requests:
        body = request.body
        instruction = "".join(p.get("text", "") for p in (body.get("systemInstruction") or {}).get("parts", []))
        tools = [_tool(d) for tool in body.get("tools", []) for d in tool.get("functionDeclarations", [])]
        rows.append({"path": request.path.split("?")[0], "contents": _contents(body["contents"]),
                     "tools": sorted(tools, key=lambda t: t["name"]),
                     "instruction": instruction.split("\n\nYou are ")[0]})
    return rows


def run_program(source: str, answers: list[StubResponse], server: StubServer, *args: Any,
                name: str = "<parity case>", entry: str = "main") -> tuple[dict[str, Any], Any]:
    """Execute ``source`` against the stand-in scripted with ``answers`` (and nothing
    else): its namespace, and what its ``entry(*args)`` returned (within 60 s)."""
    with server._lock:
        server.requests.clear()
        server.responses.clear()
    server.add(*answers)
    # a module of its own, as a program's source is (pydantic resolves a class's
    # annotations through the module it names)
    module = types.ModuleType("parity_case")
    namespace: dict[str, Any] = module.__dict__
    sys.modules["parity_case"] = module
    try:
        exec(compile(source, name, "exec"), namespace)
        return namespace, asyncio.run(asyncio.wait_for(namespace[entry](*args), timeout=60))
    finally:
        sys.modules.pop("parity_case", None)


def run_case(source: str, answers: list[StubResponse], turns: list[str], server: StubServer) -> dict[str, Any]:
    """Execute ``source`` (its ``main(turns)``, which returns its events, final texts and
    state) against the stand-in scripted with ``answers``: what is compared of it."""
    _, (events, finals, state) = run_program(source, answers, server, turns)
    return {"events": event_rows(events), "finals": _plain(finals), "state": _plain(state),
            "requests": request_rows(server), "unused_answers": len(server.responses)}


def assert_alike(source: str, answers: list[StubResponse], turns: list[str], server: StubServer) -> None:
    """Run ``source`` on google-adk as written, then here with its imports rewritten, on
    the same script of answers: google-adk must use the whole script and answer, and
    ours must give the same events, final texts, state and model requests."""
    theirs = run_case(source, answers, turns, server)
    assert theirs["unused_answers"] == 0 and theirs["finals"], "the case must use its script on google-adk"
    ours = run_case(rewritten(source), answers, turns, server)
    assert "google" not in rewritten(source)
    assert ours["events"] == theirs["events"]
    assert ours["finals"] == theirs["finals"]
    assert ours["state"] == theirs["state"]
    assert ours["requests"] == theirs["requests"]
    assert ours["unused_answers"] == 0
