"""The edge (issue 30): poisoned input never crashes an actor, never poisons a stored
session, never wedges a partition; through HTTP (a real ``serve``) and through the
message API (a real host's actors), with a storm of it while other users talk.

Poison: text that cannot be encoded (a lone surrogate, a valid JSON escape), values
nested hundreds of levels deep, names that are paths or hold control characters, and
stored rows that cannot be read back (an older version's, or corrupted).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import serving

from adk_actors import (
    Content,
    InvalidRequestError,
    Part,
    RunFailedError,
    SessionUnreadableError,
)
from adk_actors.messages import CreateSession, ListSessions, RunRequest, UpdateState
from adk_actors.runtime import Host
from adk_actors.runtime._service_calls import SaveArtifact
from adk_actors.store import SQLiteSessionStore, Unstorable
from supervision import CallError, call
from supervision.protocol import OsPid
from supervision.testing import wait_until

APPS = ('weather_bot = "examples.weather_bot.agent:root_agent"\n'
        'notes = "runtime_agents:notes_agent"\n')
SURROGATE = "\\ud800"  # as it is written in JSON: a valid escape of an unencodable character


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"a": value}
    return value


def nested_json(depth: int) -> str:
    """``nested(depth)`` as JSON text, written out (json.dumps recurses, and would fail
    past Python's recursion limit: a client in another language would not)."""
    return '{"a":' * depth + '"leaf"' + "}" * depth


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with serving(tmp_path_factory.mktemp("edge"), "partitions = 2\n", apps=APPS) as info:
        assert info["url"], info["out"].read_text()
        yield info


def actor_pids(served: dict[str, Any]) -> dict[str, int]:
    """Every actor of the served host, by path (a crash would change one)."""
    host = Host.connect(served["port"])
    try:
        from adk_actors.chaos import tree_rows

        return {row["path"]: row["pid"] for row in tree_rows(host, timeout=5.0) if row["pid"]}
    finally:
        host.disconnect()


def raw(client: httpx.Client, method: str, path: str, text: str) -> httpx.Response:
    """A request whose JSON body is sent exactly as written."""
    return client.request(method, path, content=text.encode(), headers={"content-type": "application/json"})


def run_body(user: str, session: str, text: str = "hi", **more: str) -> str:
    extra = "".join(f', "{k}": {v}' for k, v in more.items())
    return (f'{{"appName": "weather_bot", "userId": "{user}", "sessionId": "{session}", '
            f'"newMessage": {{"role": "user", "parts": [{{"text": "{text}"}}]}}{extra}}}')


def assert_refused(answer: httpx.Response, *words: str) -> None:
    """A typed 4xx: JSON ``{"detail": ...}`` that says what was wrong, no internals."""
    assert 400 <= answer.status_code < 500, (answer.status_code, answer.text[:300])
    detail = answer.json()["detail"]
    text = json.dumps(detail)
    for word in words:
        assert word in text, (word, text[:300])
    assert "Traceback" not in text and "pydantic" not in text.lower()


# -- through HTTP --------------------------------------------------------------------------------


def test_unencodable_text_anywhere_is_a_422_and_nothing_is_stored(client: httpx.Client,
                                                                  served: dict[str, Any]) -> None:
    before = actor_pids(served)
    assert client.post("/apps/weather_bot/users/ann/sessions", json={"sessionId": "s1"}).status_code == 200
    base = "/apps/weather_bot/users/ann/sessions"
    cases = [
        ("POST", "/run", run_body("ann", "s1", f"hi {SURROGATE}"), "newMessage.parts.0.text"),
        ("POST", "/run_sse", run_body("ann", "s1", f"hi {SURROGATE}"), "newMessage"),
        ("POST", "/run", run_body("ann", "s1", stateDelta=f'{{"k": "{SURROGATE}"}}'), "stateDelta.k"),
        ("POST", "/run", run_body("ann", "s1", customMetadata=f'{{"{SURROGATE}": 1}}'), "customMetadata"),
        ("POST", base, f'{{"sessionId": "s2", "state": {{"k{SURROGATE}": "v"}}}}', "state"),
        ("POST", base, f'{{"sessionId": "s{SURROGATE}"}}', "session id"),
        ("PATCH", f"{base}/s1", f'{{"stateDelta": {{"a": ["ok", "{SURROGATE}"]}}}}', "stateDelta.a.1"),
        ("POST", f"{base}/s1/artifacts", f'{{"filename": "n{SURROGATE}.txt", "artifact": {{"text": "x"}}}}',
         "artifact name"),
        ("POST", f"{base}/s1/artifacts", f'{{"filename": "n.txt", "artifact": {{"text": "x{SURROGATE}"}}}}',
         "artifact.text"),
        ("PATCH", "/apps/weather_bot/users/ann/memory", f'{{"sessionId": "s{SURROGATE}"}}', "session id"),
    ]
    for method, path, body, where in cases:
        answer = raw(client, method, path, body)
        assert answer.status_code == 422, (method, path, answer.status_code, answer.text[:200])
        assert_refused(answer, where, "surrogate")
    session = client.get(f"{base}/s1").json()
    assert session["events"] == [] and session["state"] == {}  # nothing of any of them was stored
    assert [s["id"] for s in client.get(base).json()] == ["s1"]
    assert client.get(f"{base}/s1/artifacts").json() == []
    assert actor_pids(served) == before  # no actor crashed


@pytest.mark.parametrize("depth", [33, 200, 600, 900, 5000])
def test_deep_nesting_anywhere_is_a_422_never_a_500(client: httpx.Client, served: dict[str, Any], depth: int) -> None:
    base = f"/apps/weather_bot/users/bea{depth}/sessions"
    client.post(base, json={"sessionId": "b1"})
    deep = nested_json(depth)
    cases = [
        ("POST", base, f'{{"sessionId": "deep{depth}", "state": {deep}}}'),
        ("PATCH", f"{base}/b1", f'{{"stateDelta": {{"x": {deep}}}}}'),
        ("POST", "/run", run_body(f"bea{depth}", "b1", stateDelta=f'{{"x": {deep}}}')),
        ("POST", "/run", run_body(f"bea{depth}", "b1", customMetadata=deep)),
        ("POST", f"{base}/b1/artifacts", f'{{"filename": "d.txt", "artifact": {{"text": "x"}}, '
                                         f'"customMetadata": {deep}}}'),
    ]
    for method, path, body in cases:
        answer = raw(client, method, path, body)
        assert answer.status_code == 422, (method, path, depth, answer.status_code, answer.text[:200])
        assert_refused(answer, "nested deeper than 32")
    assert [s["id"] for s in client.get(base).json()] == ["b1"]
    assert client.get(f"{base}/b1").json()["events"] == []
    # 32 levels is the limit ([limits] max_json_depth): accepted, stored, read back.
    assert client.patch(f"{base}/b1", json={"stateDelta": {"x": nested(31)}}).status_code == 200
    assert client.get(f"{base}/b1").json()["state"]["x"] == nested(31)


@pytest.mark.parametrize("name", ["../../x", "..", ".", "/tmp/x", "a\\\\b", "a\u0000b", "line\nbreak", "x" * 256,
                                  "\u00e9" * 128])
def test_names_outside_the_grammar_are_refused_where_they_are_created(client: httpx.Client, name: str) -> None:
    """Session ids in a body (create, run, memory) and artifact names: 422, nothing stored."""
    base = "/apps/weather_bot/users/cy/sessions"
    client.post(base, json={"sessionId": "c1"})
    for method, path, body in [("POST", base, {"sessionId": name}),
                               ("POST", "/run", {"appName": "weather_bot", "userId": "cy", "sessionId": name,
                                                 "newMessage": {"role": "user", "parts": [{"text": "hi"}]}}),
                               ("POST", "/run", {"appName": "weather_bot", "userId": name, "sessionId": "c1",
                                                 "newMessage": {"role": "user", "parts": [{"text": "hi"}]}}),
                               ("POST", f"{base}/c1/artifacts", {"filename": name, "artifact": {"text": "x"}})]:
        answer = client.request(method, path, json=body)
        assert answer.status_code == 422, (method, path, repr(name)[:40], answer.status_code, answer.text[:200])
    assert [s["id"] for s in client.get(base).json()] == ["c1"]
    assert client.get(f"{base}/c1/artifacts").json() == []


def test_names_in_the_path_are_checked_and_nothing_is_redirected(served: dict[str, Any]) -> None:
    """Raw paths, as a client that does not normalize them sends them."""
    import socket

    port = int(served["url"].rsplit(":", 1)[1])

    def status(path: str) -> int:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
            connection.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
            head = b""
            while b"\r\n" not in head:
                chunk = connection.recv(4096)
                if not chunk:
                    break
                head += chunk
        return int(head.split()[1])

    base = "/apps/weather_bot/users"
    for path in [f"{base}/../sessions", f"{base}/%2e%2e/sessions", f"{base}/a%00b/sessions",
                 f"{base}/dee/sessions/..", f"{base}/dee/sessions/%0a", f"{base}/{'x' * 300}/sessions",
                 f"{base}/dee/sessions/s1/artifacts/..", f"{base}/dee/sessions/s1/artifacts/%2e%2e",
                 f"{base}/dee/sessions/s1/artifacts/%2e%2e%2f", f"{base}/dee/sessions/s1/artifacts/a%2f..%2f..",
                 f"{base}/dee/sessions/s1/artifacts/%2e%2e/versions/0", f"{base}/dee/sessions/s1/artifacts/x/"]:
        code = status(path)
        assert 400 <= code < 500, (path, code)  # a typed refusal or not found: never a redirect, never a 5xx


def test_a_live_runs_poisoned_frame_closes_its_socket_with_a_reason(client: httpx.Client,
                                                                    served: dict[str, Any]) -> None:
    """``/run_live`` frames do not pass the HTTP guard's body check: a frame with a lone
    surrogate, or nested too deep, is refused by the input rules, the socket closes
    with 1007 and the reason, nothing of it is stored, and the session serves on."""
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    client.post("/apps/weather_bot/users/liv/sessions", json={"sessionId": "l1"})
    url = served["url"].replace("http://", "ws://") + "/run_live?app_name=weather_bot&user_id=liv&session_id=l1"
    for frame, words in [(f'{{"content": {{"role": "user", "parts": [{{"text": "x {SURROGATE}"}}]}}}}',
                          "not a LiveRequest"),  # pydantic's JSON reader refuses it first
                         ('{"content": {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": '
                          + nested_json(50) + "}}]}}", "nested deeper than 32")]:
        with connect(url) as socket:
            socket.send(frame)
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    socket.recv(timeout=15)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1007, closed.value.rcvd
        assert words in closed.value.rcvd.reason
    assert client.get("/apps/weather_bot/users/liv/sessions/l1").json()["events"] == []
    answer = client.post("/run", content=run_body("liv", "l1", "Weather in Paris?").encode(),
                         headers={"content-type": "application/json"})
    assert answer.status_code == 200, answer.text


def test_every_refusal_is_typed_json_without_internals(client: httpx.Client) -> None:
    """Malformed bodies of every kind: FastAPI's own 422s no longer echo the input (whose
    text may not even encode), and no answer is a bare 500."""
    for method, path, body in [("POST", "/run", "{"), ("POST", "/run", "[1, 2]"), ("POST", "/run", '"text"'),
                               ("POST", "/run", '{"appName": 1}'), ("PATCH", "/apps/weather_bot/users/eve/sessions/e1",
                                                                      '{"stateDelta": "not an object"}'),
                               ("POST", "/run", '{"appName": "weather_bot", "userId": "eve", "sessionId": "e1", '
                                                f'"newMessage": {{"role": "user", "parts": [{{"text": 3, '
                                                f'"x": "{SURROGATE}"}}]}}}}')]:
        answer = raw(client, method, path, body)
        assert 400 <= answer.status_code < 500 and "detail" in answer.json(), (path, answer.status_code, answer.text)
        assert "input" not in json.dumps(answer.json()), answer.text


# -- through the message API (conftest's ``host``: two partitions, the runtime test apps) ----------


def test_the_message_api_refuses_the_same_poison_and_its_actors_keep_their_pids(host: Host) -> None:
    runner = host.runner("echo")
    runner.create_session("ann", "s1")
    partition = host.partition_for("echo", "ann", "s1")
    pid = call(host.system, partition, OsPid())
    artifacts = host.services().child("artifacts")
    poisoned: list[Any] = [
        RunRequest("echo", "ann", "s1", new_message=Content.user("hi \ud800")),
        RunRequest("echo", "ann", "s1", new_message=Content.user("hi"), state_delta={"x": nested(40)}),
        CreateSession("echo", "ann", "s2", state={"k": "v\udfff"}),
        CreateSession("echo", "ann", "../s3"),
        CreateSession("echo", "ann", "x" * 300),
        UpdateState("echo", "ann", "s1", state_delta={"deep": nested(60)}),
        UpdateState("echo", "ann", "s1", state_delta={"k\ud800": 1}),
        ListSessions("echo", "a/b"),
    ]
    for request in poisoned:
        target = partition if not isinstance(request, ListSessions) else host.partitions()[0]
        with pytest.raises(CallError) as refused:
            call(host.system, target, request)
        assert refused.value.code == "invalid_request", request
    for request in [SaveArtifact("echo", "ann", "s1", "n\ud800", Part(text="x")),
                    SaveArtifact("echo", "ann", "s1", "a.txt", Part(text="x\ud800")),
                    SaveArtifact("echo", "ann", "s1", "a.txt", Part(text="x"), custom_metadata=nested(200))]:
        with pytest.raises(CallError) as refused:
            call(host.system, artifacts.address, request)
        assert refused.value.code == "invalid_request"
    with pytest.raises(InvalidRequestError, match="session id"):
        runner.create_session("ann", "..")
    with pytest.raises(InvalidRequestError, match="nested deeper than 100"):  # refused before it is pickled
        runner.update_state("ann", "s1", {"deep": nested(5000)})
    with pytest.raises(InvalidRequestError, match="surrogate"):
        list(runner.run("ann", "s1", "x \ud800"))
    assert call(host.system, partition, OsPid()) == pid
    assert host.services().child("artifacts").pid == artifacts.pid
    assert [s.id for s in runner.list_sessions("ann")] == ["s1"]
    assert runner.get_session("ann", "s1").events == []
    assert list(runner.run("ann", "s1", "still fine"))[-1].content.text.startswith("echo: still fine")


def test_a_failure_inside_a_partition_is_answered_and_harms_only_that_session(host: Host, tmp_path: Path) -> None:
    """A damaged store (its ``runs`` table gone) makes a turn fail inside the partition:
    the caller gets a typed ``InternalError`` without internals, that session is
    dropped (and counted as crashed), the partition keeps its pid and its other
    sessions read on."""
    from adk_actors import InternalError

    runner = host.runner("echo")
    runner.create_session("ian", "i1")
    runner.create_session("jo", "j1")
    list(runner.run("jo", "j1", "hello"))
    pids = partition_pids(host)
    database = sqlite3.connect(tmp_path / "data" / "sessions.db", isolation_level=None)
    try:
        database.execute("DROP TABLE runs")
    finally:
        database.close()
    with pytest.raises(InternalError) as failed:
        list(runner.run("ian", "i1", "hi"))
    assert "OperationalError" not in str(failed.value) and "sqlite" not in str(failed.value).lower()
    assert partition_pids(host) == pids
    assert runner.get_session("jo", "j1").events[-1].content.text.startswith("echo: hello")
    from adk_actors.chaos import tree_rows

    crashed = next(r for r in tree_rows(host) if r["type"] == "session" and r["session"] == "i1")
    assert crashed["restarts"] == 1 and "OperationalError" in crashed["last_exit"]  # the operator sees why


def test_a_file_system_failure_is_answered_and_the_artifact_actor_serves_on(host: Host, tmp_path: Path) -> None:
    """A user's artifact folder is a file (a damaged data folder): that user's save is a
    typed error; the actor keeps its pid and serves everyone else."""
    from adk_actors import InternalError

    runner = host.runner("notes")
    runner.create_session("gil", "g1")
    runner.create_session("hal", "h1")
    assert runner.save_artifact("hal", "h1", "a.txt", Part(text="one")) == 0
    pid = host.services().child("artifacts").pid
    (tmp_path / "data" / "artifacts" / "notes").mkdir(parents=True, exist_ok=True)
    (tmp_path / "data" / "artifacts" / "notes" / "gil").write_text("not a folder")
    with pytest.raises(InternalError, match="artifact store could not"):
        runner.save_artifact("gil", "g1", "a.txt", Part(text="lost?"))
    assert host.services().child("artifacts").pid == pid
    assert runner.save_artifact("hal", "h1", "a.txt", Part(text="two")) == 1
    assert runner.load_artifact("hal", "h1", "a.txt").text == "two"


def test_a_tool_result_the_store_cannot_read_back_fails_that_run_only(host: Host) -> None:
    """A run that makes an event the store would refuse (a tool returning a value nested
    300 deep, or unencodable text) ends typed (``error``, ``Unstorable``); nothing of it
    past the user's message is stored, and the session and its partition carry on."""
    runner = host.runner("poisoner")
    runner.create_session("ann", "p1")
    pid = call(host.system, host.partition_for("poisoner", "ann", "p1"), OsPid())
    for kind in ("deep", "text"):
        with pytest.raises(RunFailedError) as failed:
            list(runner.run("ann", "p1", f"poison {kind}"))
        assert failed.value.reason == "error" and failed.value.error_type == "Unstorable", (kind, failed.value)
    assert list(runner.run("ann", "p1", "hello"))[-1].content.text == "fine: hello"
    assert call(host.system, host.partition_for("poisoner", "ann", "p1"), OsPid()) == pid
    for partition in host.partitions():  # reloaded from the store: every stored event reads back
        os.kill(call(host.system, partition, OsPid()), signal.SIGKILL)
    events = wait_until(lambda: runner.get_session("ann", "p1").events, timeout=30)
    assert events[-1].content.text == "fine: hello"


def partition_pids(host: Host) -> list[int]:
    """The partitions' pids, once every one answers (asked from an endpoint of its own)."""
    def ask() -> list[int]:
        with host.system.private() as endpoint:
            return [call(endpoint, p, OsPid(), timeout=2) for p in host.partitions(refresh=True)]

    pids: list[int] = wait_until(ask, timeout=30)
    return pids


def test_a_stored_session_that_cannot_be_read_harms_only_itself(host: Host, tmp_path: Path) -> None:
    """Rows written by an older version (an event nested 250 deep; a state nested 300
    deep) or corrupted: reading that session is a typed error; the user's list, the
    partition and the other sessions are unharmed, and the session can be deleted."""
    runner = host.runner("echo")
    for session in ("good", "old-event", "old-state", "torn"):
        runner.create_session("fay", session)
    list(runner.run("fay", "good", "hello"))
    database = sqlite3.connect(tmp_path / "data" / "sessions.db", isolation_level=None)
    try:
        event = {"id": "e-old", "author": "user", "invocationId": "i", "timestamp": 1.0,
                 "actions": {"stateDelta": {"x": "__DEEP__"}}}
        text = json.dumps(event).replace('"__DEEP__"', nested_json(250))
        database.execute("INSERT INTO events VALUES ('e-old', 'echo', 'fay', 'old-event', 1, 'i', 'user', 1.0, ?)",
                         (text,))
        database.execute("UPDATE sessions SET state=? WHERE id='old-state'", (f'{{"x": {nested_json(300)}}}',))
        database.execute("INSERT INTO events VALUES ('e-torn', 'echo', 'fay', 'torn', 1, 'i', 'user', 1.0, '{\"id\":')")
    finally:
        database.close()
    for partition in host.partitions():  # as a host started on that file: sessions read from the store
        os.kill(call(host.system, partition, OsPid()), signal.SIGKILL)
    wait_until(lambda: runner.get_session("fay", "good").events, timeout=30)
    pids = partition_pids(host)
    for session in ("old-event", "old-state", "torn"):
        with pytest.raises(SessionUnreadableError, match=session):
            runner.get_session("fay", session)
        with pytest.raises(SessionUnreadableError):
            list(runner.run("fay", session, "hi"))
    listed = {s.id: s.state for s in runner.list_sessions("fay")}
    assert set(listed) == {"good", "old-event", "old-state", "torn"} and listed["old-state"] == {}
    assert partition_pids(host) == pids
    assert list(runner.run("fay", "good", "again"))[-1].content.text.startswith("echo: again")
    runner.delete_session("fay", "old-event")
    assert {s.id for s in runner.list_sessions("fay")} == {"good", "old-state", "torn"}


def test_the_store_refuses_what_it_could_not_read_back(tmp_path: Path) -> None:
    from adk_actors import Event, EventActions

    store = SQLiteSessionStore(tmp_path / "s.db")
    store.create_session("app", "u", "s1", {"k": "v"})
    with pytest.raises(Unstorable):
        store.create_session("app", "u", "s2", {"k": "\ud800"})
    with pytest.raises(Unstorable):
        store.append_events("app", "u", "s1", [Event(author="user", actions=EventActions(state_delta={"x": nested(160)}))])
    with pytest.raises(Unstorable):
        store.append_events("app", "u", "s1", [Event(author="model", content=Content.user("bad \udc00"))])
    assert [s.id for s in store.list_sessions("app", "u")] == ["s1"]
    session = store.get_session("app", "u", "s1")
    assert session.events == [] and session.state == {"k": "v"}
    store.append_events("app", "u", "s1", [Event(author="user", actions=EventActions(state_delta={"x": nested(90)}))])
    assert store.get_session("app", "u", "s1").state["x"] == nested(90)  # what it took, it reads back


# -- a storm ---------------------------------------------------------------------------------------


def test_a_storm_of_poison_while_other_users_talk(served: dict[str, Any]) -> None:
    """Many users send poisoned requests at once (80 at a time, six each at least and on
    until every bystander was answered meanwhile) while other users talk:
    every poisoned request gets a 4xx, no bystander turn fails, every bystander has a
    turn answered while the storm lasts (the poison blocks no partition; how long such
    turns take is measured by ``bench/poison_storm.py``, not here), no actor dies, and
    after every partition reloads from the store every session and list reads."""
    url = served["url"]
    before = actor_pids(served)
    bystanders = [f"by{i}" for i in range(4)]
    with httpx.Client(base_url=url, timeout=30) as setup:
        for user in bystanders:
            assert setup.post(f"/apps/weather_bot/users/{user}/sessions", json={"sessionId": "talk"}).status_code == 200
    poisons = [("POST", "/run", run_body("{user}", "talk", f"x {SURROGATE}")),
               ("POST", "/apps/weather_bot/users/{user}/sessions", f'{{"sessionId": "s{SURROGATE}"}}'),
               ("PATCH", "/apps/weather_bot/users/{user}/sessions/talk", f'{{"stateDelta": {nested_json(900)}}}'),
               ("POST", "/apps/weather_bot/users/{user}/sessions", f'{{"sessionId": "d", "state": {nested_json(200)}}}'),
               ("POST", "/apps/weather_bot/users/{user}/sessions", '{"sessionId": "../../etc"}'),
               ("POST", "/apps/weather_bot/users/{user}/sessions/talk/artifacts",
                f'{{"filename": "a{SURROGATE}", "artifact": {{"text": "x"}}}}')]
    answers: list[int] = []
    bystander_turns: list[tuple[str, bool, float, float]] = []  # user, answered, began, ended
    stop = threading.Event()
    lock = threading.Lock()

    def attacker(n: int) -> None:
        with httpx.Client(base_url=url, timeout=30) as http:
            round_ = 0
            # Six rounds each, and on until every bystander was answered meanwhile (60 s at most).
            while round_ < 6 or (not all_answered_in_storm() and time.monotonic() - storm_began < 60):
                method, path, body = poisons[(n + round_) % len(poisons)]
                round_ += 1
                user = f"evil{n}"
                answer = raw(http, method, path.replace("{user}", user), body.replace("{user}", user))
                with lock:
                    answers.append(answer.status_code)
                    storm_ended[0] = max(storm_ended[0], time.monotonic())

    def bystander(user: str) -> None:
        with httpx.Client(base_url=url, timeout=30) as http:
            turn = 0
            while not stop.is_set() or turn < 3:
                began = time.monotonic()
                answer = http.post("/run", json={"appName": "weather_bot", "userId": user, "sessionId": "talk",
                                                 "newMessage": {"role": "user", "parts": [{"text": f"Weather {turn}?"}]}})
                ok = answer.status_code == 200 and answer.json()[-1]["content"]["parts"][0]["text"]
                with lock:
                    bystander_turns.append((user, bool(ok), began, time.monotonic()))
                turn += 1

    talkers = [threading.Thread(target=bystander, args=(u,)) for u in bystanders]
    attackers = [threading.Thread(target=attacker, args=(n,)) for n in range(80)]
    storm_ended = [0.0]  # when the last poisoned request was answered

    def all_answered_in_storm() -> bool:
        with lock:
            return {user for user, ok, began, _ in bystander_turns if ok and began >= storm_began} == set(bystanders)

    for thread in talkers:
        thread.start()
    wait_until(lambda: len({user for user, *_ in bystander_turns}) == len(bystanders), timeout=30)
    storm_began = time.monotonic()
    for thread in attackers:
        thread.start()
    for thread in attackers:
        thread.join(120)
    stop.set()
    for thread in talkers:
        thread.join(120)
    assert len(answers) >= 80 * 6 and all(400 <= code < 500 for code in answers), sorted(set(answers))
    assert bystander_turns and all(ok for _, ok, _, _ in bystander_turns), bystander_turns
    # Each bystander was answered while the storm lasted: a turn that began after the
    # first poisoned request and ended before the last one was answered.
    within = {user for user, _, began, ended in bystander_turns if storm_began <= began and ended <= storm_ended[0]}
    assert within == set(bystanders), (f"storm {storm_ended[0] - storm_began:.2f} s; answered in it: {sorted(within)}",
                                       [(u, round(b - storm_began, 2), round(e - storm_began, 2))
                                        for u, _, b, e in bystander_turns])
    assert actor_pids(served) == before  # nothing crashed
    host = Host.connect(served["port"])
    try:
        for partition in host.partitions():  # every partition reloads its sessions from the store
            os.kill(call(host.system, partition, OsPid()), signal.SIGKILL)
    finally:
        host.disconnect()
    with httpx.Client(base_url=url, timeout=30) as after:
        for user in [*bystanders, *(f"evil{n}" for n in range(80))]:
            listed = wait_until(lambda: after.get(f"/apps/weather_bot/users/{user}/sessions"), timeout=30)
            assert listed.status_code == 200, listed.text
            for session in listed.json():
                assert after.get(f"/apps/weather_bot/users/{user}/sessions/{session['id']}").status_code == 200
        assert {s["id"] for s in after.get("/apps/weather_bot/users/by0/sessions").json()} == {"talk"}
