"""Human approval of tool calls: the policy, the approval server, and runs that wait."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
import runtime_agents
from engine_helpers import run, summary

from adk_actors import LlmAgent
from adk_actors.engine import ConfirmationPolicy, InMemoryApprovals
from adk_actors.models import ScriptedModel, call
from adk_actors.runtime import Host, HostConfig
from adk_actors.runtime._approvals import ApprovalActor
from adk_actors.runtime._service_calls import Approve, Deny, RegisterApproval, WaitDecision
from adk_actors.tools import FunctionTool
from supervision import CallError, ChildSpec, SupervisorSpec, start_supervisor
from supervision import call as sup_call
from supervision.testing import kill_child, wait_until

RAN: list[str] = []


def wire_money(amount: int) -> dict[str, Any]:
    RAN.append(f"wired {amount}")
    return {"ok": True}


def agent(**kwargs: Any) -> LlmAgent:
    return LlmAgent(name="bank", model=ScriptedModel([call("wire_money", amount=100), "done"]),
                    tools=[kwargs.pop("tool", wire_money)], **kwargs)


def decide_soon(approvals: InMemoryApprovals, verdict: str) -> None:
    def later() -> None:
        wait_until(lambda: approvals.pending(), timeout=5)
        pending = approvals.pending()[0]["id"]
        approvals.approve(pending) if verdict == "approve" else approvals.deny(pending, "not today")

    threading.Thread(target=later, daemon=True).start()


def test_approved_call_runs_denied_call_never_does() -> None:
    RAN.clear()
    approvals = InMemoryApprovals()
    policy = ConfirmationPolicy(tools=["wire_money"], timeout=5)
    decide_soon(approvals, "approve")
    events = run(agent(confirmation_policy=policy), "pay", approvals=approvals)
    assert RAN == ["wired 100"] and summary(events)[2][1] == "result:wire_money={'ok': True}"
    decide_soon(approvals, "deny")
    events = run(agent(confirmation_policy=policy), "pay", approvals=approvals)
    assert RAN == ["wired 100"]  # the denied call never ran
    assert "was not approved, so it did not run: not today" in summary(events)[2][1]


def test_timeout_is_a_deny_and_no_service_means_no_run() -> None:
    RAN.clear()
    began = time.monotonic()
    events = run(agent(confirmation_policy=ConfirmationPolicy(timeout=0.3)), "pay", approvals=InMemoryApprovals())
    assert "no decision within 0.3 s" in summary(events)[2][1] and RAN == []
    assert time.monotonic() - began < 3
    events = run(agent(confirmation_policy=ConfirmationPolicy()), "pay")
    assert "no approval service" in summary(events)[2][1] and RAN == []


def test_google_adk_style_require_confirmation() -> None:
    RAN.clear()
    big_only = FunctionTool(wire_money, require_confirmation=lambda args: args["amount"] > 50)
    events = run(agent(tool=big_only), "pay")  # no approval service: held as google-adk holds it (issue 52)
    assert summary(events)[2][1] == "call:adk_request_confirmation" and RAN == []
    assert "requires confirmation" in summary(events)[3][1]


def test_a_decision_made_before_anyone_waits_is_not_lost(actor_system: Any, tmp_path: Path) -> None:
    sup = start_supervisor(actor_system, SupervisorSpec(children=(
        ChildSpec(id="approvals", start=ApprovalActor, args={"path": str(tmp_path / "a.db")}),)))
    server = sup.child("approvals").address
    approval = sup_call(actor_system, server, RegisterApproval("app", "ann", "s1", "run-1", "bot", "wire", {"a": 1}))
    assert sup_call(actor_system, server, Approve(approval.id)).status == "approved"
    began = time.monotonic()
    assert sup_call(actor_system, server, WaitDecision(approval.id, wait=30)).status == "approved"
    assert time.monotonic() - began < 1  # answered at once, from the store
    with pytest.raises(CallError, match="already approved"):
        sup_call(actor_system, server, Deny(approval.id))




def start_turn(runner: Any, session: str, text: str) -> tuple[threading.Thread, dict[str, Any]]:
    box: dict[str, Any] = {}

    def go() -> None:
        try:
            box["events"] = list(runner.run("ann", session, text))
        except Exception as exc:
            box["error"] = exc

    runner.create_session("ann", session)
    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    return thread, box


def test_runs_wait_for_a_human_through_the_host(host: Host) -> None:
    runner = host.runner("careful")
    thread, box = start_turn(runner, "s1", "/tmp/a.txt")
    pending = wait_until(lambda: runner.approvals("ann"), timeout=10)[0]
    assert (pending.tool, pending.args, pending.hint) == ("delete_file", {"path": "/tmp/a.txt"}, "deleting a file")
    runner.approve(pending.id)
    thread.join(10)
    assert box["events"][-1].content.text == "result: {'deleted': '/tmp/a.txt'}"

    thread, box = start_turn(runner, "s2", "/etc/passwd")
    pending = wait_until(lambda: runner.approvals("ann"), timeout=10)[0]
    runner.deny(pending.id, "never touch /etc")
    thread.join(10)
    assert "never touch /etc" in box["events"][-1].content.text
    assert runner.approvals("ann") == []


def test_an_approval_server_restart_while_a_run_waits(host: Host) -> None:
    runner = host.runner("careful")
    thread, box = start_turn(runner, "s1", "/tmp/b.txt")
    pending = wait_until(lambda: runner.approvals("ann"), timeout=10)[0]
    assert host.root is not None
    kill_child(host.services(), "approvals")
    assert [a.id for a in runner.approvals("ann")] == [pending.id]  # persisted
    runner.approve(pending.id)
    thread.join(15)
    assert box["events"][-1].content.text == "result: {'deleted': '/tmp/b.txt'}"


def test_after_a_host_restart_orphaned_approvals_are_expired(actor_system: Any, tmp_path: Path) -> None:
    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"))
    with Host(config, system=actor_system) as first:
        runner = first.runner("careful")
        thread, box = start_turn(runner, "s1", "/tmp/c.txt")
        wait_until(lambda: runner.approvals("ann"), timeout=10)
    thread.join(10)
    assert box.get("error") is not None  # the run was interrupted by the stop
    with Host(config, system=actor_system) as second:
        runner = second.runner("careful")
        assert runner.approvals("ann") == []
        expired = runner.approvals("ann", status="expired")
        assert len(expired) == 1 and expired[0].tool == "delete_file"


def test_a_tool_can_ask_for_confirmation_itself() -> None:
    from adk_actors.tools import ToolContext

    done: list[str] = []

    def purge(tool_context: ToolContext) -> dict[str, Any]:
        if not tool_context.request_confirmation("purge every cache?", timeout=5):
            return {"purged": False}
        done.append("purged")
        return {"purged": True}

    approvals = InMemoryApprovals()
    decide_soon(approvals, "approve")
    model = ScriptedModel([call("purge"), "ok"])
    events = run(LlmAgent(name="ops", model=model, tools=[purge]), "purge", approvals=approvals)
    assert done == ["purged"] and summary(events)[2][1] == "result:purge={'purged': True}"
    request = next(iter(approvals.requests.values()))
    assert (request["tool"], request["hint"]) == ("purge", "purge every cache?")


def test_no_decision_in_time_is_a_deny_through_the_host(host: Host) -> None:
    runner = host.runner("impatient")
    runner.create_session("ann", "s1")
    began = time.monotonic()
    events = list(runner.run("ann", "s1", "/tmp/d.txt"))
    assert time.monotonic() - began < 6
    assert "was not approved, so it did not run: no decision within 1 s (timed out)" in events[-1].content.text
    assert runner.approvals("ann") == []  # not left pending
    denied = wait_until(lambda: runner.approvals("ann", status="denied"), timeout=5)
    assert denied[0].tool == "delete_file" and "no decision" in denied[0].reason
