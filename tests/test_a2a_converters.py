"""google-adk's A2A converters at its paths (issue 52), side by side with google-adk's
own on the same inputs: the same a2a-sdk objects come out (their dicts compared,
generated ids and timestamps left out), and the same events (their parts, actions,
long-running calls and metadata). Bad input is a clear error."""

from __future__ import annotations

import asyncio
import warnings
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("a2a")
pytest.importorskip("google.adk.a2a")

from a2a.server.agent_execution import RequestContext
from a2a.server.context import ServerCallContext
from a2a.types import (
    Artifact,
    Message,
    Part,
    Role,
    SendMessageRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from google.adk.a2a.converters import event_converter as g_legacy
from google.adk.a2a.converters import from_adk_event as g_from
from google.adk.a2a.converters import long_running_functions as g_long
from google.adk.a2a.converters import part_converter as g_parts
from google.adk.a2a.converters import request_converter as g_request
from google.adk.a2a.converters import to_adk_event as g_to
from google.adk.a2a.executor import task_result_aggregator as g_aggregator
from google.adk.events import Event as GEvent
from google.adk.events import EventActions as GEventActions
from google.genai import types as gt
from google.protobuf.json_format import MessageToDict

from adk_actors._types import Event, EventActions
from adk_actors.a2a.converters import event_converter as o_legacy
from adk_actors.a2a.converters import from_adk_event as o_from
from adk_actors.a2a.converters import long_running_functions as o_long
from adk_actors.a2a.converters import part_converter as o_parts
from adk_actors.a2a.converters import request_converter as o_request
from adk_actors.a2a.converters import to_adk_event as o_to
from adk_actors.a2a.converters.utils import _get_adk_metadata_key
from adk_actors.a2a.executor import task_result_aggregator as o_aggregator
from adk_actors.a2a.executor.config import ExecuteInterceptor
from adk_actors.a2a.executor.executor_context import ExecutorContext
from adk_actors.a2a.executor.interceptors import include_artifacts_in_a2a_event_interceptor
from adk_actors.a2a.executor.utils import (
    execute_after_agent_interceptors,
    execute_after_event_interceptors,
    execute_before_agent_interceptors,
)
from adk_actors.a2a.logs.log_utils import (
    build_a2a_request_log,
    build_a2a_response_log,
    build_message_part_log,
)

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

#: fields google-adk and we fill with fresh ids or times
GENERATED = {"messageId", "timestamp", "artifactId", "adk_event_id"}

PARTS = [
    gt.Part(text="hello"),
    gt.Part(text="thinking it over", thought=True),
    gt.Part(function_call=gt.FunctionCall(id="call-1", name="get_weather", args={"city": "Paris", "days": 2})),
    gt.Part(function_response=gt.FunctionResponse(id="call-1", name="get_weather", response={"sky": "clear"})),
    gt.Part(inline_data=gt.Blob(data=b"\x89PNG...", mime_type="image/png", display_name="map.png")),
    gt.Part(file_data=gt.FileData(file_uri="gs://bucket/report.pdf", mime_type="application/pdf",
                                  display_name="report.pdf")),
    gt.Part(executable_code=gt.ExecutableCode(code="print(1)", language=gt.Language.PYTHON)),
    gt.Part(code_execution_result=gt.CodeExecutionResult(outcome=gt.Outcome.OUTCOME_OK, output="1")),
    gt.Part(function_call=gt.FunctionCall(id="c2", name="f", args={}), thought_signature=b"sig"),
]


def view(value: Any) -> Any:
    """An a2a object (or a list of them) as a dict, the generated fields left out."""
    if isinstance(value, list):
        return [view(item) for item in value]
    if value is None or isinstance(value, (dict, str, int, float)):
        return value
    return _strip(MessageToDict(value))


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in GENERATED}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def part_view(part: Any) -> Any:
    """A part (google.genai's or ours) as its camelCase fields (google.genai's
    ``part_metadata``, which ours has not, left out)."""
    if part is None:
        return None
    found = part.model_dump(mode="json", by_alias=True, exclude_none=True)
    found.pop("partMetadata", None)
    return found


def event_view(event: Any) -> Any:
    """What an event says: its content, author, branch, partiality, long-running calls,
    actions and metadata (mock call ids, which are fresh, as ``ID``)."""
    if event is None:
        return None
    content = event.content
    parts = [part_view(p) for p in content.parts] if content is not None else None
    for part in parts or []:
        if part.get("functionCall", {}).get("name", "").startswith("mock_function_call"):
            part["functionCall"]["id"] = "ID"
    mocks = any(p.get("functionCall", {}).get("id") == "ID" for p in parts or [])
    return {"role": content.role if content is not None else None, "parts": parts, "author": event.author,
            "branch": event.branch, "partial": bool(event.partial),
            "long_running": ["ID"] if mocks and event.long_running_tool_ids else sorted(event.long_running_tool_ids or []),
            "actions": _actions_view(event.actions),
            "custom_metadata": event.custom_metadata, "error_code": event.error_code,
            "usage": event.usage_metadata.model_dump(mode="json", exclude_none=True) if event.usage_metadata else None}


def _actions_view(actions: Any) -> dict[str, Any]:
    """Actions by their set fields (google-adk's dump keeps an empty state delta)."""
    found = actions.model_dump(mode="json", exclude_none=True, exclude_defaults=True, by_alias=True)
    return {k: v for k, v in found.items() if not (k == "stateDelta" and v == {})}


def ours(part: gt.Part) -> Any:
    from adk_actors._types import Part as OurPart

    return OurPart.model_validate(part.model_dump(exclude_none=True))


def both_events(**fields: Any) -> tuple[GEvent, Event]:
    """The same event as google-adk's and ours."""
    parts = fields.pop("parts", None)
    actions = fields.pop("actions", {})
    g = GEvent(content=gt.Content(role="model", parts=parts) if parts is not None else None,
               actions=GEventActions(**actions), **fields)
    o = Event(content={"role": "model", "parts": [ours(p) for p in parts]} if parts is not None else None,
              actions=EventActions(**actions), **{k: _ours_field(k, v) for k, v in fields.items()})
    o.id, o.timestamp = g.id, g.timestamp
    return g, o


def _ours_field(name: str, value: Any) -> Any:
    if name == "long_running_tool_ids":
        return tuple(sorted(value))
    return value.model_dump(exclude_none=True) if hasattr(value, "model_dump") else value


# -- parts ---------------------------------------------------------------------------


@pytest.mark.parametrize("part", PARTS, ids=lambda p: next(iter(p.model_dump(exclude_none=True))))
def test_a_part_to_a2a_as_google_adk(part: gt.Part) -> None:
    expected = view(g_parts.convert_genai_part_to_a2a_part(part))
    assert view(o_parts.convert_genai_part_to_a2a_part(part)) == expected
    assert view(o_parts.convert_genai_part_to_a2a_part(ours(part))) == expected


@pytest.mark.parametrize("part", PARTS, ids=lambda p: next(iter(p.model_dump(exclude_none=True))))
def test_an_a2a_part_back_as_google_adk(part: gt.Part) -> None:
    a2a_part = g_parts.convert_genai_part_to_a2a_part(part)
    assert part_view(o_parts.convert_a2a_part_to_genai_part(a2a_part)) == part_view(
        g_parts.convert_a2a_part_to_genai_part(a2a_part))


def test_a_generic_data_part_round_trips_as_google_adks() -> None:
    a2a_part = Part()
    a2a_part.data.struct_value.update({"order": 7, "items": ["a", "b"]})
    a2a_part.metadata.update({"source": "crm"})
    g, o = g_parts.convert_a2a_part_to_genai_part(a2a_part), o_parts.convert_a2a_part_to_genai_part(a2a_part)
    assert part_view(o) == part_view(g)
    assert o is not None and o.inline_data is not None and o.inline_data.data.startswith(b"<a2a_datapart_json>")
    assert view(o_parts.convert_genai_part_to_a2a_part(o)) == {"data": {"order": 7.0, "items": ["a", "b"]}}


def test_a_url_part_with_no_media_type_and_a_file_part_of_bytes() -> None:
    for a2a_part in (Part(url="https://example.com/x"), Part(raw=b"abc", media_type="text/csv", filename="a.csv")):
        assert part_view(o_parts.convert_a2a_part_to_genai_part(a2a_part)) == part_view(
            g_parts.convert_a2a_part_to_genai_part(a2a_part))


def test_bad_parts_are_clear_errors() -> None:
    with pytest.raises(TypeError, match="Part"):
        o_parts.convert_genai_part_to_a2a_part("hello")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"a2a\.types\.Part"):
        o_parts.convert_a2a_part_to_genai_part({"text": "hello"})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tool_call"):
        o_parts.convert_genai_part_to_a2a_part(gt.Part(tool_call=gt.ToolCall(id="t")))
    with pytest.raises(ValueError, match="empty"):
        _get_adk_metadata_key("")
    assert o_parts.convert_a2a_part_to_genai_part(Part()) is None


# -- ours to A2A events ------------------------------------------------------------------


def test_events_to_a2a_artifact_updates_as_google_adk() -> None:
    """A streamed answer: partial chunks append to the author's artifact, the whole
    event closes it; the event's metadata rides on each artifact."""
    g_state: dict[str, str] = {}
    o_state: dict[str, str] = {}
    for partial in (True, True, False):
        g, o = both_events(author="writer", invocation_id="inv-1", branch="root.writer", partial=partial,
                           parts=[gt.Part(text="chunk")], custom_metadata={"k": "v", "__adk_internal_x": 1},
                           usage_metadata=gt.GenerateContentResponseUsageMetadata(prompt_token_count=3))
        expected = g_from.convert_event_to_a2a_events(g, g_state, "task-1", "ctx-1")
        got = o_from.convert_event_to_a2a_events(o, o_state, "task-1", "ctx-1")
        assert view(got) == view(expected)
        assert [e.artifact.artifact_id == o_state.get("writer") for e in got] == [
            e.artifact.artifact_id == g_state.get("writer") for e in expected]
    assert o_state == g_state == {}


def test_an_event_of_actions_only_and_an_error_status_as_google_adk() -> None:
    g, o = both_events(author="a", invocation_id="i", actions={"state_delta": {"x": 1}, "escalate": True})
    assert view(o_from.convert_event_to_a2a_events(o, {}, "t", "c")) == view(
        g_from.convert_event_to_a2a_events(g, {}, "t", "c"))
    g, o = both_events(author="a", invocation_id="i", error_code="RATE_LIMIT", error_message="slow down")
    assert view(o_from.create_error_status_event(o, "t", "c")) == view(g_from.create_error_status_event(g, "t", "c"))
    failed = o_from.create_error_status_event(o, "t", "c")
    assert failed.status.state == TaskState.TASK_STATE_FAILED and failed.status.message.parts[0].text == "slow down"


def test_legacy_event_converter_long_running_and_error_as_google_adk() -> None:
    context = SimpleNamespace(app_name="app", user_id="u", session=SimpleNamespace(id="s"), invocation_id="i",
                              branch=None)
    g, o = both_events(author="agent", invocation_id="i", long_running_tool_ids={"call-1"},
                       parts=[gt.Part(text="I need approval"), PARTS[2]])
    assert view(o_legacy.convert_event_to_a2a_events(o, context, "t", "c")) == view(
        g_legacy.convert_event_to_a2a_events(g, context, "t", "c"))
    message = o_legacy.convert_event_to_a2a_message(o, context)
    assert message is not None and MessageToDict(message.parts[1].metadata)["adk_is_long_running"] is True
    credential = gt.Part(function_call=gt.FunctionCall(id="e1", name="adk_request_credential", args={}))
    g, o = both_events(author="agent", invocation_id="i", long_running_tool_ids={"e1"}, parts=[credential])
    got = o_legacy.convert_event_to_a2a_events(o, context, "t", "c")
    assert view(got) == view(g_legacy.convert_event_to_a2a_events(g, context, "t", "c"))
    assert got[0].status.state == TaskState.TASK_STATE_AUTH_REQUIRED
    g, o = both_events(author="agent", invocation_id="i", error_code="E", error_message="it broke")
    got = o_legacy.convert_event_to_a2a_events(o, context, "t", "c")
    assert view(got) == view(g_legacy.convert_event_to_a2a_events(g, context, "t", "c"))
    assert [e.status.state for e in got] == [TaskState.TASK_STATE_FAILED]


def test_long_running_functions_as_google_adk() -> None:
    g_lr, o_lr = g_long.LongRunningFunctions(), o_long.LongRunningFunctions()
    g, o = both_events(author="agent", invocation_id="i", long_running_tool_ids={"call-1"},
                       parts=[gt.Part(text="asking"), PARTS[2]])
    assert part_view_list(o_lr.process_event(o)) == part_view_list(g_lr.process_event(g))
    assert o.content is not None and len(o.content.parts) == 2  # the event itself is left alone
    assert o_lr.has_long_running_function_calls() and g_lr.has_long_running_function_calls()
    assert view(o_lr.create_long_running_function_call_event("t", "c")) == view(
        g_lr.create_long_running_function_call_event("t", "c"))
    assert o_long.LongRunningFunctions().create_long_running_function_call_event("t", "c") is None


def part_view_list(event: Any) -> list[Any]:
    return [part_view(p) for p in event.content.parts]


# -- A2A to our events -------------------------------------------------------------------


def _message(*parts: Part, role: Any = Role.ROLE_AGENT, metadata: dict[str, Any] | None = None) -> Message:
    return Message(message_id="m1", role=role, parts=list(parts), metadata=metadata)


def _call_part(long_running: bool = False) -> Part:
    part = g_parts.convert_genai_part_to_a2a_part(PARTS[2])
    if long_running:
        part.metadata.update({"adk_is_long_running": True})
    return part


CONTEXT = SimpleNamespace(invocation_id="inv-9", branch="root.remote")


def _both(name: str, value: Any, context: Any = None) -> None:
    g = getattr(g_to, name)(value, "remote", context)
    o = getattr(o_to, name)(value, "remote", context)
    assert event_view(o) == event_view(g)
    if g is not None and context is not None:
        assert o.invocation_id == g.invocation_id


def test_a2a_messages_to_events_as_google_adk() -> None:
    metadata = {"adk_custom_metadata": {"k": "v", "__adk_internal_y": 1}, "adk_error_code": "E1",
                "adk_actions": {"escalate": True, "stateDelta": {"stolen": 1}},
                "adk_usage_metadata": {"promptTokenCount": 4}}
    for message in (_message(Part(text="hi"), role=Role.ROLE_USER), _message(Part(text="hi"), _call_part(True)),
                    _message(Part(url="gs://b/x", media_type="image/png"), metadata=metadata), _message()):
        _both("convert_a2a_message_to_event", message, CONTEXT)
        assert event_view(o_legacy.convert_a2a_message_to_event(message, "remote", CONTEXT)) == event_view(
            g_legacy.convert_a2a_message_to_event(message, "remote", CONTEXT))


def test_status_updates_to_events_as_google_adk() -> None:
    asking = TaskStatusUpdateEvent(task_id="t", context_id="c", status=TaskStatus(
        state=TaskState.TASK_STATE_INPUT_REQUIRED, message=_message(Part(text="Which city?"))))
    failed = TaskStatusUpdateEvent(task_id="t", context_id="c", status=TaskStatus(
        state=TaskState.TASK_STATE_FAILED, message=_message(Part(text="it broke"), metadata={"adk_error_code": "X"})))
    auth = TaskStatusUpdateEvent(task_id="t", context_id="c", status=TaskStatus(
        state=TaskState.TASK_STATE_AUTH_REQUIRED, message=_message(Part(text="log in"))))
    working_empty = TaskStatusUpdateEvent(task_id="t", context_id="c",
                                          status=TaskStatus(state=TaskState.TASK_STATE_WORKING))
    completed_empty = TaskStatusUpdateEvent(task_id="t", context_id="c",
                                            status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED))
    for update in (asking, failed, auth, working_empty, completed_empty):
        _both("convert_a2a_status_update_to_event", update, CONTEXT)
    event = o_to.convert_a2a_status_update_to_event(asking, "remote")
    assert event is not None and event.content is not None
    call = event.content.parts[0].function_call
    assert call is not None and call.name == "mock_function_call_for_required_user_input"
    assert event.long_running_tool_ids == (call.id,)


def test_artifact_updates_to_events_as_google_adk() -> None:
    for last in (False, True):
        update = TaskArtifactUpdateEvent(task_id="t", context_id="c", last_chunk=last,
                                         artifact=Artifact(artifact_id="a-1", parts=[Part(text="chunk")]))
        _both("convert_a2a_artifact_update_to_event", update, CONTEXT)
        ours_event = o_to.convert_a2a_artifact_update_to_event(update, "remote", CONTEXT)
        theirs = g_to.convert_a2a_artifact_update_to_event(update, "remote", CONTEXT)
        assert ours_event is not None and theirs is not None and ours_event.id == theirs.id


def _task(state: Any, *, artifacts: bool = True, status_text: str | None = "done") -> Task:
    task = Task(id="t", context_id="c", status=TaskStatus(state=state))
    if status_text is not None:
        task.status.message.CopyFrom(_message(Part(text=status_text)))
    if artifacts:
        task.artifacts.append(Artifact(artifact_id="answer", parts=[Part(text="42"), _call_part(True)],
                                       metadata={"adk_actions": {"skipSummarization": False}}))
    task.history.append(_message(Part(text="earlier"), role=Role.ROLE_AGENT))
    return task


@pytest.mark.parametrize("state", [TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_INPUT_REQUIRED,
                                   TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_WORKING])
def test_a_task_with_artifacts_to_an_event_as_google_adk(state: Any) -> None:
    for task in (_task(state), _task(state, artifacts=False), _task(state, artifacts=False, status_text=None)):
        _both("convert_a2a_task_to_event", task, CONTEXT)
        assert event_view(o_legacy.convert_a2a_task_to_event(task, "remote", CONTEXT)) == event_view(
            g_legacy.convert_a2a_task_to_event(task, "remote", CONTEXT))


def test_bad_a2a_input_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="task"):
        o_to.convert_a2a_task_to_event(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Task"):
        o_to.convert_a2a_task_to_event(_message())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="agents_artifacts"):
        o_from.convert_event_to_a2a_events(Event(author="a"), None)
    with pytest.raises(ValueError, match="invocation context"):
        o_legacy.convert_event_to_a2a_events(Event(author="a"), None)


# -- requests, the executor's helpers ------------------------------------------------------


def _request(message: Message | None, task: Task | None = None, metadata: dict[str, Any] | None = None) -> Any:
    params = SendMessageRequest(message=message, metadata=metadata) if message is not None else None
    return RequestContext(call_context=ServerCallContext(), request=params, task_id="t", context_id="c",
                          task=task)


def test_a_request_to_a_run_request_as_google_adk() -> None:
    request = _request(_message(Part(text="hi"), Part(raw=b"x", media_type="image/png"), role=Role.ROLE_USER),
                       metadata={"trace": "abc"})
    g = g_request.convert_a2a_request_to_agent_run_request(request)
    o = o_request.convert_a2a_request_to_agent_run_request(request)
    assert (o.user_id, o.session_id) == (g.user_id, g.session_id) == ("A2A_USER_c", "c")
    assert [part_view(p) for p in o.new_message.parts] == [part_view(p) for p in g.new_message.parts]
    assert o.run_config is not None and g.run_config is not None
    assert o.run_config.custom_metadata == g.run_config.custom_metadata == {"a2a_metadata": {"trace": "abc"}}
    with pytest.raises(ValueError, match="message"):
        o_request.convert_a2a_request_to_agent_run_request(_request(None))


def test_handle_user_input_as_google_adk() -> None:
    waiting = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.TASK_STATE_INPUT_REQUIRED))
    no_answer = _request(_message(Part(text="yes"), role=Role.ROLE_USER), task=waiting)
    g, o = g_long.handle_user_input(no_answer), o_long.handle_user_input(no_answer)
    assert o is not None and g is not None and o.status.state == g.status.state
    assert (o.task_id, o.context_id) == (g.task_id, g.context_id)
    answer = g_parts.convert_genai_part_to_a2a_part(PARTS[3])
    assert o_long.handle_user_input(_request(_message(answer, role=Role.ROLE_USER), task=waiting)) is None
    assert o_long.handle_user_input(_request(_message(Part(text="x")))) is None


def test_task_result_aggregator_as_google_adk() -> None:
    states = [TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_WORKING,
              TaskState.TASK_STATE_AUTH_REQUIRED, TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_FAILED,
              TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_AUTH_REQUIRED]
    g, o = g_aggregator.TaskResultAggregator(), o_aggregator.TaskResultAggregator()
    for i, state in enumerate(states):
        update = TaskStatusUpdateEvent(task_id="t", context_id="c", status=TaskStatus(
            state=state, message=_message(Part(text=f"update {i}"))))
        theirs = TaskStatusUpdateEvent()
        theirs.CopyFrom(update)
        o.process_event(update)
        g.process_event(theirs)
        assert view(update) == view(theirs) and update.status.state == TaskState.TASK_STATE_WORKING
        assert o.task_state == g.task_state
        assert view(o.task_status_message) == view(g.task_status_message)
    assert o.task_state == TaskState.TASK_STATE_FAILED and o.task_status_message.parts[0].text == "update 6"


def test_the_executor_interceptor_helpers_in_google_adks_order() -> None:
    seen: list[str] = []

    def hook(name: str, give: Any = "same") -> ExecuteInterceptor:
        async def before(context: Any) -> Any:
            seen.append(f"before {name}")
            return context

        async def after_event(ctx: Any, event: Any, adk_event: Any) -> Any:
            seen.append(f"event {name}")
            return [event, event] if give == "double" else None if give == "drop" else event

        async def after_agent(ctx: Any, final: Any) -> Any:
            seen.append(f"agent {name}")
            return final

        return ExecuteInterceptor(before_agent=before, after_event=after_event, after_agent=after_agent)

    async def run() -> None:
        told = ExecutorContext("app", "u", "s", None)
        update = TaskStatusUpdateEvent(task_id="t")
        hooks = [hook("a", "double"), hook("b")]
        assert await execute_before_agent_interceptors("ctx", hooks) == "ctx"  # type: ignore[arg-type]
        assert len(await execute_after_event_interceptors(update, told, Event(author="x"), hooks)) == 2
        assert await execute_after_event_interceptors(update, told, Event(author="x"),
                                                      [hook("c", "drop"), hook("d")]) == []
        assert await execute_after_agent_interceptors(told, update, hooks) is update
        assert await execute_after_event_interceptors(update, told, Event(author="x"), None) == [update]

    asyncio.run(run())
    assert seen == ["before a", "before b", "event a", "event b", "event b", "event c", "agent b", "agent a"]


def test_the_include_artifacts_interceptor_publishes_saved_artifacts() -> None:
    from adk_actors._types import Part as OurPart
    from adk_actors.artifacts import InMemoryArtifactService

    async def run() -> list[Any]:
        service = InMemoryArtifactService()
        version = await service.save_artifact(app_name="app", user_id="u", session_id="s", filename="chart.png",
                                              artifact=OurPart.from_bytes(data=b"png", mime_type="image/png"))
        told = ExecutorContext("app", "u", "s", SimpleNamespace(artifact_service=service))
        event = Event(author="a", actions=EventActions(artifact_delta={"chart.png": version}))
        update = TaskStatusUpdateEvent(task_id="t", context_id="c", metadata={"k": "v"})
        hook = include_artifacts_in_a2a_event_interceptor.after_event
        assert hook is not None
        got = await hook(told, update, event)
        assert event.actions.artifact_delta == {}
        return [update, version, got]

    update, version, got = asyncio.run(run())
    assert isinstance(got, list) and got[0] is update
    assert view(got[1]) == {"taskId": "t", "contextId": "c", "metadata": {"k": "v"}, "lastChunk": True,
                            "artifact": {"name": "chart.png", "parts": [{"raw": "cG5n", "mediaType": "image/png"}]}}
    assert got[1].artifact.artifact_id == f"chart.png_{version}"


def test_log_text_names_what_was_sent_and_received() -> None:
    message = _message(Part(text="x" * 150), _call_part(True), Part(raw=b"secret", media_type="image/png"),
                       role=Role.ROLE_USER, metadata={"trace": "abc"})
    part_log = build_message_part_log(message.parts[0])
    assert part_log.endswith("x" * 100 + "...")
    assert "adk_is_long_running" in build_message_part_log(message.parts[1])
    assert "c2VjcmV0" not in build_message_part_log(message.parts[2])  # a file's bytes are left out
    request_log = build_a2a_request_log(message)
    assert "m1" in request_log and "trace" in request_log and "get_weather" in request_log
    task = _task(TaskState.TASK_STATE_COMPLETED)
    response_log = build_a2a_response_log((task, None))
    assert "TASK_STATE_COMPLETED" in response_log and "earlier" in response_log and "done" in response_log
    assert "m1" in build_a2a_response_log(message)


def test_no_google_adk_warning_comes_of_ours() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        o_parts.convert_genai_part_to_a2a_part(PARTS[0])
