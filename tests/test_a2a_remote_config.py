"""``RemoteA2aAgent(..., config=A2aRemoteAgentConfig(...))`` as google-adk 2.13 takes it
(issue 52): its names at google-adk's paths (``adk_actors.a2a.agent.config``), each
field honoured end to end, side by side with google-adk's own agent and config.

A real A2A server (a2a-sdk's JSON-RPC routes on uvicorn, 127.0.0.1; the recorder of
tests/test_remote_a2a_agent_card.py behind a middleware that also keeps each
request's method, path and headers) answers with what it heard. The same hooks, in
google-adk's config and in ours, must make the server receive the same things: the
headers and metadata a ``before_request`` adds, the message it changes, the headers a
card interceptor gives (on the card's fetch alone, later interceptors winning a
clash), the session id (or its namespaced digest) as the first message's context;
``after_request`` hooks run in reverse order and see google-adk's shape of each
response. A hook that answers in the request's stead sends nothing; one that drops
the answer hides it; a bad config value is refused with a typed error when it is
made, and a hook that misbehaves when it runs is a clear error event.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("a2a")
pytest.importorskip("google.adk.a2a")

import uvicorn
from a2a.types import Message, Part, Task
from pydantic import ValidationError
from starlette.applications import Starlette
from test_remote_a2a_agent_card import CARD_PATH, TURNS, _card, _Recorder, _routes, _TaskAnswers

from adk_actors.a2a.agent import RemoteA2aAgent as OurRemote
from adk_actors.a2a.agent import config as ours_config
from supervision.lowlevel import free_port
from supervision.testing import wait_until

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

SESSION_ID = "s-0042"


class _Wire:
    """ASGI middleware: keeps each request's method, path and headers, then passes it on."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[dict[str, Any]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            self.requests.append({"method": scope["method"], "path": scope["path"], "headers": headers})
        await self.app(scope, receive, send)


class _Server:
    def __init__(self, wire: _Wire, recorder: _Recorder, url: str) -> None:
        self.wire, self.recorder, self.url = wire, recorder, url
        self.card_url = url + CARD_PATH
        self.streamed_card_url = url + "/streamed" + CARD_PATH

    def clear(self) -> None:
        self.wire.requests.clear()
        self.recorder.received.clear()


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    """The recording A2A server on a free loopback port, on a thread of its own: its
    agent answering with a message at ``/``, one answering as a streamed task at
    ``/streamed/``."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    recorder = _Recorder()
    recorder.app = Starlette(routes=[*_routes("/streamed", _card(url + "/streamed/", True), _TaskAnswers()),
                                     *_routes("", _card(url + "/", True), recorder)])
    wire = _Wire(recorder)
    running = uvicorn.Server(uvicorn.Config(wire, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    try:
        wait_until(lambda: running.started, timeout=30, message="the A2A server did not start")
        yield _Server(wire, recorder, url)
    finally:
        running.should_exit = True
        thread.join(timeout=30)
    assert not thread.is_alive()


# -- the same hooks, for either side ------------------------------------------------------

def _shape(response: Any) -> str:
    """google-adk's shape of a response, as a word: ``message``, or ``task+<update kind>``."""
    if isinstance(response, Message):
        return "message"
    if isinstance(response, tuple) and len(response) == 2 and isinstance(response[0], Task):
        return "task+" + (type(response[1]).__name__ if response[1] is not None else "none")
    return f"other:{type(response).__name__}"


def _hooks(calls: list[str]) -> dict[str, Any]:
    """Two request interceptors and two card interceptors that record when they run;
    the first adds a header, metadata and a part, the second a header and metadata;
    the first after-hook marks the event it is given."""

    async def first_before(ctx: Any, message: Any, params: Any) -> Any:
        calls.append("before 1")
        message.parts.append(Part(text="[tenant acme]"))
        context = params.client_call_context
        context.service_parameters = {**(context.service_parameters or {}), "X-Tenant": "acme"}
        params.request_metadata = {**(params.request_metadata or {}), "tenant": "acme"}
        return message, params

    async def second_before(ctx: Any, message: Any, params: Any) -> Any:
        calls.append("before 2")
        context = params.client_call_context
        context.service_parameters = {**(context.service_parameters or {}), "X-Trace": "t-1"}
        params.request_metadata = {**(params.request_metadata or {}), "trace": "t-1"}
        return message, params

    async def first_after(ctx: Any, response: Any, event: Any) -> Any:
        calls.append(f"after 1 {_shape(response)}")
        return event.model_copy(update={"custom_metadata": {**(event.custom_metadata or {}), "seen": "after 1"}})

    async def second_after(ctx: Any, response: Any, event: Any) -> Any:
        calls.append(f"after 2 {_shape(response)}")
        return event

    async def first_card(ctx: Any) -> Any:
        calls.append("card 1")
        return {"X-Card-Token": "early", "X-Card-Only": "yes"}

    async def second_card(ctx: Any) -> Any:
        calls.append("card 2")
        return {"X-Card-Token": "late"}

    return {"before": [first_before, second_before], "after": [first_after, second_after],
            "card": [first_card, second_card]}


def _config(config_module: Any, calls: list[str], forward: Any) -> Any:
    """The hooks of :func:`_hooks` in ``config_module``'s classes (google-adk's or ours)."""
    hooks = _hooks(calls)

    def card_hook(hook: Any) -> Any:
        async def before_request(ctx: Any) -> Any:
            return config_module.A2aCardRequestConfig(headers=await hook(ctx))
        return before_request

    return config_module.A2aRemoteAgentConfig(
        request_interceptors=[config_module.RequestInterceptor(before_request=b, after_request=a)
                              for b, a in zip(hooks["before"], hooks["after"], strict=True)],
        card_request_interceptors=[config_module.CardRequestInterceptor(before_request=card_hook(h))
                                   for h in hooks["card"]],
        forward_session_id_as_context_id=forward)


async def _run(runner: Any, make_content: Any, turns: list[str]) -> list[Any]:
    await runner.session_service.create_session(app_name="cards", user_id="ann", session_id=SESSION_ID)
    events = []
    for text in turns:
        async for event in runner.run_async(user_id="ann", session_id=SESSION_ID, new_message=make_content(text)):
            events.append(event)
    await runner.close()
    return events


def _side(side: str, card_url: str, config: Any, turns: list[str] = TURNS, **options: Any) -> list[Any]:
    """The events of a conversation with google-adk's agent (``theirs``) or ours."""
    runner: Any
    types: Any
    if side == "theirs":
        from google.adk.agents.remote_a2a_agent import RemoteA2aAgent
        from google.adk.runners import InMemoryRunner
        from google.genai import types as their_types

        agent = RemoteA2aAgent(name="remote", agent_card=card_url, config=config, **options)
        runner, types = InMemoryRunner(agent=agent, app_name="cards"), their_types
    else:
        from adk_actors import types as our_types
        from adk_actors.runners import InMemoryRunner as OurRunner

        runner = OurRunner(agent=OurRemote(name="remote", agent_card=card_url, config=config, **options),
                           app_name="cards")
        types = our_types
    content = lambda text: types.Content(role="user", parts=[types.Part(text=text)])  # noqa: E731
    return asyncio.run(asyncio.wait_for(_run(runner, content, turns), timeout=60))


def _received(server: _Server) -> dict[str, Any]:
    """What the server got: each request's method, path and the test's headers; each
    message's context, parts and the request's metadata."""
    wire = [{"method": r["method"], "path": r["path"],
             "headers": {k: v for k, v in r["headers"].items() if k.startswith("x-")}} for r in server.wire.requests]
    messages = [{"contextId": m["params"]["message"].get("contextId"),
                 "parts": [p.get("text") for p in m["params"]["message"]["parts"]],
                 "metadata": m["params"].get("metadata")} for m in server.recorder.received]
    return {"wire": wire, "messages": messages}


def _texts(events: list[Any]) -> list[str]:
    return ["".join(p.text or "" for p in e.content.parts) for e in events
            if e.author == "remote" and e.content is not None and e.content.parts and not e.partial]


def test_the_same_config_makes_the_server_receive_the_same_from_google_adks_agent_and_ours(
        server: _Server) -> None:
    got: dict[str, Any] = {}
    for side in ("theirs", "ours"):
        from google.adk.a2a.agent import config as their_config
        calls: list[str] = []
        server.clear()
        events = _side(side, server.card_url, _config(their_config if side == "theirs" else ours_config, calls,
                                                      forward=True))
        got[side] = {"received": _received(server), "calls": calls, "texts": _texts(events),
                     "seen": [(e.custom_metadata or {}).get("seen") for e in events if e.author == "remote"]}

    received = got["ours"]["received"]
    # what the server got from ours, told plainly: the card's fetch (each turn: its
    # headers may be one user's) with the card headers alone, the later one winning
    # the clash; each message with the interceptors' headers, metadata and part, the
    # first in the session's context, the second in the context the answer named
    card_fetch = {"method": "GET", "path": CARD_PATH, "headers": {"x-card-token": "late", "x-card-only": "yes"}}
    send = {"method": "POST", "path": "/", "headers": {"x-tenant": "acme", "x-trace": "t-1"}}
    assert received["wire"] == [card_fetch, send, card_fetch, send]
    assert received["messages"] == [
        {"contextId": SESSION_ID, "parts": [turn, "[tenant acme]"],
         "metadata": {"tenant": "acme", "trace": "t-1"}} for turn in TURNS]
    # before-hooks in order, after-hooks in reverse, each seeing the answering message
    assert got["ours"]["calls"] == ["card 1", "card 2", "before 1", "before 2", "after 2 message",
                                    "after 1 message"] * 2
    assert got["ours"]["texts"] == [f"heard: {t} | [tenant acme]" for t in TURNS]
    assert got["ours"]["seen"] == ["after 1", "after 1"]
    assert got["ours"] == got["theirs"]


def test_a_namespaced_context_is_google_adks_digest_of_app_user_and_session(server: _Server) -> None:
    """``"namespaced"``: not the session id, but the same context as google-adk's for
    the same app, user and session, and kept for the next turn."""
    from google.adk.a2a.agent import config as their_config

    contexts = []
    for side, module in (("theirs", their_config), ("ours", ours_config)):
        server.clear()
        _side(side, server.card_url, module.A2aRemoteAgentConfig(forward_session_id_as_context_id="namespaced"))
        contexts.append([m["contextId"] for m in _received(server)["messages"]])
    assert contexts[0] == contexts[1]
    assert len(contexts[1][0]) == 64 and contexts[1][0] != SESSION_ID and contexts[1] == [contexts[1][0]] * 2


def test_without_forwarding_the_first_message_has_no_context(server: _Server) -> None:
    server.clear()
    _side("ours", server.card_url, ours_config.A2aRemoteAgentConfig())
    contexts = [m["contextId"] for m in _received(server)["messages"]]
    assert contexts[0] is None and contexts[1]


def test_a_streamed_task_is_seen_by_the_after_hook_as_google_adks_task_and_update(server: _Server) -> None:
    """Our agent makes one event of a task's end (google-adk makes one of each update):
    its after-hook is given the task so far, its artifact had, with the update."""
    seen: list[Any] = []

    async def after(ctx: Any, response: Any, event: Any) -> Any:
        seen.append((_shape(response), [p.text for a in response[0].artifacts for p in a.parts]))
        return event

    server.clear()
    config = ours_config.A2aRemoteAgentConfig(request_interceptors=[ours_config.RequestInterceptor(
        after_request=after)])
    events = _side("ours", server.streamed_card_url, config, turns=TURNS[:1])
    assert _texts(events) == [f"heard: {TURNS[0]}"]
    assert seen == [("task+TaskArtifactUpdateEvent", [f"heard: {TURNS[0]}"])]


def test_a_before_hook_that_answers_sends_nothing_and_its_event_is_the_answer(server: _Server) -> None:
    from adk_actors.events import Event
    from adk_actors.types import Content
    from adk_actors.types import Part as OurPart

    async def refuse(ctx: Any, message: Any, params: Any) -> Any:
        return Event(author="remote", content=Content(role="model", parts=[OurPart(text="not today")])), params

    server.clear()
    config = ours_config.A2aRemoteAgentConfig(request_interceptors=[ours_config.RequestInterceptor(
        before_request=refuse)])
    events = _side("ours", server.card_url, config, turns=TURNS[:1])
    assert _texts(events) == ["not today"]
    assert [r["method"] for r in server.wire.requests] == ["GET"] and server.recorder.received == []


def test_an_after_hook_that_returns_none_hides_the_answer(server: _Server) -> None:
    async def drop(ctx: Any, response: Any, event: Any) -> None:
        return None

    server.clear()
    config = ours_config.A2aRemoteAgentConfig(request_interceptors=[ours_config.RequestInterceptor(
        after_request=drop)])
    events = _side("ours", server.card_url, config, turns=TURNS[:1])
    assert len(server.recorder.received) == 1 and _texts(events) == [] and not any(e.error_code for e in events)


# -- bad values ----------------------------------------------------------------------------

def _made(kind: str, **fields: Any) -> Any:
    """Our config class ``kind`` made with ``fields`` (bad ones: unchecked here)."""
    made: Any = getattr(ours_config, kind)
    return made(**fields)


@pytest.mark.parametrize(("kind", "fields"), [
    ("A2aRemoteAgentConfig", {"forward_session_id_as_context_id": "yes"}),
    ("A2aRemoteAgentConfig", {"forward_session_id_as_context_id": 1}),
    ("A2aRemoteAgentConfig", {"request_interceptors": [object()]}),
    ("A2aRemoteAgentConfig", {"card_request_interceptors": "header"}),
    ("RequestInterceptor", {"before_request": "not callable"}),
    ("RequestInterceptor", {"after_request": 42}),
    ("CardRequestInterceptor", {"before_request": ["x"]}),
    ("A2aCardRequestConfig", {"headers": {"X-Count": 1}}),
    ("ParametersConfig", {"request_metadata": ["not", "an", "object"]}),
    ("A2aRemoteAgentConfig", {"a2a_part_converter": lambda *a: None}),
    ("A2aRemoteAgentConfig", {"a2a_message_converter": lambda *a: None}),
    ("A2aRemoteAgentConfig", {"forward_sesion_id_as_context_id": True}),
], ids=["forward-yes", "forward-1", "interceptor-object", "card-interceptors-str", "before-not-callable",
        "after-int", "card-before-list", "card-header-int", "metadata-list", "part-converter",
        "message-converter", "misspelt-field"])
def test_a_bad_config_value_is_refused_when_it_is_made(kind: str, fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as refused:
        _made(kind, **fields)
    assert isinstance(refused.value, ValueError)
    if "converter" in str(refused.value):
        assert "not supported here" in str(refused.value)


@pytest.mark.parametrize("config", ["google-adk's", "a dict"])
def test_a_config_that_is_not_ours_is_a_type_error_when_the_agent_is_made(server: _Server, config: str) -> None:
    from google.adk.a2a.agent.config import A2aRemoteAgentConfig

    given = A2aRemoteAgentConfig() if config == "google-adk's" else {"forward_session_id_as_context_id": True}
    with pytest.raises(TypeError, match=r"adk_actors\.a2a\.agent\.config\.A2aRemoteAgentConfig"):
        OurRemote(name="remote", agent_card=server.card_url, config=given)


def _sync_before(ctx: Any, message: Any, params: Any) -> Any:
    return message, params


async def _raising_before(ctx: Any, message: Any, params: Any) -> Any:
    raise RuntimeError("no tenant today")


async def _wrong_before(ctx: Any, message: Any, params: Any) -> Any:
    return message


async def _wrong_after(ctx: Any, response: Any, event: Any) -> Any:
    return "fine"


async def _wrong_card(ctx: Any) -> Any:
    return {"X-Card-Token": "t"}


async def _bad_metadata(ctx: Any, message: Any, params: Any) -> Any:
    params.request_metadata = {"when": object()}
    return message, params


@pytest.mark.parametrize(("interceptors", "said", "sends"), [
    ({"request_interceptors": [ours_config.RequestInterceptor(before_request=_sync_before)]},
     "request interceptor 0's before_request must be async", False),
    ({"request_interceptors": [ours_config.RequestInterceptor(), ours_config.RequestInterceptor(
        before_request=_raising_before)]}, "request interceptor 1's before_request raised RuntimeError: no tenant today",
     False),
    ({"request_interceptors": [ours_config.RequestInterceptor(before_request=_wrong_before)]},
     "must return (a2a Message or Event, ParametersConfig), not Message", False),
    ({"request_interceptors": [ours_config.RequestInterceptor(before_request=_bad_metadata)]},
     "the interceptors' request_metadata failed", False),
    ({"request_interceptors": [ours_config.RequestInterceptor(after_request=_wrong_after)]},
     "request interceptor 0's after_request must return an Event or None, not str", True),
    ({"card_request_interceptors": [ours_config.CardRequestInterceptor(before_request=_wrong_card)]},
     "card request interceptor 0's before_request must return an A2aCardRequestConfig, not dict", False),
], ids=["sync", "raises", "wrong-before", "bad-metadata", "wrong-after", "wrong-card"])
def test_a_hook_that_misbehaves_is_an_error_event_naming_it(server: _Server, interceptors: dict[str, Any], said: str,
                                                            sends: bool) -> None:
    server.clear()
    events = _side("ours", server.card_url, ours_config.A2aRemoteAgentConfig(**interceptors), turns=TURNS[:1])
    errors = [e for e in events if e.error_code]
    assert [e.error_code for e in errors] == ["a2a_request_failed"]
    assert said in errors[0].error_message
    assert bool(server.recorder.received) is sends
    assert ("a2a:request" in errors[0].custom_metadata) is sends


def test_the_names_are_at_google_adks_paths() -> None:
    import google.adk.a2a.agent as theirs
    import google.adk.a2a.agent.config as their_config
    import google.adk.a2a.agent.utils as their_utils

    import adk_actors.a2a.agent as ours
    import adk_actors.a2a.agent.utils as our_utils

    assert set(theirs.__all__) <= set(ours.__all__)
    public = {n for n in vars(their_config) if n[0].isupper() and getattr(their_config, n).__module__ ==
              their_config.__name__}
    assert public <= set(dir(ours_config))
    functions = {n for n in vars(their_utils) if n.startswith("execute_")}
    assert functions == set(our_utils.__all__)
    for name in ours_config.A2aRemoteAgentConfig.model_fields.keys() | their_config.A2aRemoteAgentConfig.model_fields:
        assert name in ours_config.A2aRemoteAgentConfig.model_fields, name
        assert name in their_config.A2aRemoteAgentConfig.model_fields, name
    assert ours_config.A2aRemoteAgentConfig().forward_session_id_as_context_id is False
    assert json.dumps(ours_config.A2aCardRequestConfig().model_dump()) == '{"headers": null}'
