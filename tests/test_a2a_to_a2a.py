"""google-adk's ``to_a2a`` and ``AgentCardBuilder`` at google-adk's paths (issue 52):
the documented ``agent.py`` (``a2a_app = to_a2a(root_agent, port=PORT)``, served by
``uvicorn agent:a2a_app``) side by side with google-adk's own, the same program with
its imports rewritten; both agents' model is one Gemini stand-in named by environment
variables. A real a2a-sdk client reads each card and sends each a message; what a
client reads of them is compared: the card's name, description, skills, streaming and
URL; the task's state, its artifact's text and the agent's messages."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import ROOT, answers
from google_adk_harness import rewritten

from adk_actors.testing import StubResponse, StubServer, gemini_response
from supervision.lowlevel import free_port
from supervision.testing import wait_until

pytest.importorskip("a2a")
pytest.importorskip("google.adk.a2a")

from a2a.client import ClientConfig, create_client
from a2a.types import Message, Part, Role, SendMessageRequest, StreamResponse, TaskState
from google.protobuf.json_format import MessageToDict

AGENT_PY = '''
import os

from google.adk.agents import LlmAgent
from google.adk.a2a.utils.agent_to_a2a import to_a2a


def get_weather(city: str) -> str:
    """The weather of a city."""
    return f"Sunny in {city}."


helper = LlmAgent(name="helper", model="gemini-2.5-flash", description="Says what to wear.")
root_agent = LlmAgent(name="forecaster", model="gemini-2.5-flash", description="Forecasts the weather.",
                      instruction="You forecast the weather.", tools=[get_weather], sub_agents=[helper])
a2a_app = to_a2a(root_agent, port=int(os.environ["PORT"]))
'''

ANSWER = "Sunny in Paris all week."


@pytest.fixture
def model() -> Iterator[StubServer]:
    """The Gemini stand-in: every request answered with ANSWER (both servers ask it)."""
    with StubServer(respond=lambda _request: gemini_response(ANSWER)) as stub:
        yield stub


@contextlib.contextmanager
def serve(folder: Path, source: str, model: StubServer) -> Iterator[str]:
    """``uvicorn agent:a2a_app`` in ``folder`` (``agent.py`` being ``source``) on a free
    loopback port, until the caller is done; its base URL (the card's host is
    ``localhost``, to_a2a's default)."""
    folder.mkdir()
    (folder / "agent.py").write_text(source)
    port = free_port()
    env = {**os.environ, "PORT": str(port), "GOOGLE_GEMINI_BASE_URL": model.url,
           "GOOGLE_API_KEY": "test-key-not-a-secret", "ADK_DISABLE_TELEMETRY": "1",
           "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT)])}
    for name in ("GEMINI_API_KEY", "GEMINI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI"):
        env.pop(name, None)
    log = (folder / "server.log").open("w")
    server = subprocess.Popen([sys.executable, "-m", "uvicorn", "agent:a2a_app", "--host", "127.0.0.1",
                               "--port", str(port)], cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: answers(f"{url}/.well-known/agent-card.json") or server.poll() is not None, timeout=60)
        assert server.poll() is None, (folder / "server.log").read_text()
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):  # it may have ended on its own (a bad agent.py)
            os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=30)
        log.close()


@pytest.fixture
def servers(tmp_path: Path, model: StubServer) -> Iterator[dict[str, str]]:
    """Ours and google-adk's, serving the same agent.py."""
    with serve(tmp_path / "ours", rewritten(AGENT_PY), model) as ours, \
            serve(tmp_path / "theirs", AGENT_PY, model) as theirs:
        yield {"ours": ours, "theirs": theirs}


def card_seen(url: str) -> dict[str, Any]:
    """What a client reads of the card at ``url`` (its own port taken out of its URL)."""
    card = httpx.get(f"{url}/.well-known/agent-card.json", timeout=30).json()
    port = url.rsplit(":", 1)[1]
    return {"name": card["name"], "description": card["description"],
            "skills": [(s["id"], s["name"], s.get("description"), s.get("tags")) for s in card["skills"]],
            "streaming": card["capabilities"].get("streaming"),
            "urls": [i["url"].replace(port, "PORT") for i in card["supportedInterfaces"]],
            "bindings": [i["protocolBinding"] for i in card["supportedInterfaces"]],
            "modes": (card.get("defaultInputModes"), card.get("defaultOutputModes"))}


async def send(url: str, text: str, *, streaming: bool) -> list[StreamResponse]:
    request = SendMessageRequest(message=Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER,
                                                 parts=[Part(text=text)]))
    async with httpx.AsyncClient(timeout=60) as http:
        client = await create_client(url, ClientConfig(streaming=streaming, httpx_client=http))
        return [r async for r in client.send_message(request)]


def answer_seen(got: list[StreamResponse]) -> dict[str, Any]:
    """What a client reads of a task's answer: its last state, its artifacts' text,
    and the text of the agent's messages in the stream's status updates."""
    tasks = [r.task for r in got if r.HasField("task")]
    updates = [r.status_update for r in got if r.HasField("status_update")]
    artifacts = [r.artifact_update.artifact for r in got if r.HasField("artifact_update")]
    final = tasks[-1] if tasks else None
    state = updates[-1].status.state if updates else final.status.state if final else None
    if final is not None and final.artifacts:
        artifacts = list(final.artifacts)
    return {"state": TaskState.Name(state) if state is not None else None,
            "artifacts": ["".join(p.text for p in a.parts) for a in artifacts],
            "messages": ["".join(p.text for p in u.status.message.parts) for u in updates
                         if u.status.HasField("message")],
            "said": "".join(p.text for p in final.status.message.parts) if final is not None else ""}


def test_to_a2a_serves_the_documented_agent_py_as_google_adks_does(servers: dict[str, str],
                                                                  model: StubServer) -> None:
    cards = {side: card_seen(url) for side, url in servers.items()}
    assert cards["ours"] == cards["theirs"]
    assert cards["ours"]["name"] == "forecaster" and cards["ours"]["urls"] == ["http://localhost:PORT"]
    assert [s[0] for s in cards["ours"]["skills"]] == ["forecaster", "forecaster-get_weather", "helper_helper"]

    for streaming in (False, True):
        seen = {side: answer_seen(asyncio.run(send(url, "What's the weather in Paris?", streaming=streaming)))
                for side, url in servers.items()}
        assert seen["ours"]["state"] == seen["theirs"]["state"] == "TASK_STATE_COMPLETED", seen
        assert seen["ours"]["artifacts"] == seen["theirs"]["artifacts"] == [ANSWER], seen
        if streaming:
            assert seen["ours"]["messages"] == seen["theirs"]["messages"], seen
    asked = [str(r.body.get("contents")) for r in model.requests]
    assert len(asked) == 4 and all("What's the weather in Paris?" in a for a in asked)


def test_a_failing_model_fails_the_task_on_both(tmp_path: Path) -> None:
    """The model answers 500 to all: each side's task ends failed, its status saying why."""
    with StubServer(respond=lambda _request: StubResponse(status=500, json={"error": {
            "code": 500, "message": "the stand-in is down", "status": "INTERNAL"}})) as broken:
        with serve(tmp_path / "ours", rewritten(AGENT_PY), broken) as ours, \
                serve(tmp_path / "theirs", AGENT_PY, broken) as theirs:
            seen = {side: answer_seen(asyncio.run(send(url, "Weather?", streaming=False)))
                    for side, url in {"ours": ours, "theirs": theirs}.items()}
    assert seen["ours"]["state"] == seen["theirs"]["state"] == "TASK_STATE_FAILED", seen
    assert seen["ours"]["artifacts"] == seen["theirs"]["artifacts"] == [], seen
    assert "500" in seen["ours"]["said"] and "500" in seen["theirs"]["said"], seen


TREE_PY = '''
from google.adk.agents import LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from google.adk.code_executors import BuiltInCodeExecutor
from google.adk.examples import Example
from google.adk.planners import PlanReActPlanner
from google.adk.tools.example_tool import ExampleTool
from google.genai import types


def get_weather(city: str) -> str:
    """The weather of a city."""
    return f"Sunny in {city}."


examples = ExampleTool([Example(input=types.Content(role="user", parts=[types.Part(text="Rain in Oslo?")]),
                                output=[types.Content(role="model", parts=[types.Part(text="No.")])])])
planner = LlmAgent(name="planner", model="gemini-2.5-flash", planner=PlanReActPlanner(),
                   code_executor=BuiltInCodeExecutor(), tools=[get_weather, examples])
steps = SequentialAgent(name="steps", description="Does it in order.", sub_agents=[
    LlmAgent(name="first", model="gemini-2.5-flash", description="Looks it up."),
    ParallelAgent(name="both", sub_agents=[LlmAgent(name="left", model="gemini-2.5-flash"),
                                           LlmAgent(name="right", model="gemini-2.5-flash", description="Right.")]),
    LoopAgent(name="again", max_iterations=3, sub_agents=[LlmAgent(name="loop_body", model="gemini-2.5-flash")])])
root = SequentialAgent(name="root", sub_agents=[planner, steps])
'''


def test_agent_card_builder_builds_google_adks_card() -> None:
    """A tree of every kind of agent (tools, an ExampleTool, a planner, a code executor,
    sequential, parallel and loop agents), with a default skill security: the card our
    AgentCardBuilder builds is google-adk's, field for field."""
    from google.adk.a2a.utils.agent_card_builder import AgentCardBuilder as TheirBuilder

    from adk_actors.a2a.utils.agent_card_builder import AgentCardBuilder

    theirs: dict[str, Any] = {}
    ours: dict[str, Any] = {}
    exec(TREE_PY, theirs)
    exec(rewritten(TREE_PY), ours)
    security = [{"oauth2": ["weather.read"]}]
    cards = [MessageToDict(asyncio.run(builder(agent=tree["root"], rpc_url="http://127.0.0.1:9/a2a/",
                                               default_skill_security=security).build()))
             for builder, tree in ((TheirBuilder, theirs), (AgentCardBuilder, ours))]
    assert cards[1] == cards[0]
    assert "planner_planner-planner" in [s["id"] for s in cards[1]["skills"]]
    with pytest.raises(ValueError, match="default_skill_security"):
        AgentCardBuilder(agent=ours["root"], default_skill_security=[{"oauth2": "read"}])  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        AgentCardBuilder(agent="root")


CUSTOM_SERVER_PY = '''
import os
from contextlib import asynccontextmanager

from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import Part
from google.adk.a2a.executor.a2a_agent_executor import A2aAgentExecutor
from google.adk.a2a.executor.config import A2aAgentExecutorConfig, ExecuteInterceptor
from google.adk.a2a.utils.agent_card_builder import AgentCardBuilder
from google.adk.agents import LlmAgent
from google.adk.runners import InMemoryRunner
from starlette.applications import Starlette

root_agent = LlmAgent(name="forecaster", model="gemini-2.5-flash", description="Forecasts the weather.")


async def before_agent(context):
    context.message.parts.append(Part(text="(asked over A2A)"))
    return context


async def after_event(executor_context, a2a_event, adk_event):
    if adk_event.author != "forecaster":
        return None
    text = "".join(p.text for p in a2a_event.status.message.parts)
    del a2a_event.status.message.parts[:]
    a2a_event.status.message.parts.append(Part(text=f"{text} [checked for {executor_context.app_name}]"))
    return a2a_event


async def after_agent(executor_context, final_event):
    final_event.metadata["served_by"] = executor_context.user_id.split("_")[0]
    return final_event


executor = A2aAgentExecutor(
    runner=lambda: InMemoryRunner(agent=root_agent, app_name="weather"),
    config=A2aAgentExecutorConfig(execute_interceptors=[
        ExecuteInterceptor(before_agent=before_agent, after_event=after_event, after_agent=after_agent)]))


@asynccontextmanager
async def lifespan(app):
    card = await AgentCardBuilder(agent=root_agent, rpc_url=f"http://127.0.0.1:{os.environ['PORT']}/").build()
    handler = DefaultRequestHandler(agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card)
    app.router.routes.extend([*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")])
    yield


a2a_app = Starlette(lifespan=lifespan)
'''


def test_a_custom_server_on_a2a_agent_executor_with_interceptors_answers_as_google_adks(
        tmp_path: Path, model: StubServer) -> None:
    """A custom A2A server (a2a-sdk's handler and routes, our A2aAgentExecutor on a
    runner factory, with before_agent, after_event and after_agent interceptors, and an
    AgentCardBuilder card): what a client reads is google-adk's, streaming or not, the
    interceptors' changes included (the model asked with the added part, the agent's
    message and the artifact changed, the final status's metadata)."""
    with serve(tmp_path / "ours", rewritten(CUSTOM_SERVER_PY), model) as ours, \
            serve(tmp_path / "theirs", CUSTOM_SERVER_PY, model) as theirs:
        urls = {"ours": ours, "theirs": theirs}
        for streaming in (False, True):
            got = {side: asyncio.run(send(url, "Weather in Paris?", streaming=streaming)) for side, url in urls.items()}
            seen = {side: answer_seen(responses) for side, responses in got.items()}
            assert seen["ours"] == seen["theirs"], seen
            assert seen["ours"]["state"] == "TASK_STATE_COMPLETED"
            assert seen["ours"]["artifacts"] == [f"{ANSWER} [checked for weather]"], seen
            last = {side: _final_metadata(responses) for side, responses in got.items()}
            assert last["ours"].get("served_by") == last["theirs"].get("served_by") == "A2A", last
    asked = [str(r.body.get("contents")) for r in model.requests]
    assert len(asked) == 4 and all("(asked over A2A)" in a for a in asked), asked


def _final_metadata(got: list[StreamResponse]) -> dict[str, Any]:
    """The metadata of the task's last status update (streamed), or of the task."""
    updates = [r.status_update for r in got if r.HasField("status_update")]
    if updates:
        return MessageToDict(updates[-1].metadata)
    tasks = [r.task for r in got if r.HasField("task")]
    return MessageToDict(tasks[-1].metadata) if tasks else {}


async def _served_in_process(app: Any, path: str, text: str) -> tuple[dict[str, Any], list[StreamResponse]]:
    """The app's card at ``path`` and its answer to ``text``, through its lifespan and
    an a2a-sdk client on an in-process transport (no socket)."""
    async with app.router.lifespan_context(app), httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://localhost:8000", timeout=30) as http:
        card = (await http.get(path)).json()
        client = await create_client(f"http://localhost:8000{path.removesuffix('/.well-known/agent-card.json')}",
                                     ClientConfig(streaming=False, httpx_client=http))
        request = SendMessageRequest(message=Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER,
                                                     parts=[Part(text=text)]))
        return card, [r async for r in client.send_message(request)]


def test_to_a2a_runs_on_the_runner_given_under_rpc_path_and_serves_a_card_given_as_a_file(tmp_path: Path) -> None:
    from adk_actors.a2a.utils.agent_to_a2a import to_a2a
    from adk_actors.agents import LlmAgent
    from adk_actors.models import ScriptedModel
    from adk_actors.runners import InMemoryRunner

    agent = LlmAgent(name="forecaster", description="Forecasts the weather.", model=ScriptedModel(fallback=ANSWER))
    runner = InMemoryRunner(agent, app_name="weather_desk")
    card, got = asyncio.run(_served_in_process(to_a2a(agent, runner=runner, rpc_path="/forecast/"),
                                               "/forecast/.well-known/agent-card.json", "Weather?"))
    assert card["supportedInterfaces"][0]["url"] == "http://localhost:8000/forecast"
    task = [r.task for r in got if r.HasField("task")][-1]
    assert TaskState.Name(task.status.state) == "TASK_STATE_COMPLETED"
    assert MessageToDict(task.metadata)["adk_app_name"] == "weather_desk"  # the runner given ran it
    user = MessageToDict(task.metadata)["adk_user_id"]
    assert user == f"A2A_USER_{task.context_id}"
    sessions = asyncio.run(runner.session_service.list_sessions(app_name="weather_desk", user_id=user))
    assert [s.id for s in sessions.sessions] == [task.context_id]

    given = tmp_path / "card.json"
    interfaces = [{**card["supportedInterfaces"][0], "url": "http://localhost:8000"}]
    given.write_text(httpx.Response(200, json={**card, "name": "from_a_file",
                                               "supportedInterfaces": interfaces}).text)
    card, got = asyncio.run(_served_in_process(to_a2a(agent, agent_card=str(given)),
                                               "/.well-known/agent-card.json", "Weather?"))
    assert card["name"] == "from_a_file"
    assert TaskState.Name([r.task for r in got if r.HasField("task")][-1].status.state) == "TASK_STATE_COMPLETED"
    with pytest.raises(ValueError, match="Failed to load agent card"):
        to_a2a(agent, agent_card=str(tmp_path / "missing.json"))
