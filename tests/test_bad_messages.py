"""Every actor answers junk with a typed error and keeps its pid (issue 18 part 3).

Hypothesis builds each public request of each actor with fields drawn from junk (wrong
types, nested shapes, None, huge numbers) mixed with plausible values, sends it as a
real Call to the real actor process and asserts: an answer (a Reply or a typed
``CallError`` that is not a crash) within the timeout, the same pid afterwards, and at
the end a turn still served. One host takes every test's junk, one after another.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import hypothesis.strategies as st
import pytest
import runtime_agents
from hypothesis import HealthCheck, given, settings

from adk_actors._types import Blob, Content, Part, RunConfig
from adk_actors.messages import (
    CancelRun,
    CreateSession,
    DeleteSession,
    FollowRun,
    GetSession,
    GetState,
    HeldKeys,
    ListSessions,
    RunRequest,
)
from adk_actors.runtime import Host, HostConfig
from adk_actors.runtime._service_calls import (
    Acquire,
    AddSessionToMemory,
    Approve,
    ArtifactVersions,
    BreakerStatus,
    DeleteArtifact,
    DeleteCredential,
    Deny,
    Disable,
    ForceOpen,
    GetCredential,
    ListApprovals,
    ListArtifacts,
    LoadArtifact,
    PutCredential,
    Record,
    RegisterApproval,
    Reset,
    SaveArtifact,
    SearchMemory,
    WaitDecision,
)
from supervision import CallError, SupervisorClient, call
from supervision.testing import running_actor_system

SESSION_REQUESTS = [CreateSession, ListSessions, DeleteSession, RunRequest, FollowRun, GetSession, GetState,
                    CancelRun]
TARGETS: dict[str, list[type]] = {
    "partition": SESSION_REQUESTS,
    "session": [RunRequest, FollowRun, GetSession, GetState, CancelRun],  # its partition, holding it
    "artifacts": [SaveArtifact, LoadArtifact, ListArtifacts, ArtifactVersions, DeleteArtifact],
    "memory": [AddSessionToMemory, SearchMemory],
    "approvals": [RegisterApproval, Approve, Deny, WaitDecision, ListApprovals],
    "credentials": [PutCredential, GetCredential, DeleteCredential],
    "breakers": [Acquire, Record, BreakerStatus, ForceOpen, Disable, Reset],
}

junk = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=True),
    st.text(max_size=12), st.binary(max_size=12),
    st.lists(st.one_of(st.integers(), st.text(max_size=3)), max_size=3),
    st.dictionaries(st.text(max_size=4), st.one_of(st.integers(), st.none(), st.text(max_size=3)), max_size=3),
    st.tuples(st.integers(), st.text(max_size=2)),
)
plausible: dict[str, Any] = {
    "app_name": st.sampled_from(["echo", "nope", ""]),
    "user_id": st.sampled_from(["u", "other", ""]),
    "session_id": st.sampled_from(["s1", "missing", ""]),
    "new_message": st.just(Content.user("hello")),
    "run_config": st.sampled_from([None, RunConfig()]),
    "part": st.sampled_from([Part(text="note"), Part(inline_data=Blob(mime_type="application/octet-stream", data=b"\x00\x01"))]),
    "name": st.sampled_from(["note.txt", "../../etc/passwd", "a/b", ""]),
    "state": st.sampled_from([{}, {"k": 1}]),
    "limit": st.sampled_from([1, 0, -1, 10**9]),
    "version": st.sampled_from([None, 0, -1, 99]),
    "wait": st.sampled_from([0.0, -1.0, 0.01]),
}


def request_of(cls: type) -> st.SearchStrategy[Any]:
    """``cls`` built with each field junk or plausible (constructors do not check types)."""
    fields = {f.name: st.one_of(plausible.get(f.name, junk), junk) if f.name in plausible else junk
              for f in dataclasses.fields(cls)}
    return st.fixed_dictionaries(fields).map(lambda kwargs: cls(**kwargs))


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    """One host for the whole module: junk aimed at its actors test after test, it
    must serve on (each test checks)."""
    base = tmp_path_factory.mktemp("bad-messages")
    with running_actor_system(base / "logs") as system, \
            Host(HostConfig(apps=runtime_agents.APPS, data_dir=str(base / "data")), system=system) as running:
        yield running


def target_address(host: Any, target: str) -> tuple[Any, Any]:
    """(address, a function that returns the target's current pid)."""
    root = host.root
    if target in ("artifacts", "memory", "approvals", "credentials", "breakers"):
        services = host.services()
        return services.child(target).address, lambda: services.child(target).pid
    partition = host.partitions()[0]
    parent = SupervisorClient(host.system, root.child("sessions").address)
    if target == "partition":
        return partition, lambda: parent.which_children()[0].pid
    runner = host.runner("echo")
    while True:  # a session living in partition 0
        session = runner.create_session(user_id="u")
        if host.partition_for("echo", "u", session.id) == partition:
            break
    list(runner.run("u", session.id, "hello"))
    return partition, lambda: parent.which_children()[0].pid


@pytest.mark.parametrize("target", list(TARGETS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(data=st.data())
def test_junk_requests_get_a_typed_answer_and_the_actor_keeps_its_pid(host: Any, target: str, data: Any) -> None:
    cache = host.__dict__.setdefault("_junk_targets", {})
    if target not in cache:
        cache[target] = target_address(host, target)
    address, pid_of = cache[target]
    pid = pid_of()
    request = data.draw(st.one_of(*(request_of(cls) for cls in TARGETS[target])))
    try:
        call(host.system, address, request, timeout=5.0)
    except CallError as exc:
        assert exc.code != "crashed", f"{request!r} -> {exc.code}: {exc}"
    assert pid_of() == pid, f"{target} changed pid after {request!r}"


@pytest.mark.parametrize("target", list(TARGETS))
def test_an_unknown_message_is_answered_and_changes_nothing(host: Any, target: str) -> None:
    address, pid_of = target_address(host, target)
    pid = pid_of()
    for junk_message in ("hello", 42, {"a": 1}, (1, 2), b"\x00"):
        with pytest.raises(CallError) as raised:
            call(host.system, address, junk_message, timeout=5.0)
        assert raised.value.code == "unknown_request"
        answer = host.system.ask(address, junk_message, 5.0)
        assert answer is not None and getattr(answer, "code", None) == "unknown_message"
    assert pid_of() == pid
    runner = host.runner("echo")
    session = runner.create_session(user_id="after")
    assert list(runner.run("after", session.id, "still there?"))[-1].content is not None


CASES = [  # found by hand on main before issue 18: each crashed its receiver or got no answer
    ("partition", CreateSession("echo", "u", "s-42", state=42)),  # type: ignore[arg-type]
    ("partition", CreateSession("echo", None, "s-none")),  # type: ignore[arg-type]
    ("partition", ListSessions("echo", 42)),  # type: ignore[arg-type]
    ("session", RunRequest("echo", "u", "x", new_message="hello")),  # type: ignore[arg-type]
    ("session", RunRequest("echo", "u", "x", new_message=Content.user("hi"), run_config={"timeout": 1})),  # type: ignore[arg-type]
    ("session", RunRequest("echo", "u", "x", new_message=Content.user("hi"), run_id=["r"])),  # type: ignore[arg-type]
    ("session", GetSession("echo", "u", "another-session")),
    ("artifacts", SaveArtifact("echo", "u", "s", "a.txt", None)),  # type: ignore[arg-type]
    ("memory", SearchMemory("echo", "u", "q", limit="x")),  # type: ignore[arg-type]
    ("approvals", Approve({"id": 1})),  # type: ignore[arg-type]
    ("approvals", Deny(["id"])),  # type: ignore[arg-type]
    ("credentials", GetCredential("echo", "u", {"k": 1})),  # type: ignore[arg-type]
    ("credentials", DeleteCredential("echo", ["u"], "k")),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("target", "request_"), CASES, ids=[f"{t}-{type(r).__name__}" for t, r in CASES])
def test_the_requests_that_crashed_actors_are_refused_with_a_typed_error(host: Any, target: str, request_: Any) -> None:
    address, pid_of = target_address(host, target)
    pid = pid_of()
    if target == "session":  # aimed at the session its partition holds, except GetSession's other key
        key = call(host.system, host.partitions()[0], HeldKeys(), timeout=5)[0]
        if not isinstance(request_, GetSession):
            request_ = dataclasses.replace(request_, session_id=key.rsplit("/", 1)[1])
    with pytest.raises(CallError) as raised:
        call(host.system, address, request_, timeout=5.0)
    # (GetSession of another session: unknown here, or another partition's)
    assert raised.value.code in ("invalid_request", "not_running", "unknown_session"), raised.value
    assert pid_of() == pid


def test_a_run_config_with_a_negative_timeout_cannot_be_made() -> None:
    with pytest.raises(ValueError):
        RunConfig(timeout=-1)
    with pytest.raises(ValueError):
        RunConfig(max_llm_calls=0)


def test_a_storm_of_malformed_creates_leaves_the_host_serving(host: Any) -> None:
    """Before issue 18, 253 ``CreateSession(state=42)`` stopped a default host for good."""
    partition = host.partitions()[0]
    for number in range(300):
        with pytest.raises(CallError) as raised:
            call(host.system, partition, CreateSession("echo", "storm", f"storm-{number}", state=42), timeout=5.0)  # type: ignore[arg-type]
        assert raised.value.code == "invalid_request"
    runner = host.runner("echo")
    assert runner.list_sessions("storm") == []  # nothing was stored
    session = runner.create_session(user_id="storm")
    assert list(runner.run("storm", session.id, "after the storm"))[-1].content is not None
