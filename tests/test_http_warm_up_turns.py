"""A starting HTTP server is polled with ``/list-apps`` (adk-web, bench/first_hour.py)
while the process ``serve`` forked ahead warms its routes up (``http._app.warm_up``:
30-60 ms of building FastAPI's routes in its event loop). That first ``/list-apps`` is
answered between two steps of the warm-up, not after all of it, and answers what it
answered before (tests/test_serve_first_run.py: the warm-up changes no answer and
imports no lazy router).

Order is observed, not time: a route that matches nothing, put last in the app's
routes, notes each time routing reaches it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from fastapi import FastAPI
from starlette.routing import BaseRoute, Match, NoMatchFound
from starlette.types import Message, Receive, Scope, Send

from adk_actors.config import HttpSection
from adk_actors.engine import AppCatalog
from adk_actors.http import create_app
from adk_actors.http._app import WARM_UP_PATH, warm_up
from adk_actors.http._gate import HostGate
from adk_actors.runtime import Host, HostConfig
from examples.weather_bot.agent import root_agent

APPS = {"weather_bot": "examples.weather_bot.agent:root_agent"}
DESCRIPTION = root_agent.description


class _LastRoute(BaseRoute):
    """Matches nothing; notes in ``seen`` each path routed as far as it."""

    def __init__(self, seen: list[Any]) -> None:
        self.seen = seen

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        self.seen.append(("routed past every route", scope["path"]))
        return Match.NONE, {}

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        raise NoMatchFound(name, path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        raise AssertionError("never matched")


async def _get(app: Any, path: str, query: bytes = b"") -> tuple[int, Any]:
    """One GET through ``app`` (its status and JSON body), called as a server calls it."""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
             "path": path, "raw_path": path.encode(), "root_path": "", "query_string": query,
             "headers": [(b"host", b"127.0.0.1")], "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000)}
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return int(sent[0]["status"]), json.loads(b"".join(m.get("body", b"") for m in sent[1:]))


def _served() -> tuple[Any, FastAPI]:
    """A host's app, as the process forked ahead serves it (its gate closed), and the
    FastAPI app inside it."""
    app = create_app(Host(HostConfig(apps={})), AppCatalog(APPS, None), HttpSection())
    api = app
    while not isinstance(api, FastAPI):
        api = api.app
    return HostGate(app, opened=False), api


def test_a_list_apps_that_comes_during_the_warm_up_is_answered_before_the_warm_up_has_built_every_route() -> None:
    async def scenario() -> list[Any]:
        served, api = _served()
        seen: list[Any] = []
        api.router.routes.append(_LastRoute(seen))

        async def poll() -> None:
            seen.append(("answered", *await _get(served, "/list-apps")))

        await asyncio.gather(warm_up(served), poll())  # the warm-up starts first
        seen.append(("again", *await _get(served, "/list-apps")))
        seen.append(("detailed", *await _get(served, "/list-apps", b"detailed=true")))
        return seen

    seen = asyncio.run(scenario())
    assert seen[0] == ("answered", 200, ["weather_bot"])  # before the warm-up went through all the routes
    assert ("routed past every route", WARM_UP_PATH) in seen[1:3]  # the warm-up did go through them, after
    assert seen[-2] == ("again", 200, ["weather_bot"])
    # The summaries load each app's agent (on a worker thread), as before.
    assert seen[-1] == ("detailed", 200, {"apps": [{"name": "weather_bot", "rootAgentName": "weather_bot",
                                                    "description": DESCRIPTION, "language": "python",
                                                    "isComputerUse": False, "agents": None}]})
