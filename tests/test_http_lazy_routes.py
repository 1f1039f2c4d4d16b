"""The eval, agent builder, trace, agent graph, console and job routes are imported on their first request
(``http._lazy.LazyRouter``): a server answers ``/list-apps`` without their modules
(the eval kit most of all), and once asked serves them as a server that imported them
at its start: same answers, same order of matching, the same OpenAPI schema.

Each case that looks at what is imported runs in a process of its own. A module that
cannot be imported is made so honestly (a ``sitecustomize`` puts ``None`` in
``sys.modules``: importing it fails with ``ModuleNotFoundError``).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

LAZY_MODULES = ["adk_actors.evals", "adk_actors.http._evals", "adk_actors.http._builder", "adk_actors.http._trace",
                "adk_actors.http._dev", "adk_actors.http._console", "adk_actors.http._jobs"]

# Requests to the lazy routes (and their neighbours), in order: (method, path, JSON body).
REQUESTS: list[tuple[str, str, Any]] = [
    ("GET", "/dev/apps/weather_bot/eval_sets", None),
    ("POST", "/dev/apps/weather_bot/eval-sets", {"evalSet": {"eval_set_id": "s1", "name": "first"}}),
    ("POST", "/dev/apps/weather_bot/eval-sets", {"evalSet": {}}),  # 422
    ("GET", "/dev/apps/weather_bot/eval-sets", None),
    ("GET", "/dev/apps/weather_bot/eval-sets/s1", None),
    ("GET", "/dev/apps/weather_bot/eval_sets/s1/evals", None),
    ("GET", "/dev/apps/weather_bot/eval-sets/nope", None),  # 404
    ("GET", "/dev/apps/nope/eval-sets", None),  # an unknown app: 404
    ("DELETE", "/dev/apps/weather_bot/metrics-info", None),  # 405
    ("GET", "/dev/apps/weather_bot/eval-sets/s1/no-such-route", None),  # claimed, then served by nothing: 404
    ("GET", "/dev/apps/weather_bot/metrics-info", None),
    ("GET", "/dev/apps/weather_bot/builder", None),  # a Python app: "" (google-adk's answer)
    ("POST", "/dev/apps/weather_bot/builder/cancel", None),
    ("POST", "/jobs", {"function": 3}),  # 422
    ("GET", "/list-apps", None),
    ("GET", "/dev/apps/weather_bot/build_graph", None),  # _dev, lazy, between two other lazy routers
    ("GET", "/dev/apps/weather_bot/graph", None),
    ("GET", "/dev/apps/nope/build_graph_image", None),  # an unknown app: 404
    ("GET", "/config/telemetry", None),
    ("GET", "/", None),  # the console's page
    ("GET", "/console/app.js", None),
    ("GET", "/console/api/whoami", None),
    ("GET", "/apps/weather_bot/users/u1/approvals", None),  # the host is not started: 503 either way
]

_PROBE = """
import asyncio, json, logging, re, sys, tempfile
import httpx
from adk_actors.config import HttpSection
from adk_actors.engine import AppCatalog
from adk_actors.http import create_app
from adk_actors.runtime import Host, HostConfig

requests, lazy_modules, first, compare = json.loads(sys.argv[1])
logged = []
handler = logging.Handler()
handler.emit = lambda record: logged.append(record.getMessage() + " " + repr(record.exc_info and record.exc_info[1]))
logging.getLogger().addHandler(handler)


def app():
    return create_app(Host(HostConfig(apps={})),
                      AppCatalog({"weather_bot": "examples.weather_bot.agent:root_agent"}, None),
                      HttpSection(), evals_dir=tempfile.mkdtemp())


async def answers(served, schema_first):
    # A failed request is answered, then its error raised to the server (which logs it):
    # the answer is what a client gets.
    transport = httpx.ASGITransport(app=served, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        before = None
        if schema_first:
            before = sorted((await client.get("/openapi.json")).json()["paths"])
        listed = (await client.get("/list-apps")).json()
        imported = sorted(m for m in lazy_modules if sys.modules.get(m) is not None)
        if first:  # two first requests at once: both wait for one import
            both = await asyncio.gather(*(client.request(m, p, json=b) for m, p, b in first))
            firsts = [[r.status_code, r.text] for r in both]
        else:
            firsts = []
        said = []
        for method, path, body in requests:
            reply = await client.request(method, path, json=body)
            said.append([reply.status_code, re.sub(r'"creation_timestamp":[0-9.]+', '"creation_timestamp":0', reply.text)])
        after = sorted((await client.get("/openapi.json")).json()["paths"]) if compare else None
        return {"listed": listed, "imported": imported, "firsts": firsts, "said": said, "schema": after,
                "schema_first": before}


lazily = asyncio.run(answers(app(), False))
# The schema loads every lazy router before any request.
eagerly = asyncio.run(answers(app(), True)) if compare else None
print(json.dumps({"lazily": lazily, "eagerly": eagerly, "logged": logged}))
"""


def _probe(tmp_path: Path, requests: list[tuple[str, str, Any]], first: list[tuple[str, str, Any]] | None = None,
           unimportable: str | None = None) -> dict[str, Any]:
    """The probe's answers: ``lazily`` (a server's), ``eagerly`` (a server whose schema
    was asked first, so that it imported every lazy router first; not when a module is
    made ``unimportable``), and the log lines of both."""
    env = {**os.environ}
    if unimportable is not None:
        (tmp_path / "sitecustomize.py").write_text(f"import sys\nsys.modules[{unimportable!r}] = None\n")
        env["PYTHONPATH"] = str(tmp_path)
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps([requests, LAZY_MODULES, first or [], unimportable is None])],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_lazy_routes_are_imported_on_first_use_and_answer_as_if_imported_at_the_start(tmp_path: Path) -> None:
    first = [("GET", "/dev/apps/weather_bot/eval_sets", None), ("GET", "/dev/apps/weather_bot/metrics-info", None)]
    result = _probe(tmp_path, REQUESTS, first)
    lazily, eagerly = result["lazily"], result["eagerly"]
    assert lazily["listed"] == ["weather_bot"]
    assert lazily["imported"] == []  # /list-apps answered: no eval kit, builder, trace, console or jobs module
    assert eagerly["imported"] == sorted(LAZY_MODULES)  # the schema asked first: all imported
    assert [status for status, _ in lazily["firsts"]] == [200, 200]
    assert json.loads(lazily["firsts"][0][1]) == []
    assert "metricsInfo" in json.loads(lazily["firsts"][1][1])
    # Every answer is the one a server that had imported them all at its start gives.
    assert lazily["said"] == eagerly["said"]
    statuses = [status for status, _ in lazily["said"]]
    assert statuses == [200, 200, 422, 200, 200, 200, 404, 404, 405, 404, 200, 200, 400, 422, 200, 200,
                        200, 404, 200, 200, 200, 200, 503]
    assert json.loads(lazily["said"][3][1]) == {"evalSetIds": ["s1"]}
    assert json.loads(lazily["said"][4][1])["name"] == "first"
    assert "unknown app 'nope'" in lazily["said"][7][1]
    assert lazily["said"][11][1] == ""
    assert json.loads(lazily["said"][15][1])["root_agent"]["name"] == "weather_bot"
    assert json.loads(lazily["said"][16][1])["dotSrc"].startswith("digraph")
    assert json.loads(lazily["said"][18][1]) == {"telemetry": False}
    assert lazily["said"][19][1].startswith("<!doctype html>")
    assert json.loads(lazily["said"][21][1]) == {"principal": "*", "operator": True}
    # The published schema is the same, and names the lazy routes.
    assert lazily["schema"] == eagerly["schema"] == eagerly["schema_first"]
    assert {"/dev/apps/{app}/eval-sets/{eval_set_id}/run", "/dev/apps/{app}/builder/save", "/jobs/{job_id}",
            "/dev/apps/{app}/debug/trace/{event_id}", "/dev/apps/{app}/build_graph", "/config/telemetry", "/run",
            "/list-apps"} <= set(lazily["schema"])


def test_a_lazy_module_that_fails_to_import_fails_its_requests_clearly_and_nothing_else(tmp_path: Path) -> None:
    requests = [("GET", "/dev/apps/weather_bot/eval-sets", None), ("GET", "/dev/apps/weather_bot/eval-sets", None),
                ("GET", "/dev/apps/weather_bot/builder", None), ("GET", "/list-apps", None)]
    result = _probe(tmp_path, requests, unimportable="adk_actors.evals")
    said = result["lazily"]["said"]
    detail = {"detail": "the request failed inside the host's HTTP server; it was logged"}
    # Each request tries the import again, and each fails the same typed 500, logged
    # with the error; the other routes serve.
    assert [said[0][0], json.loads(said[0][1])] == [500, detail]
    assert [said[1][0], json.loads(said[1][1])] == [500, detail]
    assert said[2] == [200, ""] and said[3][0] == 200
    failures = [line for line in result["logged"] if "/dev/apps/weather_bot/eval-sets failed" in line]
    assert len(failures) >= 2 and all("adk_actors.evals" in line for line in failures), result["logged"]


_EXTRA_PROBE = """
import asyncio, json, sys
import httpx
from fastapi import FastAPI
from adk_actors.http._lazy import LazyRouter

api = FastAPI()
api.router.routes.append(LazyRouter(api, "lazy_router_needs_mcp", ("/needs-mcp",), what="The ping routes"))


async def ask():
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=api), base_url="http://127.0.0.1") as client:
        return [(await client.get(path)) for path in ("/needs-mcp/ping", "/needs-mcp/ping", "/elsewhere")]

print(json.dumps([[r.status_code, r.json()] for r in asyncio.run(ask())]))
"""


@pytest.mark.parametrize("missing", [False, True])
def test_a_lazy_router_whose_extra_is_missing_answers_501_with_the_pip_command(tmp_path: Path, missing: bool) -> None:
    paths = [str(ROOT / "tests")]
    if missing:
        (tmp_path / "sitecustomize.py").write_text("import sys\nsys.modules['mcp'] = None\n")
        paths.insert(0, str(tmp_path))
    done = subprocess.run([sys.executable, "-c", _EXTRA_PROBE], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)}, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    answers = json.loads(done.stdout.strip().splitlines()[-1])
    assert answers[2] == [404, {"detail": "Not Found"}]  # not claimed: routed as before
    if not missing:
        assert answers[:2] == [[200, {"mcp": "mcp"}]] * 2
        return
    hint = "The ping routes is not served by this host: the mcp extra (mcp) is not installed: pip install 'adk-actors[mcp]'"
    assert answers[:2] == [[501, {"detail": hint}]] * 2
    assert "pip install 'adk-actors[mcp]'" in done.stderr  # logged for the operator


def test_each_lazy_routers_prefixes_claim_all_its_routes_and_no_other_routers() -> None:
    """``_app.LAZY_ROUTERS`` names the paths of routers it does not import: each route
    of each router must be claimed by its stand-in (else it would be a 404 until some
    other request loaded it), and no route of the routers imported at the start is
    claimed (it would import a module for nothing)."""
    from fastapi import FastAPI
    from starlette.routing import Route, WebSocketRoute

    from adk_actors.http import _app
    from adk_actors.http._lazy import LazyRouter

    def sample(path: str) -> str:
        return "/".join("x1" if part.startswith("{") else part for part in path.split("/"))

    api = FastAPI()
    stand_ins = {name: LazyRouter(api, module, prefixes, what=name)
                 for name, (module, prefixes, _) in _app.LAZY_ROUTERS.items()}
    for name, stand_in in stand_ins.items():
        routes = importlib.import_module(stand_in.module).router.routes
        assert routes
        for route in routes:
            assert isinstance(route, Route), route  # (no lazy router serves a WebSocket)
            assert stand_in.claims(sample(route.path)), (name, route.path)
    for router in _app.ROUTERS:
        if isinstance(router, str):
            continue
        for route in router.routes:
            assert isinstance(route, (Route, WebSocketRoute)), route
            claimed = [name for name, stand_in in stand_ins.items() if stand_in.claims(sample(route.path))]
            assert claimed == [], (route.path, claimed)
    assert not stand_ins["evals"].claims("/dev/apps/x1/evaluate") and not stand_ins["jobs"].claims("/jobsx")
