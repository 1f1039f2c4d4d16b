"""Every app of a host is an A2A agent at ``/a2a/{app}`` (issue 32), tried with the
official a2a-sdk client: the card, a task sent and streamed, a context that is a
session, a task cancelled and one whose partition is killed mid-stream (both end in a
terminal state the client sees, and GetTask answers afterwards), bad JSON-RPC (the
protocol's error codes, never a 500), the tokens of the HTTP API (a user sees
only its own tasks), and tasks that outlive the HTTP server process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from conftest import serving

pytest.importorskip("a2a")
from a2a.client import ClientConfig, create_client
from a2a.client.errors import A2AClientError
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    TaskState,
)
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.struct_pb2 import Value

from adk_actors.messages import LiveWorkers
from adk_actors.runtime import Host
from supervision import call
from supervision.protocol import OsPid
from supervision.testing import wait_until

APPS = ('weather_bot = "examples.weather_bot.agent:root_agent"\nsleepy = "runtime_agents:sleepy_agent"\n'
        'hitl = "examples.hitl.agent:root_agent"\ncalendar = "runtime_agents:calendar_agent"\n')
ANN, BOB = "ann-token-0123456789abcdef", "bob-token-0123456789abcdef"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A served host; its A2A routes loaded by one card request first (the first A2A
    request imports a2a-sdk: http/_lazy.py; at load that took over 10 s on CI), with a
    deadline for a loaded machine: these tests assert what A2A answers, not how soon."""
    with serving(tmp_path_factory.mktemp("a2a"), apps=APPS) as running:
        loaded = httpx.get(f"{running['url']}/a2a/weather_bot/.well-known/agent-card.json", timeout=120)
        assert loaded.status_code == 200, loaded.text
        yield running


def message(text: str, context_id: str = "", task_id: str = "") -> SendMessageRequest:
    return SendMessageRequest(message=Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER,
                                              parts=[Part(text=text)], context_id=context_id, task_id=task_id))


async def responses(url: str, request: SendMessageRequest, *, streaming: bool = True,
                    headers: dict[str, str] | None = None) -> list[StreamResponse]:
    async with httpx.AsyncClient(timeout=30, headers=headers) as http:
        client = await create_client(url, ClientConfig(streaming=streaming, httpx_client=http))
        return [r async for r in client.send_message(request)]


def final_task(got: list[StreamResponse]) -> Any:
    tasks = [r.task for r in got if r.HasField("task")]
    return tasks[-1] if tasks else None


def states(got: list[StreamResponse]) -> list[str]:
    return [TaskState.Name(r.status_update.status.state) for r in got if r.HasField("status_update")]


def test_the_card_names_the_app_its_skills_and_its_json_rpc_url(served: dict[str, Any]) -> None:
    card = httpx.get(f"{served['url']}/a2a/weather_bot/.well-known/agent-card.json", timeout=10).json()
    assert card["name"] == "weather_bot" and card["capabilities"]["streaming"] is True
    assert card["supportedInterfaces"] == [{"url": f"{served['url']}/a2a/weather_bot", "protocolBinding": "JSONRPC",
                                            "protocolVersion": "1.0"}]
    assert {"weather_bot", "get_weather"} <= {skill["name"] for skill in card["skills"]}
    assert httpx.get(f"{served['url']}/a2a/nobody/.well-known/agent-card.json", timeout=10).status_code == 404


def test_a_task_sent_and_one_streamed_end_completed_with_the_agents_answer(served: dict[str, Any]) -> None:
    url = f"{served['url']}/a2a/weather_bot"
    sent = asyncio.run(responses(url, message("What's the weather in Paris?"), streaming=False))
    task = final_task(sent)
    assert task is not None and task.status.state == TaskState.TASK_STATE_COMPLETED
    answer = task.artifacts[-1].parts[0].text
    assert "Paris" in answer and task.history[0].parts[0].text == "What's the weather in Paris?"

    streamed = asyncio.run(responses(url, message("What's the weather in Oslo?")))
    assert streamed[0].HasField("task") and streamed[0].task.status.state == TaskState.TASK_STATE_SUBMITTED
    assert states(streamed)[0] == "TASK_STATE_WORKING" and states(streamed)[-1] == "TASK_STATE_COMPLETED"
    artifacts = [r.artifact_update for r in streamed if r.HasField("artifact_update")]
    assert len(artifacts) == 1 and "Oslo" in artifacts[0].artifact.parts[0].text
    tool_calls = [p for r in streamed if r.HasField("status_update")
                  for p in r.status_update.status.message.parts if p.HasField("data")]
    assert tool_calls and tool_calls[0].metadata["adk_type"] == "function_call"


def test_a_context_is_a_session_that_later_tasks_continue(served: dict[str, Any]) -> None:
    url = f"{served['url']}/a2a/weather_bot"
    first = final_task(asyncio.run(responses(url, message("Weather in Rome?"), streaming=False)))
    again = final_task(asyncio.run(responses(url, message("And in Paris?", first.context_id), streaming=False)))
    assert again.context_id == first.context_id and again.id != first.id
    session = httpx.get(f"{served['url']}/apps/weather_bot/users/A2A_USER_{first.context_id}/sessions/"
                        f"{first.context_id}", timeout=10).json()
    said = [e["content"]["parts"][0].get("text") for e in session["events"] if e["author"] == "user"
            and "text" in e["content"]["parts"][0]]
    assert said == ["Weather in Rome?", "And in Paris?"]


async def _stream_until_working(url: str, text: str, then: Any) -> list[StreamResponse]:
    """Stream a task; once the run's tool call has come (the run is in its tool), call
    ``then(task_id, context_id)``; every response until the stream ends."""
    got: list[StreamResponse] = []
    async with httpx.AsyncClient(timeout=30) as http:
        client = await create_client(url, ClientConfig(streaming=True, httpx_client=http))
        stream: AsyncIterator[StreamResponse] = client.send_message(message(text))
        done = False
        async for response in stream:
            got.append(response)
            update = response.status_update if response.HasField("status_update") else None
            if not done and update is not None and any(p.HasField("data") for p in update.status.message.parts):
                done = True
                await then(client, update.task_id, update.context_id)
    return got


def test_a_cancelled_task_ends_canceled_and_its_run_ends_on_the_host(served: dict[str, Any]) -> None:
    url = f"{served['url']}/a2a/sleepy"
    seen: dict[str, Any] = {}

    async def cancel(client: Any, task_id: str, context_id: str) -> None:
        seen["task"], seen["context"] = task_id, context_id
        seen["canceled"] = await client.cancel_task(CancelTaskRequest(id=task_id))

    got = asyncio.run(_stream_until_working(url, "sleep 3", cancel))
    assert seen["canceled"].status.state == TaskState.TASK_STATE_CANCELED
    assert states(got)[-1] == "TASK_STATE_CANCELED"

    async def get() -> Any:
        async with httpx.AsyncClient(timeout=30) as http:
            client = await create_client(url, ClientConfig(httpx_client=http))
            return await client.get_task(GetTaskRequest(id=seen["task"]))

    assert asyncio.run(get()).status.state == TaskState.TASK_STATE_CANCELED
    session = f"{served['url']}/apps/sleepy/users/A2A_USER_{seen['context']}/sessions/{seen['context']}"
    # the run was cancelled, not left to sleep: the session takes a new turn at once
    wait_until(lambda: httpx.post(f"{served['url']}/run", timeout=10, json={
        "appName": "sleepy", "userId": f"A2A_USER_{seen['context']}", "sessionId": seen["context"],
        "newMessage": {"role": "user", "parts": [{"text": "hi"}]}}).status_code == 200, timeout=2.5)
    texts = [p.get("text") for e in httpx.get(session, timeout=10).json()["events"] for p in e["content"]["parts"]]
    assert "woke up" not in texts


def test_a_partition_killed_mid_task_ends_it_failed_and_get_task_says_why(served: dict[str, Any]) -> None:
    url = f"{served['url']}/a2a/sleepy"
    host = Host.connect(served["port"])
    seen: dict[str, Any] = {}

    async def kill(client: Any, task_id: str, context_id: str) -> None:
        seen["task"] = task_id
        user = f"A2A_USER_{context_id}"
        partition = host.partition_for("sleepy", user, context_id)
        pid = call(host.system, partition, OsPid(), timeout=5)
        for process in [*call(host.system, partition, LiveWorkers(), timeout=5), pid]:  # its run workers, and it
            with contextlib.suppress(ProcessLookupError):  # (a worker whose partition died exits by itself)
                os.kill(process, signal.SIGKILL)

    got = asyncio.run(_stream_until_working(url, "sleep 5", kill))
    last = [r.status_update.status for r in got if r.HasField("status_update")][-1]
    # the reason is the first death the session saw: its worker's (killed) or its own (interrupted)
    reason = last.message.parts[0].text
    assert last.state == TaskState.TASK_STATE_FAILED and reason.split(":")[0] in ("killed", "interrupted"), reason

    async def get() -> Any:
        async with httpx.AsyncClient(timeout=30) as http:
            client = await create_client(url, ClientConfig(httpx_client=http))
            return await client.get_task(GetTaskRequest(id=seen["task"]))

    assert asyncio.run(get()).status.state == TaskState.TASK_STATE_FAILED
    after = final_task(asyncio.run(responses(url, message("hello"), streaming=False)))
    assert after.status.state == TaskState.TASK_STATE_COMPLETED  # the partition came back


@pytest.mark.parametrize(("body", "code"), [
    (b"{not json", -32700),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "NoSuchMethod", "params": {}}', -32601),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "no-such-task"}}', -32001),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": 7}}', -32602),
])
def test_bad_json_rpc_gets_the_protocols_error_codes(served: dict[str, Any], body: bytes, code: int) -> None:
    answer = httpx.post(f"{served['url']}/a2a/weather_bot", content=body, timeout=10,
                        headers={"Content-Type": "application/json", "A2A-Version": "1.0"})
    assert answer.status_code < 500, answer.text
    assert answer.json()["error"]["code"] == code, answer.text


def test_tokens_guard_a2a_and_a_user_sees_only_its_own_tasks(tmp_path: Any) -> None:
    tokens = f'[http.tokens]\n"{ANN}" = "ann"\n"{BOB}" = "bob"\n'
    with serving(tmp_path, apps=APPS, more_toml=tokens) as running:
        url = f"{running['url']}/a2a/weather_bot"
        assert httpx.get(f"{url}/.well-known/agent-card.json", timeout=10).status_code == 401
        as_ann = {"Authorization": f"Bearer {ANN}"}
        task = final_task(asyncio.run(responses(url, message("Weather in Paris?"), streaming=False, headers=as_ann)))
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        assert task.metadata["adk_user_id"] == "ann"
        stored = httpx.get(f"{running['url']}/apps/weather_bot/users/ann/sessions/{task.context_id}",
                           headers=as_ann, timeout=10)
        assert stored.status_code == 200

        def get_as(token: str) -> httpx.Response:
            return httpx.post(url, timeout=10, json={"jsonrpc": "2.0", "id": 1, "method": "GetTask",
                                                     "params": {"id": task.id}},
                              headers={"Authorization": f"Bearer {token}", "A2A-Version": "1.0"})

        assert get_as(ANN).json()["result"]["id"] == task.id
        assert get_as(BOB).json()["error"]["code"] == -32001  # bob cannot see ann's task


REMOTE_APPS = 'router = "examples.a2a_router.agent:root_agent"\nasker = "a2a_agents:asker_agent"\n'


def run_on(url: str, app: str, text: str, streaming: bool = False) -> list[dict[str, Any]]:
    with httpx.Client(base_url=url, timeout=60) as http:
        session = http.post(f"/apps/{app}/users/ann/sessions", json={}).json()["id"]
        body = {"appName": app, "userId": "ann", "sessionId": session, "streaming": streaming,
                "newMessage": {"role": "user", "parts": [{"text": text}]}}
        if not streaming:
            answer = http.post("/run", json=body)
            assert answer.status_code == 200, answer.text
            events: list[dict[str, Any]] = answer.json()
            return events
        answer = http.post("/run_sse", json=body)
        return [json.loads(line[6:]) for line in answer.text.split("\n\n") if line.startswith("data: ")]


def test_a_remote_a2a_agent_is_a_sub_agent_and_a_tool_of_another_host(served: dict[str, Any], tmp_path: Any) -> None:
    """Host A's router transfers weather questions to a RemoteA2aAgent whose card is
    host B's weather_bot; host A's asker asks it as a tool. Both answers come from host
    B's agent; a second turn continues the same remote context."""
    card = f"{served['url']}/a2a/weather_bot/.well-known/agent-card.json"
    with serving(tmp_path, apps=REMOTE_APPS, env={"ADK_A2A_SPECIALIST_CARD": card}) as host_a:
        events = run_on(host_a["url"], "router", "What's the weather in Paris?")
        final = events[-1]
        assert final["author"] == "forecaster" and "Paris" in final["content"]["parts"][0]["text"]
        context = final["customMetadata"]["a2a_context_id"]
        with httpx.Client(base_url=host_a["url"], timeout=60) as http:
            session = http.post("/apps/router/users/ann/sessions", json={}).json()["id"]
            body = {"appName": "router", "userId": "ann", "sessionId": session,
                    "newMessage": {"role": "user", "parts": [{"text": "weather in Rome?"}]}}
            first = http.post("/run", json=body).json()[-1]
            second = http.post("/run", json={**body, "newMessage": {"role": "user", "parts": [
                {"text": "and the weather in Oslo?"}]}}).json()[-1]
        assert second["customMetadata"]["a2a_context_id"] == first["customMetadata"]["a2a_context_id"] != context
        remote = httpx.get(f"{served['url']}/apps/weather_bot/users/A2A_USER_{context}/sessions/{context}",
                           timeout=10).json()
        assert any("Paris" in p.get("text", "") for e in remote["events"] for p in e["content"]["parts"])

        streamed = run_on(host_a["url"], "router", "weather in Lima?", streaming=True)
        assert any(e.get("partial") and e["author"] == "forecaster" for e in streamed)
        assert not streamed[-1].get("partial") and "Lima" in streamed[-1]["content"]["parts"][0]["text"]

        asked = run_on(host_a["url"], "asker", "What's the weather in Oslo?")
        assert asked[-1]["author"] == "asker"
        assert asked[-1]["content"]["parts"][0]["text"].startswith("the specialist says:")
        assert "Oslo" in asked[-1]["content"]["parts"][0]["text"]


def test_a_remote_agent_that_is_absent_is_an_error_event_not_a_crashed_run(tmp_path: Any) -> None:
    with serving(tmp_path, apps=REMOTE_APPS, env={"ADK_A2A_SPECIALIST_CARD": "http://127.0.0.1:9/a2a/x/card.json"}) as a:
        events = run_on(a["url"], "router", "What's the weather in Paris?")
        assert events[-1]["errorCode"] == "a2a_unavailable" and "forecaster" in events[-1]["errorMessage"]
        asked = run_on(a["url"], "asker", "weather?")
        assert "failed" in json.dumps(asked) and asked[-1]["author"] == "asker"
        assert run_on(a["url"], "router", "hello")[-1]["content"]["parts"][0]["text"] == "router: hello"


@pytest.mark.parametrize("context_id", ["../../etc", "a/b", "x" * 5000])
def test_an_odd_context_id_fails_its_task_with_a_typed_reason(served: dict[str, Any], context_id: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "m1", "role": "ROLE_USER", "contextId": context_id, "parts": [{"text": "hi"}]}}}
    answer = httpx.post(f"{served['url']}/a2a/weather_bot", json=body, timeout=30, headers={"A2A-Version": "1.0"})
    status = answer.json()["result"]["task"]["status"]
    assert status["state"] == "TASK_STATE_FAILED" and "InvalidRequestError" in status["message"]["parts"][0]["text"]


@pytest.mark.parametrize(("part", "said"), [('{"text": "\\ud800 lone"}', "lone surrogate"),
                                            ('{"data": ' + "[" * 100 + "]" * 100 + "}", "nested deeper")])
def test_poisoned_a2a_input_is_refused_by_the_guard(served: dict[str, Any], part: str, said: str) -> None:
    body = ('{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"messageId": "m2", '
            f'"role": "ROLE_USER", "parts": [{part}]}}}}}}')
    answer = httpx.post(f"{served['url']}/a2a/weather_bot", content=body, timeout=30,
                        headers={"Content-Type": "application/json", "A2A-Version": "1.0"})
    assert answer.status_code == 422 and said in answer.json()["detail"]
    assert httpx.get(f"{served['url']}/list-apps", timeout=10).status_code == 200


def test_tasks_opening_one_new_context_at_once_all_complete(served: dict[str, Any]) -> None:
    """Five tasks sent at once in a context nobody used yet: each finds no session, one
    makes it, and every task completes in it."""
    url, context = f"{served['url']}/a2a/weather_bot", f"ctx-{uuid.uuid4().hex}"

    async def all_at_once() -> list[list[StreamResponse]]:
        return await asyncio.gather(*(responses(url, message(f"Weather in city {n}?", context), streaming=False)
                                      for n in range(5)))

    tasks = [final_task(got) for got in asyncio.run(all_at_once())]
    assert [t.status.state for t in tasks] == [TaskState.TASK_STATE_COMPLETED] * 5
    session = httpx.get(f"{served['url']}/apps/weather_bot/users/A2A_USER_{context}/sessions/{context}",
                        timeout=10).json()
    assert len([e for e in session["events"] if e["author"] == "user"]) == 5


def answer_message(context_id: str, task_id: str, *, text: str = "", data: dict[str, Any] | None = None) -> Any:
    parts = [Part(text=text)] if text else []
    if data is not None:
        value = Value()
        ParseDict(data, value)
        parts.append(Part(data=value))
    return SendMessageRequest(message=Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=parts,
                                              context_id=context_id, task_id=task_id))


def asked(got: list[StreamResponse]) -> tuple[str, str, dict[str, Any]]:
    """The task's and context's ids, and the data of the question that ended the stream."""
    last = [r.status_update for r in got if r.HasField("status_update")][-1]
    data = [MessageToDict(p.data) for p in last.status.message.parts if p.HasField("data")]
    return last.task_id, last.context_id, data[0]


def final_text(got: list[StreamResponse]) -> str:
    texts = [p.text for r in got if r.HasField("artifact_update") for p in r.artifact_update.artifact.parts]
    return texts[-1] if texts else ""


@pytest.mark.parametrize("answer", [{"text": "yes"}, {"data": {"approved": False, "reason": "too much"}}])
def test_an_approval_makes_the_task_input_required_and_the_clients_answer_decides_it(
        served: dict[str, Any], answer: dict[str, Any]) -> None:
    url = f"{served['url']}/a2a/hitl"
    got = asyncio.run(responses(url, message("pay 100 to bob")))
    assert states(got)[-1] == "TASK_STATE_INPUT_REQUIRED"
    task_id, context_id, question = asked(got)
    assert question["tool"] == "wire_money" and question["args"] == {"amount": 100, "to": "bob"}
    assert question["hint"] == "a payment needs your approval"
    pending = httpx.get(f"{served['url']}/apps/hitl/users/A2A_USER_{context_id}/approvals", timeout=10).json()
    assert question["approval_id"] in [a["id"] for a in pending]  # the same approval the console shows

    got = asyncio.run(responses(url, answer_message(context_id, task_id, **answer)))
    assert states(got)[-1] == "TASK_STATE_COMPLETED"
    if "text" in answer:
        assert final_text(got) == "Sent 100 to bob (ref TX-100-BOB)."
    else:
        assert final_text(got).startswith("The payment did not go through") and "too much" in final_text(got)


def test_an_answer_that_decides_nothing_asks_again(served: dict[str, Any]) -> None:
    url = f"{served['url']}/a2a/hitl"
    task_id, context_id, _ = asked(asyncio.run(responses(url, message("pay 7 to eve"))))
    again = asyncio.run(responses(url, answer_message(context_id, task_id, text="maybe later")))
    assert states(again)[-1] == "TASK_STATE_INPUT_REQUIRED"
    done = asyncio.run(responses(url, answer_message(context_id, task_id, text="no")))
    assert states(done)[-1] == "TASK_STATE_COMPLETED" and final_text(done).startswith("The payment did not go")


def test_a_credential_request_makes_the_task_auth_required_and_the_credential_resumes_it(
        served: dict[str, Any]) -> None:
    url = f"{served['url']}/a2a/calendar"
    got = asyncio.run(responses(url, message("what is on today?")))
    assert states(got)[-1] == "TASK_STATE_AUTH_REQUIRED"
    task_id, context_id, question = asked(got)
    wanted = question["credentials"][0]
    assert wanted["credential_key"] == "calendar" and wanted["type"] == "oauth2"
    credential = {"kind": "oauth2", "access_token": "tok-" + "x" * 28, "expires_at": time.time() + 3600}
    got = asyncio.run(responses(url, answer_message(context_id, task_id, data={
        "credential_key": "calendar", "credential": credential})))
    assert states(got)[-1] == "TASK_STATE_COMPLETED"
    assert final_text(got) == "calendar: {'events': ['standup 9:00'], 'token_length': 32}"
    assert "tok-xxxx" not in httpx.get(f"{served['url']}/apps/calendar/users/A2A_USER_{context_id}/sessions/"
                                        f"{context_id}", timeout=10).text  # the secret is stored, never shown


def test_a_task_waiting_for_its_client_can_be_cancelled_and_its_run_ends(served: dict[str, Any]) -> None:
    url = f"{served['url']}/a2a/hitl"
    task_id, context_id, _ = asked(asyncio.run(responses(url, message("pay 9 to max"))))

    async def cancel() -> Any:
        async with httpx.AsyncClient(timeout=30) as http:
            client = await create_client(url, ClientConfig(httpx_client=http))
            return await client.cancel_task(CancelTaskRequest(id=task_id))

    assert asyncio.run(cancel()).status.state == TaskState.TASK_STATE_CANCELED
    # the run waiting for the approval was cancelled on the host: the session takes a new turn at once
    wait_until(lambda: httpx.post(f"{served['url']}/run", timeout=10, json={
        "appName": "hitl", "userId": f"A2A_USER_{context_id}", "sessionId": context_id,
        "newMessage": {"role": "user", "parts": [{"text": "hello"}]}}).status_code == 200, timeout=5)


def test_tasks_outlive_the_http_process_and_those_it_left_running_end_failed(tmp_path: Any) -> None:
    """A2A tasks are kept in the host's data folder (a private file): after a kill -9
    of the HTTP server process, its replacement answers GetTask for a finished task
    as before (its state, history and artifact), and ends a task the dead process was
    running failed, saying why; a new task then runs."""
    with serving(tmp_path, apps=APPS) as running:
        url, host = f"{running['url']}/a2a/sleepy", Host.connect(running["port"])
        done = final_task(asyncio.run(responses(url, message("hello"), streaming=False)))
        assert done.status.state == TaskState.TASK_STATE_COMPLETED
        server = call(host.system, next(c for c in host.root.which_children() if c.id == "http").address,
                      "server_pid")
        seen: dict[str, Any] = {}

        async def kill_server(client: Any, task_id: str, context_id: str) -> None:
            seen["task"] = task_id
            os.kill(server, signal.SIGKILL)

        with pytest.raises(A2AClientError):  # the stream breaks with its server
            asyncio.run(_stream_until_working(url, "sleep 5", kill_server))

        def answers_again() -> bool:
            try:
                return httpx.get(f"{running['url']}/health", timeout=2).status_code == 200
            except httpx.TransportError:
                return False

        wait_until(answers_again, timeout=30, message="the HTTP server is back")

        async def get(task_id: str) -> Any:
            async with httpx.AsyncClient(timeout=30) as http:
                client = await create_client(url, ClientConfig(httpx_client=http))
                return await client.get_task(GetTaskRequest(id=task_id))

        kept = asyncio.run(get(done.id))
        assert kept.status.state == TaskState.TASK_STATE_COMPLETED
        assert MessageToDict(kept)["artifacts"] == MessageToDict(done)["artifacts"]
        assert [m.role for m in kept.history] == [m.role for m in done.history]
        cut = asyncio.run(get(seen["task"]))
        assert cut.status.state == TaskState.TASK_STATE_FAILED
        assert cut.status.message.parts[0].text.startswith("interrupted: the HTTP process")
        after = final_task(asyncio.run(responses(url, message("hello"), streaming=False)))
        assert after.status.state == TaskState.TASK_STATE_COMPLETED
        tasks_file = tmp_path / "data" / "a2a_tasks.db"
        assert tasks_file.stat().st_mode & 0o777 == 0o600
