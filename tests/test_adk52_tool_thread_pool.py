"""google-adk 2.13's ``RunConfig.tool_thread_pool_config`` (``agents.run_config.ToolThreadPoolConfig``),
side by side with google-adk itself: the same program (imports rewritten, see
google_adk_harness) on both, against one Gemini stand-in, and what each side returns
compared.

* A model turn calls a synchronous tool 6 times at once. Each call counts the calls
  running with it (under a lock) and waits, at most ``HOLD`` seconds, for all 6 to be
  running: with ``max_workers=2`` at most 2 ever run together, on 2 pool threads, on
  both sides; ours are daemon threads (a stopped run's process can still exit).
* Without the config google-adk calls a synchronous tool on the event loop itself, so
  the 6 calls run one after another; ours run each on a daemon thread of its own, all
  6 at once (a deliberate difference, kept: see the report of issue 52).
* A synchronous ``require_confirmation`` predicate runs on the pool with the config,
  on the loop's thread without it, on both sides.
* A run cancelled while its first call holds the only worker: its second call, not
  started, never runs (the pool's next call is the next run's).
* The config's values: the default, the refusals (0, an unknown key) as google-adk's.
* On a host: the config reaches the run worker, whose calls are bounded by it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google_adk_harness import calls, gemini, rewritten, run_program, stand_in  # noqa: F401

from adk_actors import RunConfig
from adk_actors.agents.run_config import ToolThreadPoolConfig
from adk_actors.runtime import Host, HostConfig
from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"),
              pytest.mark.timeout(120)]


def both(source: str, server: StubServer, answers: list[Any], *args: Any) -> tuple[Any, Any]:
    """What ``main(*args)`` of ``source`` returns on google-adk, then here (imports
    rewritten), each side given the same script of model answers (all of which it must use)."""
    _, theirs = run_program(source, list(answers), server, *args)
    assert len(server.responses) == 0, "google-adk must use the whole script"
    ours_source = rewritten(source)
    assert "google" not in ours_source
    _, ours = run_program(ours_source, list(answers), server, *args)
    assert len(server.responses) == 0
    return theirs, ours


# -- six calls at once ----------------------------------------------------------------------

SIX_CALLS = '''
import threading

from google.adk.agents import Agent
from google.adk.agents.run_config import RunConfig, ToolThreadPoolConfig
from google.adk.runners import InMemoryRunner
from google.genai import types

CALLS = 6
HOLD = 0.5  # seconds a call waits, at most, for all CALLS to be running with it
lock = threading.Condition()
seen = {"running": 0, "peak": 0, "threads": set(), "daemon": set(), "on_main": 0}


def fetch(part: int) -> dict:
    """Fetches one part."""
    me = threading.current_thread()
    with lock:
        seen["running"] += 1
        seen["peak"] = max(seen["peak"], seen["running"])
        seen["threads"].add(threading.get_ident())
        seen["daemon"].add(me.daemon)
        seen["on_main"] += me is threading.main_thread()
        lock.notify_all()
        lock.wait_for(lambda: seen["running"] >= CALLS, timeout=HOLD)
        seen["running"] -= 1
    return {"part": part}


root_agent = Agent(name="fetcher", model="gemini-2.5-flash", instruction="Fetch.", tools=[fetch])


async def main(max_workers):
    config = RunConfig() if max_workers is None else RunConfig(
        tool_thread_pool_config=ToolThreadPoolConfig(max_workers=max_workers))
    runner = InMemoryRunner(agent=root_agent, app_name="fetcher")
    session = await runner.session_service.create_session(app_name="fetcher", user_id="ann")
    answered, texts = [], []
    async for event in runner.run_async(user_id="ann", session_id=session.id, run_config=config,
                                        new_message=types.Content(role="user", parts=[types.Part(text="all")])):
        answered += [r.response["part"] for r in event.get_function_responses()]
        texts += [p.text for p in (event.content.parts if event.content else []) if p.text]
    return {"peak": seen["peak"], "threads": len(seen["threads"]), "on_main": seen["on_main"],
            "answered": sorted(answered), "texts": texts, "daemon": sorted(seen["daemon"])}
'''


def six_calls() -> list[Any]:
    return [calls(*(("fetch", {"part": n}) for n in range(6))), gemini_response("Fetched all.")]


def test_max_workers_bounds_the_sync_calls_running_at_once_as_google_adks_does(
        gemini: StubServer) -> None:  # noqa: F811
    theirs, ours = both(SIX_CALLS, gemini, six_calls(), 2)
    assert theirs["peak"] == 2 and theirs["threads"] == 2 and theirs["on_main"] == 0
    assert theirs["answered"] == list(range(6)) and theirs["texts"] == ["Fetched all."]
    assert {k: v for k, v in ours.items() if k != "daemon"} == {k: v for k, v in theirs.items() if k != "daemon"}
    assert ours["daemon"] == [True]  # ours never keeps a process alive; google-adk's pool threads are not daemon


def test_one_worker_runs_the_calls_one_at_a_time(gemini: StubServer) -> None:  # noqa: F811
    theirs, ours = both(SIX_CALLS, gemini, six_calls(), 1)
    assert theirs["peak"] == 1 and theirs["threads"] == 1 and theirs["on_main"] == 0
    assert ours == {**theirs, "daemon": [True]}


def test_without_the_config_google_adk_runs_them_on_the_loop_and_ours_all_at_once(
        gemini: StubServer) -> None:  # noqa: F811
    theirs, ours = both(SIX_CALLS, gemini, six_calls(), None)
    # google-adk: a synchronous tool runs on the event loop's own thread, one call at a time
    assert (theirs["peak"], theirs["threads"], theirs["on_main"]) == (1, 1, 6)
    # ours: each call on a daemon thread of its own, all 6 at once (kept: the loop of a
    # run worker serves every turn of its process and must not block on a tool)
    assert (ours["peak"], ours["threads"], ours["on_main"], ours["daemon"]) == (6, 6, 0, [True])
    assert ours["answered"] == theirs["answered"] and ours["texts"] == theirs["texts"]


# -- require_confirmation ---------------------------------------------------------------------

PREDICATE = '''
import threading

from google.adk.agents import Agent
from google.adk.agents.run_config import RunConfig, ToolThreadPoolConfig
from google.adk.runners import InMemoryRunner
from google.adk.tools import FunctionTool
from google.genai import types

asked = []


def risky(path: str) -> bool:
    asked.append((path, threading.current_thread() is threading.main_thread()))
    return False


def delete(path: str) -> dict:
    """Deletes a file."""
    return {"deleted": path}


root_agent = Agent(name="cleaner", model="gemini-2.5-flash", instruction="Clean.",
                   tools=[FunctionTool(delete, require_confirmation=risky)])


async def main(max_workers):
    config = RunConfig() if max_workers is None else RunConfig(
        tool_thread_pool_config=ToolThreadPoolConfig(max_workers=max_workers))
    runner = InMemoryRunner(agent=root_agent, app_name="cleaner")
    session = await runner.session_service.create_session(app_name="cleaner", user_id="ann")
    answers = []
    async for event in runner.run_async(user_id="ann", session_id=session.id, run_config=config,
                                        new_message=types.Content(role="user", parts=[types.Part(text="tmp")])):
        answers += [r.response for r in event.get_function_responses()]
    return asked, answers
'''


@pytest.mark.parametrize("max_workers", [None, 3])
def test_a_sync_require_confirmation_predicate_runs_where_google_adks_does(
        gemini: StubServer, max_workers: int | None) -> None:  # noqa: F811
    answers = [calls(("delete", {"path": "/tmp/x"})), gemini_response("Deleted.")]
    theirs, ours = both(PREDICATE, gemini, answers, max_workers)
    assert theirs == ([("/tmp/x", max_workers is None)] * 2, [{"deleted": "/tmp/x"}])  # asked twice
    # the second ask (the confirmation gate, before the tool runs) where google-adk's is
    assert ours[0][1:] == theirs[0][1:] and ours[1] == theirs[1]
    if max_workers is None:
        assert ours == theirs


def test_with_the_config_every_ask_of_the_predicate_runs_on_the_pool(gemini: StubServer) -> None:  # noqa: F811
    answers = [calls(("delete", {"path": "/tmp/x"})), gemini_response("Deleted.")]
    theirs, ours = both(PREDICATE, gemini, answers, 3)
    assert ours == theirs


# -- a cancelled run ---------------------------------------------------------------------------

CANCELLED = '''
import asyncio
import threading

from google.adk.agents import Agent
from google.adk.agents.run_config import RunConfig, ToolThreadPoolConfig
from google.adk.runners import InMemoryRunner
from google.genai import types

started = threading.Event()
release = threading.Event()
ran = []


def step(name: str) -> dict:
    """Runs one step."""
    ran.append(name)
    if name == "first":
        started.set()
        release.wait(30)
    return {"done": name}


root_agent = Agent(name="stepper", model="gemini-2.5-flash", instruction="Step.", tools=[step])


async def main():
    config = RunConfig(tool_thread_pool_config=ToolThreadPoolConfig(max_workers=1))
    runner = InMemoryRunner(agent=root_agent, app_name="stepper")
    session = await runner.session_service.create_session(app_name="stepper", user_id="ann")

    async def consume(text):
        async for _ in runner.run_async(user_id="ann", session_id=session.id, run_config=config,
                                        new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            pass

    task = asyncio.ensure_future(consume("two steps"))
    assert await asyncio.to_thread(started.wait, 30)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    release.set()
    await consume("one more")  # the same pool's only worker: it takes calls in order
    return ran
'''


def test_a_cancelled_run_drops_the_call_no_worker_had_started(gemini: StubServer) -> None:  # noqa: F811
    answers = [calls(("step", {"name": "first"}), ("step", {"name": "second"})),
               calls(("step", {"name": "after"})), gemini_response("Done.")]
    theirs, ours = both(CANCELLED, gemini, answers)
    assert theirs == ["first", "after"]
    assert ours == theirs


# -- the config's values ----------------------------------------------------------------------

VALUES = '''
from pydantic import ValidationError

from google.adk.agents.run_config import RunConfig, ToolThreadPoolConfig


def refusal(make):
    try:
        made = make()
    except ValidationError as exc:
        return sorted(e["type"] for e in exc.errors())
    return ("accepted", made.model_dump())


async def main():
    return {
        "default": ToolThreadPoolConfig().max_workers,
        "unset": RunConfig().tool_thread_pool_config,
        "from a dict": RunConfig(tool_thread_pool_config={"max_workers": 3}).tool_thread_pool_config.max_workers,
        "a numeric string": ToolThreadPoolConfig(max_workers="5").max_workers,
        "zero": refusal(lambda: ToolThreadPoolConfig(max_workers=0)),
        "negative": refusal(lambda: ToolThreadPoolConfig(max_workers=-2)),
        "a fraction": refusal(lambda: ToolThreadPoolConfig(max_workers=2.5)),
        "extra key": refusal(lambda: ToolThreadPoolConfig(max_workers=2, queue_size=8)),
        "zero in RunConfig": refusal(lambda: RunConfig(tool_thread_pool_config={"max_workers": 0})),
        "extra key in RunConfig": refusal(lambda: RunConfig(tool_thread_pool_config={"workers": 2})),
    }
'''


def test_the_configs_values_and_refusals_are_google_adks(gemini: StubServer) -> None:  # noqa: F811
    theirs, ours = both(VALUES, gemini, [])
    assert theirs["default"] == 4 and theirs["unset"] is None
    assert theirs["zero"] == ["greater_than_equal"] and theirs["extra key"] == ["extra_forbidden"]
    assert theirs["extra key in RunConfig"] == ["extra_forbidden"]
    assert ours == theirs


def test_the_config_survives_the_json_and_the_pickle_a_run_request_travels_in() -> None:
    import pickle

    config = RunConfig(tool_thread_pool_config=ToolThreadPoolConfig(max_workers=3))
    assert pickle.loads(pickle.dumps(config)) == config
    assert '"toolThreadPoolConfig":{"maxWorkers":3}' in config.to_json()
    assert RunConfig.model_validate_json(config.to_json()) == config


# -- on a host --------------------------------------------------------------------------------


@pytest.fixture
def pooled_host(actor_system: Any, tmp_path: Path) -> Iterator[Host]:
    config = HostConfig(apps={"pooled": "adk52_pool_agents:pooled_agent"}, data_dir=str(tmp_path / "data"))
    with Host(config, system=actor_system) as running:
        yield running


def test_on_a_host_the_config_reaches_the_run_worker_and_bounds_its_calls(pooled_host: Host) -> None:
    runner = pooled_host.runner("pooled")
    runner.create_session("ann", "s1")
    runner.create_session("ann", "s2")
    config = RunConfig(tool_thread_pool_config=ToolThreadPoolConfig(max_workers=2))
    bounded = [e for e in runner.run("ann", "s1", "go", run_config=config) if e.get_function_responses()]
    seen = [r.response for e in bounded for r in e.get_function_responses()]
    assert len(seen) == 4
    assert {r["max_workers"] for r in seen} == {2}  # the worker's run read the caller's config
    assert max(r["peak"] for r in seen) == 2 and {r["daemon"] for r in seen} == {True}
    assert len({r["thread"] for r in seen}) == 2
    free = [e for e in runner.run("ann", "s2", "go") if e.get_function_responses()]
    unbounded = [r.response for e in free for r in e.get_function_responses()]
    assert {r["max_workers"] for r in unbounded} == {None} and max(r["peak"] for r in unbounded) == 4



def test_the_run_routes_take_a_run_config_in_the_body_as_google_adks_do_not_at_all() -> None:
    """google-adk's ``/run`` and ``/run_sse`` body has no ``runConfig``: a client's is
    ignored (not refused), as ours ignores it."""
    from google.adk.cli.api_server import RunAgentRequest as Theirs

    from adk_actors.http._runs import RunAgentRequest as Ours

    body = {"appName": "a", "userId": "u", "sessionId": "s", "newMessage": {"role": "user", "parts": [{"text": "hi"}]},
            "runConfig": {"toolThreadPoolConfig": {"maxWorkers": 2}}}
    theirs, ours = Theirs.model_validate(body), Ours.model_validate(body)
    assert "run_config" not in type(theirs).model_fields and "run_config" not in type(ours).model_fields
    assert theirs.session_id == ours.session_id == "s"
