"""What ``serve`` does ahead so that its first turn comes sooner (issue 54), checked for
what a user could notice: the HTTP server's warm-up (``http._app.warm_up``, run by the
process ``serve`` forks ahead while the tree starts) answers nothing, logs nothing,
imports no lazy router and leaves every answer as it was; and ``serve``, which
imports the kit with the garbage collector off, gives its caller the collector back
on whatever way it ends.

The warm-up cases run in a process of their own (what is imported is looked at).
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

from adk_actors.cli import main

ROOT = Path(__file__).resolve().parents[1]

_PROBE = """
import asyncio, json, logging, sys, tempfile
import httpx
from adk_actors.config import HttpSection
from adk_actors.engine import AppCatalog
from adk_actors.http import create_app
from adk_actors.http._app import LAZY_ROUTERS, WARM_UP_PATH, warm_up
from adk_actors.http._gate import HostGate
from adk_actors.runtime import Host, HostConfig

logged = []
handler = logging.Handler()
handler.emit = lambda record: logged.append(record.getMessage())
logging.getLogger().addHandler(handler)
REQUESTS = [("GET", "/list-apps"), ("GET", "/dev/apps/weather_bot/build_graph"), ("GET", WARM_UP_PATH),
            ("GET", "/dev/apps/weather_bot/eval_sets"), ("GET", "/version"), ("GET", "/nowhere")]


def app():
    return create_app(Host(HostConfig(apps={})), AppCatalog({"weather_bot": "examples.weather_bot.agent:root_agent"}, None),
                      HttpSection(), evals_dir=tempfile.mkdtemp())


async def answers(served, warm):
    if warm:  # as the server forked ahead does it: through its gate, still closed
        await warm_up(HostGate(served, opened=False))
    lazy = sorted(module for module, _, _ in LAZY_ROUTERS.values() if sys.modules.get(module) is not None)
    transport = httpx.ASGITransport(app=served)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        said = [[(r := await client.request(m, p)).status_code, r.text] for m, p in REQUESTS]
    return {"lazy_after_warm_up": lazy, "said": said}


warmed = asyncio.run(answers(app(), True))
print(json.dumps({"warmed": warmed, "cold": asyncio.run(answers(app(), False)), "logged": logged}))
"""


def test_the_warm_up_answers_nothing_imports_no_lazy_router_and_changes_no_answer() -> None:
    done = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    warmed, cold = result["warmed"], result["cold"]
    assert warmed["lazy_after_warm_up"] == []  # no lazy router claims its path
    assert warmed["said"] == cold["said"]  # a warmed server answers as one that was not
    assert [status for status, _ in warmed["said"]] == [200, 200, 404, 200, 200, 404]
    assert result["logged"] == []


def test_serve_gives_the_collector_back_when_it_fails_to_start(tmp_path: Path) -> None:
    """``serve`` turns the collector off while it imports; a start that fails (here: a
    config naming no app, exit 2) leaves it on for the caller, as it found it."""
    config = tmp_path / "host.toml"
    config.write_text(f'[host]\ndata_dir = "{tmp_path / "data"}"\n')
    assert gc.isenabled()
    assert main(["serve", "--config", str(config)]) == 2
    assert gc.isenabled()


def test_the_tree_code_imports_no_web_stack_until_a_credential_answer_needs_it() -> None:
    """``serve`` loads the code of every actor before its actor system starts, on the
    way to the first turn: the auth types (FastAPI's OpenAPI models and the OpenAPI
    toolset, ~0.25 s of import) stay out of it until a run reads a credential answer,
    and then they load."""
    probe = ("import sys\n"
             "from adk_actors.runtime import Host\n"
             "Host.load_tree_code()\n"
             "before = sorted(m for m in ('fastapi', 'adk_actors.auth', 'adk_actors.tools.openapi_tool') "
             "if m in sys.modules)\n"
             "from adk_actors.engine import _credential_request\n"
             "_credential_request._requests([], set())\n"
             "print(before, 'fastapi' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[-2] == "[] True"
