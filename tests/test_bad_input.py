"""Hostile and careless callers (issue: bad input): lone surrogates, deep nesting and
huge values, against a real host, over HTTP (``adk-actors serve``: ``/run``,
``/run_sse``, the session and artifact routes, A2A's JSON-RPC) and in process (the
host's ``Runner``, a partition's message API, google-adk's in-process ``Runner``).

For each input: the caller gets a typed error (HTTP 4xx ``{"detail": ...}`` that says
what was wrong, or a typed exception) within a deadline; the session's committed events
are all still there; a following normal turn on that session and on another works; and
no actor of the host restarts (pids and restart counts unchanged).

The limits named here: ``[http] max_body_bytes`` (2 MiB), ``[limits] max_json_depth``
(32), ``[limits] max_message_bytes`` (1 MiB), and, per request,
``_validate.MAX_STATE_BYTES`` (1 MiB of state set at once) and
``_validate.MAX_MESSAGE_PARTS`` (1,000 parts in a message).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import runtime_agents
from conftest import SharedHost, serving
from google.genai import types

from adk_actors import Content, InvalidRequestError, LimitExceededError, Part
from adk_actors._validate import MAX_MESSAGE_PARTS, MAX_STATE_BYTES
from adk_actors.messages import CreateSession, RunRequest, UpdateState
from adk_actors.runtime import Host, HostConfig
from supervision import CallError, call
from supervision.protocol import OsPid

APPS = 'echo = "runtime_agents:echo_agent"\nnotes = "runtime_agents:notes_agent"\n'
SURROGATE = "\\ud800"  # as JSON writes it: a valid escape of a character UTF-8 cannot encode
#: The content types a careless client sends a JSON body with (None: no header at all).
CONTENT_TYPES = ["application/json", "application/JSON", "application/json; charset=utf-8", None, "text/plain"]
SESSIONS = "/apps/echo/users/{user}/sessions"
HI = '{"text": "hi"}'


def deep_json(depth: int, leaf: str = '"x"') -> str:
    """``[[[...leaf...]]]`` ``depth`` levels deep, written out (json.dumps would recurse)."""
    return "[" * depth + leaf + "]" * depth


def deep_value(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


def message(parts: str) -> str:
    return f'{{"role": "user", "parts": [{parts}]}}'


def run_body(user: str, session: str, new_message: str | None = None, **more: str) -> str:
    extra = "".join(f', "{key}": {value}' for key, value in more.items())
    return (f'{{"appName": "echo", "userId": "{user}", "sessionId": "{session}", '
            f'"newMessage": {new_message or message(HI)}{extra}}}')


def a2a_send(part: str, **more: str) -> str:
    """A2A ``message/send`` (protocol 0.3 names) with one part, written as JSON text."""
    extra = "".join(f', "{key}": {value}' for key, value in more.items())
    return ('{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": '
            f'{{"role": "user", "messageId": "m1", "parts": [{part}]{extra}}}}}}}')


@pytest.fixture(scope="module")
def shared_hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedHost]:
    hosts = SharedHost(tmp_path_factory.mktemp("bad-input-host"),
                       lambda data: HostConfig(apps=runtime_agents.APPS, data_dir=str(data)))
    yield hosts
    hosts.close()


@pytest.fixture
def host(shared_hosts: SharedHost) -> Host:
    """This module's ``host``: one shared by its tests, which neither kill, stop nor
    reconfigure it, each on users of its own (``SharedHost``: a fresh one after a test
    that broke its tree)."""
    return shared_hosts.get()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with serving(tmp_path_factory.mktemp("bad-input"), "partitions = 2\n", apps=APPS) as info:
        assert info["url"], info["out"].read_text()
        yield info


def actors(port: int) -> dict[str, tuple[int | None, int]]:
    """Every actor of the served host but its sessions, runs and run workers: (pid,
    restarts) by path; a crash, or a supervisor restarting a child, changes one."""
    from adk_actors.chaos import tree_rows

    host = Host.connect(port)
    try:
        return {row["path"]: (row["pid"], row["restarts"]) for row in tree_rows(host, timeout=5.0)
                if row["type"] not in ("session", "run", "worker")}
    finally:
        host.disconnect()


def send(client: httpx.Client, method: str, path: str, text: str, content_type: str | None) -> httpx.Response:
    """A request whose body is sent exactly as written, with ``content_type`` (or none)."""
    headers = {"content-type": content_type} if content_type else {}
    request = client.build_request(method, path, content=text.encode(), headers=headers)
    if content_type is None:
        request.headers.pop("content-type", None)
    return client.send(request)


def raw_status(served: dict[str, Any], path: str) -> int:
    """The status a GET of ``path`` is answered with, sent on a socket as written (the
    server may close the connection before it has read it all); 0 when the connection
    was reset before the answer could be read."""
    import socket

    port = int(served["url"].rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        try:
            connection.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        except OSError:  # refused before the whole line was sent: its answer is waiting
            pass
        head = b""
        while b"\r\n" not in head:
            try:
                chunk = connection.recv(4096)
            except ConnectionResetError:  # closed on us before its answer was read: refused, unanswered
                return 0
            if not chunk:
                break
            head += chunk
    return int(head.split()[1])


def refused(answer: httpx.Response, status: int, *words: str) -> str:
    """``answer`` is ``status`` with the project's body, ``{"detail": "..."}``, saying
    ``words``, no internals; its detail."""
    assert answer.status_code == status, (answer.status_code, answer.text[:300])
    body = answer.json()
    assert set(body) == {"detail"} and isinstance(body["detail"], str), body
    for word in words:
        assert word in body["detail"], (word, body["detail"][:300])
    assert "Traceback" not in body["detail"] and "codec" not in body["detail"], body["detail"][:300]
    return str(body["detail"])


class Session:
    """A session of the served ``echo`` app that had one normal turn: what it had
    committed, and checks that it still has it and still runs turns."""

    def __init__(self, client: httpx.Client, user: str, session_id: str = "s1") -> None:
        self.client, self.user, self.id = client, user, session_id
        self.base = SESSIONS.format(user=user)
        assert client.post(self.base, json={"sessionId": session_id}).status_code == 200
        assert self.turn("first").startswith("echo: first")
        self.events = self.stored()

    def stored(self) -> list[dict[str, Any]]:
        answer = self.client.get(f"{self.base}/{self.id}")
        assert answer.status_code == 200, answer.text[:300]
        events: list[dict[str, Any]] = answer.json()["events"]
        return events

    def turn(self, text: str, session_id: str | None = None) -> str:
        answer = self.client.post("/run", json={"appName": "echo", "userId": self.user,
                                                "sessionId": session_id or self.id,
                                                "newMessage": {"role": "user", "parts": [{"text": text}]}})
        assert answer.status_code == 200, answer.text[:300]
        return str(answer.json()[-1]["content"]["parts"][0]["text"])

    def unharmed(self) -> None:
        """Its committed events all there (nothing more), a turn on it and one on a
        new session of the same user answered."""
        assert self.stored() == self.events
        assert self.turn("after").startswith("echo: after")
        other = f"{self.id}-other"
        assert self.client.post(self.base, json={"sessionId": other}).status_code == 200
        assert self.turn("elsewhere", other).startswith("echo: elsewhere")


@pytest.fixture
def client(served: dict[str, Any]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served["url"], timeout=60) as http:
        yield http


# -- lone surrogates over HTTP -------------------------------------------------------------------


@pytest.mark.parametrize("content_type", CONTENT_TYPES)
def test_a_lone_surrogate_anywhere_in_a_body_is_a_422_whatever_its_content_type(
        client: httpx.Client, served: dict[str, Any], content_type: str | None) -> None:
    """However the body is labelled (a JSON type in any case, with a charset, none at
    all: FastAPI and a2a-sdk parse those too), ``"\\ud800"`` in a message's text, a
    function response, a state, a session id, an artifact, or an A2A message is a 422
    that names where, before anything is stored or run."""
    before = actors(served["port"])
    user = f"sur{CONTENT_TYPES.index(content_type)}"
    session = Session(client, user)
    base = session.base
    fr = f'{{"functionResponse": {{"name": "f", "id": "c1", "response": {{"r": "{SURROGATE}"}}}}}}'
    cases = [
        ("POST", "/run", run_body(user, "s1", message(f'{{"text": "hi {SURROGATE}"}}')), "newMessage.parts.0.text"),
        ("POST", "/run", run_body(user, "s1", message(fr)), "functionResponse.response.r"),
        ("POST", "/run", run_body(user, "s1", stateDelta=f'{{"k": "{SURROGATE}"}}'), "stateDelta.k"),
        ("POST", "/run", run_body(user, f"s{SURROGATE}"), "session id"),
        ("POST", "/run", run_body(f"u{SURROGATE}", "s1"), "user id"),
        ("POST", "/run_sse", run_body(user, "s1", message(f'{{"text": "{SURROGATE}"}}')), "newMessage"),
        ("POST", base, f'{{"sessionId": "s2", "state": {{"k": "{SURROGATE}"}}}}', "state.k"),
        ("POST", base, f'{{"sessionId": "s{SURROGATE}"}}', "session id"),
        ("PATCH", f"{base}/s1", f'{{"stateDelta": {{"{SURROGATE}": 1}}}}', "stateDelta"),
        ("POST", f"{base}/s1/artifacts", f'{{"filename": "a{SURROGATE}.txt", "artifact": {{"text": "x"}}}}',
         "artifact name"),
        ("POST", f"{base}/s1/artifacts", f'{{"filename": "a.txt", "artifact": {{"text": "{SURROGATE}"}}}}',
         "artifact.text"),
        ("POST", "/a2a/echo", a2a_send(f'{{"kind": "text", "text": "{SURROGATE}"}}'), "params.message.parts.0.text"),
        ("POST", "/a2a/echo", a2a_send('{"kind": "text", "text": "hi"}', contextId=f'"c{SURROGATE}"'),
         "params.message.contextId"),
    ]
    for method, path, body, where in cases:
        answer = send(client, method, path, body, content_type)
        refused(answer, 422, where, "surrogate")
    session.unharmed()
    assert sorted(s["id"] for s in client.get(base).json()) == ["s1", "s1-other"]
    assert client.get(f"{base}/s1/artifacts").json() == []
    assert actors(served["port"]) == before


# -- deep nesting over HTTP ----------------------------------------------------------------------


@pytest.mark.parametrize("depth", [10_000, 100_000])
@pytest.mark.parametrize("content_type", ["application/json", "application/JSON", None])
def test_deep_nesting_anywhere_in_a_body_is_a_422(client: httpx.Client, served: dict[str, Any], depth: int,
                                                  content_type: str | None) -> None:
    """State, a state delta, a function call's args, an artifact's metadata, an A2A data
    part nested 10,000 or 100,000 deep (past the JSON parser's own recursion): a 422
    naming the limit, never a 500 or a parser's message."""
    before = actors(served["port"])
    user = f"deep{depth}{'x' if content_type is None else content_type[-4:]}"
    session = Session(client, user)
    base = session.base
    deep = deep_json(depth)
    call_part = f'{{"functionCall": {{"name": "f", "args": {{"a": {deep}}}}}}}'
    cases = [
        ("PATCH", f"{base}/s1", f'{{"stateDelta": {{"k": {deep}}}}}'),
        ("POST", base, f'{{"sessionId": "s2", "state": {{"k": {deep}}}}}'),
        ("POST", "/run", run_body(user, "s1", stateDelta=f'{{"k": {deep}}}')),
        ("POST", "/run", run_body(user, "s1", message(call_part))),
        ("POST", "/run_sse", run_body(user, "s1", message(call_part))),
        ("POST", f"{base}/s1/artifacts", f'{{"filename": "a.txt", "artifact": {{"text": "x"}}, '
                                         f'"customMetadata": {{"k": {deep}}}}}'),
        ("POST", "/a2a/echo", a2a_send(f'{{"kind": "data", "data": {{"k": {deep}}}}}')),
        ("POST", "/run", deep),
    ]
    for method, path, body in cases:
        refused(send(client, method, path, body, content_type), 422, "nested deeper than 32")
    session.unharmed()
    assert sorted(s["id"] for s in client.get(base).json()) == ["s1", "s1-other"]
    assert actors(served["port"]) == before


def test_numbers_that_are_not_json_are_a_422(client: httpx.Client, served: dict[str, Any]) -> None:
    """``NaN`` and ``Infinity`` (Python's parser reads them; JSON has none: they were kept
    as ``null``, and failed an A2A task inside a2a-sdk) and an integer of 5,000 digits
    (past Python's int limit: FastAPI answered 400 "error parsing the body"): a 422
    naming what, nothing stored."""
    before = actors(served["port"])
    session = Session(client, "num")
    base = session.base
    digits = "1" * 5000
    for method, path, body, words in [
        ("PATCH", f"{base}/s1", '{"stateDelta": {"k": NaN}}', "NaN"),
        ("POST", base, '{"sessionId": "s2", "state": {"k": Infinity}}', "Infinity"),
        ("POST", "/run", run_body("num", "s1", stateDelta='{"k": -Infinity}'), "-Infinity"),
        ("POST", "/run", run_body("num", "s1", message('{"functionCall": {"name": "f", "args": {"x": NaN}}}')), "NaN"),
        ("POST", "/a2a/echo", a2a_send('{"kind": "data", "data": {"x": NaN}}'), "NaN"),
        ("PATCH", f"{base}/s1", f'{{"stateDelta": {{"k": {digits}}}}}', "5000 digits"),
    ]:
        refused(send(client, method, path, body, "application/json"), 422, words)
    assert client.patch(f"{base}/s1", json={"stateDelta": {"k": int("9" * 4300)}}).status_code == 200  # the limit
    assert client.get(f"{base}/s1").json()["state"]["k"] == int("9" * 4300)
    session.events = session.stored()
    session.unharmed()
    assert actors(served["port"]) == before


# -- huge values over HTTP -----------------------------------------------------------------------


def test_huge_values_over_http_are_a_413_naming_the_limit(client: httpx.Client, served: dict[str, Any]) -> None:
    """Over the body limit (a 50 MB text, a 50 MB state value, a 10 MB session id): 413
    at the door. Under it but over a limit of the request (a 1.5 MB text, 1.5 MB of
    state, 100,000 parts, even empty ones): 413 naming that limit. Nothing is stored."""
    before = actors(served["port"])
    session = Session(client, "huge")
    base = session.base
    fifty = "x" * 50_000_000
    over_state = "v" * (MAX_STATE_BYTES + 1000)
    over_body = [
        ("POST", "/run", run_body("huge", "s1", message(f'{{"text": "{fifty}"}}'))),
        ("PATCH", f"{base}/s1", f'{{"stateDelta": {{"big": "{fifty}"}}}}'),
        ("POST", base, f'{{"sessionId": "{"s" * 10_000_000}"}}'),
        ("POST", "/a2a/echo", a2a_send(f'{{"kind": "text", "text": "{fifty}"}}')),
    ]
    for method, path, body in over_body:
        refused(send(client, method, path, body, "application/json"), 413, "over 2097152 bytes")
    over_request = [
        ("POST", "/run", run_body("huge", "s1", message(f'{{"text": "{"x" * 1_500_000}"}}')), "1048576"),
        ("POST", "/run", run_body("huge", "s1", message(", ".join(["{}"] * 100_000))), f"{MAX_MESSAGE_PARTS}"),
        ("POST", "/run_sse", run_body("huge", "s1", message(", ".join(['{"text": "x"}'] * 100_000))),
         f"{MAX_MESSAGE_PARTS}"),
        ("POST", "/run", run_body("huge", "s1", stateDelta=f'{{"big": "{over_state}"}}'), f"{MAX_STATE_BYTES}"),
        ("PATCH", f"{base}/s1", f'{{"stateDelta": {{"big": "{over_state}"}}}}', f"{MAX_STATE_BYTES}"),
        ("POST", base, f'{{"sessionId": "s2", "state": {{"big": "{over_state}"}}}}', f"{MAX_STATE_BYTES}"),
        ("POST", f"{base}/s3", f'{{"big": "{over_state}"}}', f"{MAX_STATE_BYTES}"),  # deprecated: the body is the state
    ]
    for method, path, body, limit in over_request:
        refused(send(client, method, path, body, "application/json"), 413, limit)
    # A session id over the name grammar's 255 bytes, under the body limit: a 422; in
    # the path too, up to what the HTTP server (uvicorn) reads as a request line.
    refused(send(client, "POST", base, f'{{"sessionId": "{"s" * 1_000_000}"}}', "application/json"), 422,
            "session id must be 1 to 255 bytes")
    refused(client.get(f"{base}/{'s' * 60_000}"), 422, "session id must be 1 to 255 bytes")  # httpx's longest URL
    too_long = raw_status(served, f"{base}/{'s' * 10_000_000}")  # uvicorn's own 400, before the app
    assert too_long == 0 or 400 <= too_long < 500, too_long
    # State just under the limit is taken, and read back.
    under = "v" * (MAX_STATE_BYTES - 100)
    assert client.post(base, json={"sessionId": "s4", "state": {"big": under}}).status_code == 200
    assert client.get(f"{base}/s4").json()["state"]["big"] == under
    session.unharmed()
    assert sorted(s["id"] for s in client.get(base).json()) == ["s1", "s1-other", "s4"]
    assert actors(served["port"]) == before


def test_an_a2a_message_over_the_limit_fails_its_task_and_names_the_limit(client: httpx.Client,
                                                                          served: dict[str, Any]) -> None:
    """Under the body limit, over ``max_message_bytes`` or ``MAX_MESSAGE_PARTS``, or
    with a context id that cannot name a session: A2A's answer is the task, failed,
    saying why (never a JSON-RPC internal error); the next task runs."""
    before = actors(served["port"])
    for body, words in [(a2a_send(f'{{"kind": "text", "text": "{"x" * 1_500_000}"}}'),
                         ("LimitExceededError", "1048576")),
                        (a2a_send(", ".join(['{"kind": "text", "text": ""}'] * 5000)),
                         ("5000 parts", f"limit is {MAX_MESSAGE_PARTS}")),
                        (a2a_send('{"kind": "text", "text": "hi"}', contextId='"../x"'),
                         ("InvalidRequestError", "path separators"))]:
        answer = send(client, "POST", "/a2a/echo", body, "application/json")
        assert answer.status_code == 200, answer.text[:300]
        task = answer.json()["result"]
        assert task["status"]["state"] == "failed", task["status"]
        said = task["status"]["message"]["parts"][0]["text"]
        assert all(word in said for word in words), said
    fine = send(client, "POST", "/a2a/echo", a2a_send('{"kind": "text", "text": "hello"}'), "application/json")
    assert fine.json()["result"]["status"]["state"] == "completed", fine.text[:300]
    assert actors(served["port"]) == before


# -- in process: the host's Runner and a partition's message API (conftest's ``host``) -------------


def partition_state(host: Host) -> list[tuple[int, int]]:
    """Each partition's (pid, restarts)."""
    from adk_actors.chaos import tree_rows

    return sorted((row["pid"], row["restarts"]) for row in tree_rows(host, timeout=5.0) if row["type"] == "partition")


def test_the_host_runner_refuses_bad_input_typed_and_the_session_carries_on(host: Host) -> None:
    runner = host.runner("echo")
    runner.create_session("ann", "s1")
    assert list(runner.run("ann", "s1", "first"))[-1].content.text.startswith("echo: first")
    committed = runner.get_session("ann", "s1").events
    partitions = partition_state(host)
    surrogate = "\ud800"
    answer = Content(role="user", parts=[Part.model_validate(
        {"function_response": {"name": "f", "id": "c1", "response": {"r": surrogate}}})])
    genai = types.Content(role="user", parts=[types.Part(text=surrogate)])
    poisoned: list[tuple[Callable[[], Any], str]] = [
        (lambda: list(runner.run("ann", "s1", genai)), "surrogate"),
        (lambda: list(runner.run("ann", "s1", f"hi {surrogate}")), "surrogate"),
        (lambda: list(runner.run("ann", "s1", answer)), "function_response.response.r"),
        (lambda: list(runner.run("ann", "s1", "hi", state_delta={"k": surrogate})), "state_delta.k"),
        (lambda: runner.create_session("ann", "s2", {"k": surrogate}), "state.k"),
        (lambda: runner.create_session(f"a{surrogate}", "s2"), "user id"),
        (lambda: runner.create_session("ann", f"s{surrogate}"), "session id"),
        (lambda: runner.update_state("ann", "s1", {surrogate: 1}), "surrogate"),
        (lambda: runner.save_artifact("ann", "s1", f"a{surrogate}", Part(text="x")), "surrogate"),
        (lambda: runner.save_artifact("ann", "s1", "a.txt", Part(text=surrogate)), "surrogate"),
    ]
    for attempt, words in poisoned:
        with pytest.raises(InvalidRequestError, match=words):
            attempt()
    for depth in (10_000, 100_000):
        deep = deep_value(depth)
        calling = Content(role="user", parts=[Part.model_validate({"function_call": {"name": "f", "args": {"a": deep}}})])
        nested: list[Callable[[], Any]] = [lambda: runner.update_state("ann", "s1", {"k": deep}),
                                           lambda: runner.create_session("ann", "s2", {"k": deep}),
                                           lambda: list(runner.run("ann", "s1", "hi", state_delta={"k": deep})),
                                           lambda: list(runner.run("ann", "s1", calling))]
        for attempt in nested:
            with pytest.raises(InvalidRequestError, match="nested deeper than"):
                attempt()
    with pytest.raises(LimitExceededError, match="1048576"):
        list(runner.run("ann", "s1", "x" * 50_000_000))
    # Refused in this process, before it is sent: InvalidRequestError until _routing.checked
    # keeps the code of the refusal (LimitExceededError then, as the partition answers).
    over_a_limit = (InvalidRequestError, LimitExceededError)
    with pytest.raises(over_a_limit, match=f"limit is {MAX_MESSAGE_PARTS}"):
        list(runner.run("ann", "s1", Content(role="user", parts=[Part() for _ in range(100_000)])))
    with pytest.raises(InvalidRequestError, match="255 bytes"):
        runner.create_session("ann", "s" * 10_000_000)
    fifty = "v" * 50_000_000
    huge: list[Callable[[], Any]] = [lambda: runner.update_state("ann", "s1", {"big": fifty}),
                                     lambda: runner.create_session("ann", "s3", {"big": fifty}),
                                     lambda: list(runner.run("ann", "s1", "hi", state_delta={"big": fifty}))]
    for attempt in huge:
        with pytest.raises(over_a_limit, match=f"limit is {MAX_STATE_BYTES}"):
            attempt()
    assert runner.get_session("ann", "s1").events == committed
    assert [s.id for s in runner.list_sessions("ann")] == ["s1"]
    assert list(runner.run("ann", "s1", "after"))[-1].content.text.startswith("echo: after")
    runner.create_session("ann", "s5")
    assert list(runner.run("ann", "s5", "elsewhere"))[-1].content.text.startswith("echo: elsewhere")
    assert partition_state(host) == partitions


def test_a_google_genai_content_is_run_or_refused_saying_which_content(host: Host) -> None:
    """The host's Runner takes our Content (or text). google.genai's is either run (as
    google-adk's Runner would), or refused with a message that says which class it
    wanted and which it got (not "must be a Content, got Content"), nothing stored."""
    runner = host.runner("echo")
    runner.create_session("bea", "s1")
    try:
        events = list(runner.run("bea", "s1", types.Content(role="user", parts=[types.Part(text="hi")])))
    except InvalidRequestError as wrong:
        assert "adk_actors" in str(wrong) and "google.genai" in str(wrong), str(wrong)
        assert runner.get_session("bea", "s1").events == []
    else:
        assert events[-1].content.text.startswith("echo: hi")


def test_a_partition_answers_limit_exceeded_for_state_over_the_limit(host: Host) -> None:
    """The message API, past the Runner's own check: the partition answers
    ``limit_exceeded`` for a state or a state delta over ``MAX_STATE_BYTES`` and for a
    message of too many parts, and keeps its pid."""
    runner = host.runner("echo")
    runner.create_session("cy", "s1")
    partition = host.partition_for("echo", "cy", "s1")
    pid = call(host.system, partition, OsPid())
    big = {"big": "v" * (MAX_STATE_BYTES + 1)}
    for request in [CreateSession("echo", "cy", "s2", state=big), UpdateState("echo", "cy", "s1", state_delta=big),
                    RunRequest("echo", "cy", "s1", new_message=Content.user("hi"), state_delta=big),
                    RunRequest("echo", "cy", "s1", new_message=Content(
                        role="user", parts=[Part(text="x") for _ in range(MAX_MESSAGE_PARTS + 1)]))]:
        with pytest.raises(CallError) as refusal:
            call(host.system, partition, request, timeout=60)
        assert refusal.value.code == "limit_exceeded", (type(request).__name__, refusal.value)
    assert call(host.system, partition, OsPid()) == pid
    assert runner.get_session("cy", "s1").events == []
    assert [s.id for s in runner.list_sessions("cy")] == ["s1"]


# -- google-adk's in-process Runner (adk_actors.runners) -------------------------------------------


def _in_memory_turns(attempts: list[dict[str, Any]]) -> tuple[list[BaseException | None], list[str], str]:
    """Run ``attempts`` (run_async keywords) on an InMemoryRunner's session after one
    normal turn: what each raised (None: nothing), the session's event ids before,
    and the text of a last normal turn (or the error it raised)."""
    import runtime_agents

    from adk_actors.runners import InMemoryRunner

    runner = InMemoryRunner(runtime_agents.echo_agent, app_name="echo")

    async def go() -> tuple[list[BaseException | None], list[str], str]:
        await runner.session_service.create_session(app_name="echo", user_id="ann", session_id="s1")

        async def turn(**given: Any) -> list[Any]:
            return [e async for e in runner.run_async(user_id="ann", session_id="s1", **given)]

        await turn(new_message=types.Content(role="user", parts=[types.Part(text="first")]))
        session = await runner.session_service.get_session(app_name="echo", user_id="ann", session_id="s1")
        assert session is not None
        before = [e.id for e in session.events]
        raised: list[BaseException | None] = []
        for given in attempts:
            try:
                await asyncio.wait_for(turn(**given), 60)
                raised.append(None)
            except Exception as error:  # said by the test
                raised.append(error)
        try:
            events = await turn(new_message=types.Content(role="user", parts=[types.Part(text="after")]))
            last = str(events[-1].content.parts[0].text)
        except Exception as error:  # said by the test
            last = repr(error)
        return raised, before, last

    return asyncio.run(go())


def test_in_process_runner_refuses_deep_nesting_and_the_session_carries_on() -> None:
    hi = types.Content(role="user", parts=[types.Part(text="hi")])
    raised, _, last = _in_memory_turns([{"new_message": hi, "state_delta": {"k": deep_value(10_000)}},
                                        {"new_message": hi, "state_delta": {"k": deep_value(100_000)}}])
    assert all(isinstance(error, InvalidRequestError) for error in raised), raised
    assert last.startswith("echo: after"), last


def test_in_process_runner_refuses_lone_surrogates() -> None:
    raised, _, last = _in_memory_turns([
        {"new_message": types.Content(role="user", parts=[types.Part(text="\ud800")])},
        {"new_message": types.Content(role="user", parts=[types.Part(text="hi")]), "state_delta": {"k": "\ud800"}}])
    assert all(isinstance(error, InvalidRequestError) for error in raised), raised
    assert last.startswith("echo: after"), last


def test_json_text_of_the_cases_is_what_a_client_sends() -> None:
    """The bodies above are JSON a client can send: valid JSON, the surrogate decoded
    as one lone surrogate (so the host, not the test, is what refuses them)."""
    parsed = json.loads(run_body("ann", "s1", message(f'{{"text": "a{SURROGATE}"}}')))
    assert parsed["newMessage"]["parts"][0]["text"] == "a\ud800"
    assert json.loads(a2a_send('{"kind": "text", "text": "x"}'))["params"]["message"]["parts"] == [
        {"kind": "text", "text": "x"}]
    with pytest.raises(RecursionError):
        json.loads(deep_json(100_000))
