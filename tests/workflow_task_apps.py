"""A workflow with a task agent node for tests/test_workflow_task.py's host test
(imported by the host's processes by path: ``workflow_task_apps:<name>``)."""

from __future__ import annotations

from typing import Any

from adk_actors import LlmAgent
from adk_actors.workflow import START, Workflow


def confirm(node_input: Any, ctx: Any) -> str:
    ctx.state["confirmed"] = node_input
    return f"confirmed: {node_input['result']}"


booker = LlmAgent(name="booker", model="gemini-2.0-flash", instruction="Book a table for the user.", mode="task")
booking = Workflow(name="booking", edges=[(START, booker, confirm)])

APPS = {"booking": "workflow_task_apps:booking"}
