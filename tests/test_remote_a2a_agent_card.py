"""``RemoteA2aAgent(agent_card=...)`` as google-adk makes it (issue 52), side by side.

A real A2A server (a2a-sdk's JSON-RPC routes on uvicorn, 127.0.0.1) records every
message it is sent and answers with what it heard. google-adk 2.13's RemoteA2aAgent
(in google-adk's InMemoryRunner) and ours (in our in-process InMemoryRunner) are each
made with the same ``agent_card`` (the card itself, its URL, the path of its JSON
file) and run the same two turns: the server must get the same messages from both
(the same parts and part metadata, the second in the context of the first answer),
and the user must see the same final texts, the events carrying the same
``a2a:`` request and response metadata; after a transfer, the conversation so far is
sent as google-adk sends it (the quoted context in each side's words); a remote agent
answering as a task gives the same events, and streamed the same texts (google-adk
adds an empty final event at the task's end). A card that cannot be had (a closed port, a
missing file, plain http to another host) is each side's error event; a card of the
wrong kind or an empty one is refused when the agent is made, with google-adk's types.
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import google_adk_harness as harness
import pytest

pytest.importorskip("a2a")
pytest.importorskip("google.adk.a2a")

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import LegacyRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, Message, Part, Role
from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette

from adk_actors import AgentDefinitionError
from adk_actors.a2a import AgentCardResolutionError
from adk_actors.agents.remote_a2a_agent import RemoteA2aAgent as OurRemote
from supervision.lowlevel import free_port
from supervision.testing import wait_until

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

CARD_PATH = "/.well-known/agent-card.json"
TURNS = ["Hello there.", "And once more."]


class _Recorder(AgentExecutor):
    """Answers with the texts it heard; as ASGI middleware, keeps each JSON-RPC request
    it is sent, as it came on the wire (its method and params)."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.app: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = json.loads(b"".join(chunks))
        self.received.append({"method": body.get("method"), "params": body.get("params")})
        delivered = False

        async def replay() -> Any:
            nonlocal delivered
            if delivered:
                return await receive()
            delivered = True
            return {"type": "http.request", "body": b"".join(chunks), "more_body": False}

        await self.app(scope, replay, send)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        heard = " | ".join(p.text for p in context.message.parts if p.text)
        await event_queue.enqueue_event(Message(message_id=uuid.uuid4().hex, role=Role.ROLE_AGENT,
                                                parts=[Part(text=f"heard: {heard}")],
                                                context_id=context.context_id or ""))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


class _TaskAnswers(AgentExecutor):
    """Answers as a task: submitted, working, its artifact (the texts it heard), completed."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None and context.task_id and context.context_id
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        if context.current_task is None:
            await updater.submit()
        await updater.start_work()
        heard = " | ".join(p.text for p in context.message.parts if p.text)
        await updater.add_artifact([Part(text=f"heard: {heard}")], name="answer", last_chunk=True)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


class _Server:
    def __init__(self, recorder: _Recorder, card: AgentCard, url: str) -> None:
        self.recorder, self.card, self.url = recorder, card, url
        self.card_url = url + CARD_PATH

    def task_card_url(self, streaming: bool) -> str:
        return f"{self.url}/{'streamed' if streaming else 'tasks'}{CARD_PATH}"


def _card(url: str, streaming: bool) -> AgentCard:
    return AgentCard(name="echoer", description="Says what it heard.", version="1.0",
                     supported_interfaces=[AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")],
                     capabilities=AgentCapabilities(streaming=streaming), default_input_modes=["text/plain"],
                     default_output_modes=["text/plain"])


def _routes(prefix: str, card: AgentCard, executor: AgentExecutor) -> list[Any]:
    handler = LegacyRequestHandler(agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card)
    return [*create_agent_card_routes(card, card_url=prefix + CARD_PATH),
            *create_jsonrpc_routes(handler, prefix + "/", enable_v0_3_compat=True)]


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    """The recording A2A server on a free loopback port, on a thread of its own: its
    agent answering with a message at ``/``; one answering as a task at ``/tasks/``
    and, streaming, at ``/streamed/``."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    card = _card(url + "/", streaming=True)
    recorder = _Recorder()
    recorder.app = Starlette(routes=[*_routes("/tasks", _card(url + "/tasks/", False), _TaskAnswers()),
                                     *_routes("/streamed", _card(url + "/streamed/", True), _TaskAnswers()),
                                     *_routes("", card, recorder)])
    running = uvicorn.Server(uvicorn.Config(recorder, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    try:
        wait_until(lambda: running.started, timeout=30, message="the A2A server did not start")
        yield _Server(recorder, card, url)
    finally:
        running.should_exit = True
        thread.join(timeout=30)
    assert not thread.is_alive()


def _card_forms(server: _Server, tmp_path: Path) -> dict[str, Any]:
    card_file = tmp_path / "card.json"
    card_file.write_text(json.dumps(MessageToDict(server.card)))
    return {"object": server.card, "url": server.card_url, "file": str(card_file)}


def _text(event: Any) -> str:
    content = event.content
    return "".join(p.text or "" for p in (content.parts or [])) if content is not None else ""


_ID_KEYS = ("messageId", "contextId", "taskId", "id", "artifactId", "a2a:context_id", "a2a:task_id")


def _without_ids(value: Any, ids: dict[str, str]) -> Any:
    """``value`` with each message, task, context and artifact id named by its order of
    appearance, and no status timestamp."""
    if isinstance(value, dict):
        value = {k: v for k, v in value.items() if k != "timestamp"}  # a task status's: when it was set
        return {k: (ids.setdefault(v, f"{k.removeprefix('a2a:')}-{len(ids)}") if k in _ID_KEYS
                    and isinstance(v, str) else _without_ids(v, ids)) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_ids(v, ids) for v in value]
    return value


def _seen(events: list[Any]) -> dict[str, Any]:
    """What the user sees of a conversation, ids named by order of appearance."""
    ids: dict[str, str] = {}
    rows = []
    for event in events:
        if event.author == "user":
            continue
        metadata = {k: v for k, v in (event.custom_metadata or {}).items() if k.startswith("a2a:")}
        rows.append({"author": event.author, "final": event.is_final_response(), "text": _text(event),
                     "error": bool(event.error_message), "metadata": _without_ids(metadata, ids)})
    return {"events": rows}


async def _conversation(runner: Any, make_content: Any) -> list[Any]:
    session = await runner.session_service.create_session(app_name="cards", user_id="ann")
    events = []
    for text in TURNS:
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=make_content(text)):
            events.append(event)
    await runner.close()
    return events


def _theirs(agent_card: Any) -> tuple[Any, list[Any]]:
    from google.adk.agents.remote_a2a_agent import RemoteA2aAgent
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    agent = RemoteA2aAgent(name="remote", agent_card=agent_card)
    runner = InMemoryRunner(agent=agent, app_name="cards")
    content = lambda text: types.Content(role="user", parts=[types.Part(text=text)])  # noqa: E731
    return agent, asyncio.run(asyncio.wait_for(_conversation(runner, content), timeout=60))


def _ours(agent_card: Any) -> tuple[Any, list[Any]]:
    from adk_actors import types
    from adk_actors.runners import InMemoryRunner

    agent = OurRemote(name="remote", agent_card=agent_card)
    runner = InMemoryRunner(agent=agent, app_name="cards")
    content = lambda text: types.Content(role="user", parts=[types.Part(text=text)])  # noqa: E731
    return agent, asyncio.run(asyncio.wait_for(_conversation(runner, content), timeout=60))


@pytest.mark.parametrize("form", ["object", "url", "file"])
def test_the_same_card_sends_the_same_request_and_shows_the_same_answer(server: _Server, tmp_path: Path,
                                                                        form: str) -> None:
    card = _card_forms(server, tmp_path)[form]
    received = server.recorder.received
    received.clear()
    their_agent, theirs = _theirs(card)
    sent_by_them = _without_ids(list(received), {})
    received.clear()
    our_agent, ours = _ours(card)
    sent_by_us = _without_ids(list(received), {})
    # the second message's context is the one the server named in its first answer
    answered = [e.custom_metadata["a2a:context_id"] for e in ours if e.author == "remote"]
    assert received[1]["params"]["message"]["contextId"] == answered[0]

    # what google-adk sends, so that the comparison means something: each turn's own
    # message, marked as the user's, the second in the context the first answer named
    messages = [m["params"]["message"] for m in sent_by_them]
    assert [[p["text"] for p in m["parts"]] for m in messages] == [[TURNS[0]], [TURNS[1]]]
    assert all(p["metadata"] == {"is_user_input": True} for m in messages for p in m["parts"])
    assert "contextId" not in messages[0] and messages[1]["contextId"]
    assert sent_by_us == sent_by_them

    assert [e["text"] for e in _seen(theirs)["events"] if e["final"]] == [f"heard: {t}" for t in TURNS]
    assert _seen(ours) == _seen(theirs)
    assert set(_seen(ours)["events"][0]["metadata"]) == {"a2a:context_id", "a2a:request", "a2a:response"}
    # a card given (or once had) names the agent for a parent that transfers to it;
    # one that came off the network is fenced in the quote markers on both sides
    assert their_agent.description == our_agent.description
    assert (our_agent.description == "Says what it heard.") is (form != "url")


def _error_of(events: list[Any]) -> Any:
    errors = [e for e in events if e.error_message]
    assert errors, [(_text(e), e.author) for e in events]
    return errors[0]


@pytest.mark.parametrize("where", ["closed_port", "missing_file", "plain_http_elsewhere"])
def test_a_card_that_cannot_be_had_is_each_sides_error_event(tmp_path: Path, where: str) -> None:
    card = {"closed_port": f"http://127.0.0.1:{free_port()}{CARD_PATH}",
            "missing_file": str(tmp_path / "no-such-card.json"),
            "plain_http_elsewhere": "http://agents.example.com/card.json"}[where]
    _, theirs = _theirs(card)
    _, ours = _ours(card)
    their_error, our_error = _error_of(theirs), _error_of(ours)
    assert their_error.author == our_error.author == "remote"
    assert "Failed to resolve AgentCard" in their_error.error_message or "Agent card URL must use https" in \
        their_error.error_message, their_error.error_message
    assert our_error.error_code == "a2a_unavailable"
    assert AgentCardResolutionError.__name__ in our_error.error_message and card in our_error.error_message
    # neither run raised, neither got an answer
    assert not [e for e in ours if e.author == "remote" and _text(e)]


@pytest.mark.parametrize(("card", "kind"), [(None, ValueError), ("", ValueError), ("  ", ValueError),
                                             (42, TypeError)])
def test_a_card_of_the_wrong_kind_is_refused_as_google_adk_refuses_it(card: Any, kind: type[Exception]) -> None:
    from google.adk.agents.remote_a2a_agent import RemoteA2aAgent

    with pytest.raises(kind):
        RemoteA2aAgent(name="remote", agent_card=card)
    with pytest.raises(kind) as refused:
        OurRemote(name="remote", agent_card=card)
    if kind is ValueError:
        assert isinstance(refused.value, AgentDefinitionError)


def test_card_url_still_works_and_an_option_google_adk_has_and_we_lack_is_named(server: _Server) -> None:
    server.recorder.received.clear()
    agent = OurRemote(name="remote", card_url=server.card_url, timeout=20)
    from adk_actors import types
    from adk_actors.runners import InMemoryRunner

    runner = InMemoryRunner(agent=agent, app_name="cards")
    content = lambda text: types.Content(role="user", parts=[types.Part(text=text)])  # noqa: E731
    events = asyncio.run(asyncio.wait_for(_conversation(runner, content), timeout=60))
    assert [_text(e) for e in events if e.author == "remote" and e.is_final_response()] == \
        [f"heard: {t}" for t in TURNS]
    with pytest.raises(AgentDefinitionError, match="use_legacy"):
        OurRemote(name="remote", agent_card=server.card_url, use_legacy=False)


# -- a sub-agent reached by a transfer: what the conversation so far becomes ---------------

stand_in, gemini = harness.stand_in, harness.gemini


def _who_did_what(sent: dict[str, Any]) -> list[Any]:
    """A sent message's parts: the user's as they are; another agent's turn, quoted as
    context, as who did what (each side words it its own way, see tests/google_adk_harness)."""
    rows: list[Any] = []
    for part in sent["params"]["message"]["parts"]:
        text = part.get("text", "")
        said = "context:" if text.startswith("For context") else text.split(":")[0] if text.startswith("[") else text
        rows.append((said, part.get("metadata")))
    return rows


def _transfer(runner: Any, make_content: Any) -> list[Any]:
    async def go() -> list[Any]:
        session = await runner.session_service.create_session(app_name="cards", user_id="ann")
        events = [e async for e in runner.run_async(user_id="ann", session_id=session.id,
                                                    new_message=make_content(TURNS[0]))]
        await runner.close()
        return events

    return asyncio.run(asyncio.wait_for(go(), timeout=60))


def test_after_a_transfer_the_remote_agent_gets_the_conversation_as_google_adk_sends_it(
        server: _Server, gemini: Any) -> None:
    from google.adk.agents import LlmAgent as TheirLlm
    from google.adk.agents.remote_a2a_agent import RemoteA2aAgent as TheirRemote
    from google.adk.runners import InMemoryRunner as TheirRunner
    from google.genai import types as their_types

    from adk_actors import LlmAgent as OurLlm
    from adk_actors import types as our_types
    from adk_actors.runners import InMemoryRunner as OurRunner

    sent: list[list[Any]] = []
    finals: list[list[str]] = []
    for llm, remote, runner_class, types in ((TheirLlm, TheirRemote, TheirRunner, their_types),
                                             (OurLlm, OurRemote, OurRunner, our_types)):
        server.recorder.received.clear()
        with gemini._lock:
            gemini.responses.clear()
        gemini.add(harness.calls(("transfer_to_agent", {"agent_name": "remote"})))
        root = llm(name="router", model="gemini-2.5-flash", instruction="Send everything to the remote agent.",
                   sub_agents=[remote(name="remote", agent_card=server.card_url, description="The echoer.")])
        events = _transfer(runner_class(agent=root, app_name="cards"),
                           lambda text, t=types: t.Content(role="user", parts=[t.Part(text=text)]))
        assert len(server.recorder.received) == 1 and not gemini.responses
        sent.append(_who_did_what(server.recorder.received[0]))
        finals.append([_text(e) for e in events if e.author == "remote" and e.is_final_response()])
    theirs, ours = sent
    # google-adk marks another agent's turn, quoted, as the user's input too
    user = {"is_user_input": True}
    assert theirs == [(TURNS[0], user), ("context:", user),
                      ("[router] called tool `transfer_to_agent` with parameters", user), ("context:", user),
                      ("[router] `transfer_to_agent` tool returned result", user)]
    assert ours == theirs
    assert finals[0] == [finals[0][0]] and finals[0][0].startswith(f"heard: {TURNS[0]} | ")
    assert len(finals[1]) == 1 and finals[1][0].startswith(f"heard: {TURNS[0]} | ")


def test_a_task_answered_at_once_gives_google_adks_events(server: _Server) -> None:
    """A remote agent that answers as a task, without streaming: the same final events
    (text, ``a2a:`` metadata with the task and its state) on both sides."""
    _, theirs = _theirs(server.task_card_url(streaming=False))
    _, ours = _ours(server.task_card_url(streaming=False))
    assert [e["text"] for e in _seen(theirs)["events"]] == [f"heard: {t}" for t in TURNS]
    assert _seen(ours) == _seen(theirs)
    assert {"a2a:task_id", "a2a:response"} <= set(_seen(ours)["events"][0]["metadata"])
    assert _seen(ours)["events"][0]["metadata"]["a2a:response"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_streamed_task_shows_the_user_the_same_answer(server: _Server) -> None:
    """Streamed, google-adk yields the artifact as an event of its own and then an empty
    final event for the task's end; ours ends with one final event, the answer
    (docs/design.md): the texts the user is shown are the same."""
    _, theirs = _theirs(server.task_card_url(streaming=True))
    _, ours = _ours(server.task_card_url(streaming=True))
    shown = [[e["text"] for e in _seen(side)["events"] if e["text"]] for side in (theirs, ours)]
    assert shown[0] == shown[1] == [f"heard: {t}" for t in TURNS]
    assert all(e["final"] for e in _seen(ours)["events"])


def test_a_given_httpx_client_carries_every_request_and_stays_open(server: _Server) -> None:
    """google-adk's ``httpx_client``: the card's fetch and the messages go through it,
    and it is its owner's to close."""
    import httpx

    from adk_actors import types
    from adk_actors.runners import InMemoryRunner

    async def go() -> tuple[list[str], list[Any], bool]:
        went: list[str] = []

        async def record(request: httpx.Request) -> None:
            went.append(f"{request.method} {request.url.path}")

        async with httpx.AsyncClient(timeout=20, event_hooks={"request": [record]}) as client:
            agent = OurRemote(name="remote", agent_card=server.card_url, httpx_client=client)
            runner = InMemoryRunner(agent=agent, app_name="cards")
            events = await _conversation(runner, lambda text: types.Content(role="user",
                                                                            parts=[types.Part(text=text)]))
            return went, events, client.is_closed

    went, events, closed = asyncio.run(asyncio.wait_for(go(), timeout=60))
    assert went == [f"GET {CARD_PATH}", "POST /", "POST /"] and not closed
    assert [_text(e) for e in events if e.author == "remote"] == [f"heard: {t}" for t in TURNS]


def test_request_metadata_from_a2a_request_meta_provider_reaches_the_server_alike(server: _Server) -> None:
    """google-adk's ``a2a_request_meta_provider(ctx, message)``: its dict is the
    request's metadata, on both sides (the provider sees the message being sent)."""
    from google.adk.agents.remote_a2a_agent import RemoteA2aAgent
    from google.adk.runners import InMemoryRunner
    from google.genai import types as their_types

    from adk_actors import types as our_types
    from adk_actors.runners import InMemoryRunner as OurRunner

    def provider(ctx: Any, message: Any) -> dict[str, Any]:
        return {"tenant": "acme", "session": ctx.session.id == "", "said": message.parts[0].text}

    sent = []
    for remote, runner_class, types in ((RemoteA2aAgent, InMemoryRunner, their_types),
                                        (OurRemote, OurRunner, our_types)):
        server.recorder.received.clear()
        agent = remote(name="remote", agent_card=server.card_url, a2a_request_meta_provider=provider)
        runner = runner_class(agent=agent, app_name="cards")
        asyncio.run(asyncio.wait_for(_conversation(
            runner, lambda text, t=types: t.Content(role="user", parts=[t.Part(text=text)])), timeout=60))
        sent.append(_without_ids(list(server.recorder.received), {}))
    assert [m["params"]["metadata"] for m in sent[0]] == [
        {"tenant": "acme", "session": False, "said": t} for t in TURNS]
    assert sent[1] == sent[0]


def test_a_request_meta_provider_that_raises_is_an_error_event_and_nothing_is_sent(server: _Server) -> None:
    from adk_actors import types
    from adk_actors.runners import InMemoryRunner

    def broken(ctx: Any, message: Any) -> dict[str, Any]:
        raise RuntimeError("no tenant today")

    server.recorder.received.clear()
    agent = OurRemote(name="remote", agent_card=server.card_url, a2a_request_meta_provider=broken)
    events = asyncio.run(asyncio.wait_for(_conversation(InMemoryRunner(agent=agent, app_name="cards"), lambda text:
                                                        types.Content(role="user", parts=[types.Part(text=text)])),
                                          timeout=60))
    errors = [e for e in events if e.error_code]
    assert [e.error_code for e in errors] == ["a2a_request_failed"] * 2
    assert "no tenant today" in errors[0].error_message and not server.recorder.received
