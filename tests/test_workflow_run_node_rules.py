"""Issue: ``ctx.run_node`` only from a node that runs again on resume, side by side with
google-adk 2.13.

google-adk refuses ``ctx.run_node(...)`` called from a node without
``rerun_on_resume=True`` (a child may wait for input, and it is answered by running its
parent again): a ``ValueError``, raised in the calling node before the child runs, so
the calling node fails with it (its error event at its path) and the run ends with it.
The same program (google-adk's source, and the same with its imports rewritten for
ours) runs on both kits; what a user reads of each event (author, node path, output,
error code and message) and the error that ended the run must be the same. The cases:
a ``FunctionNode`` left at its default, one built by ``@node`` without the setting
(both refused), and one with ``rerun_on_resume=True`` (its child runs).
"""

from __future__ import annotations

import json
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import rewritten, run_program

pytest.importorskip("google.adk.workflow")

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"),
              pytest.mark.timeout(120)]

stand_in, gemini = harness.stand_in, harness.gemini

PROGRAM = '''
import logging

from google.adk.runners import InMemoryRunner
from google.adk.workflow import FunctionNode, Workflow, node
from google.genai import types

logging.disable(logging.CRITICAL)  # google-adk logs each failed node with its traceback


def child(node_input):
    return f"child saw {node_input}"


async def parent(ctx, node_input):
    return await ctx.run_node(FunctionNode(name="child", func=child), "tea")


@node(name="decorated")
async def decorated(ctx, node_input):
    return await ctx.run_node(FunctionNode(name="child", func=child), "tea")


CASES = {
    "default": lambda: FunctionNode(name="parent", func=parent),
    "decorated": lambda: decorated,
    "rerun": lambda: FunctionNode(name="parent", func=parent, rerun_on_resume=True),
}


async def main(case):
    workflow = Workflow(name="flow", edges=[("START", CASES[case]())])
    runner = InMemoryRunner(agent=workflow, app_name="shop")
    session = await runner.session_service.create_session(app_name="shop", user_id="ann")
    events, error = [], None
    try:
        async for event in runner.run_async(user_id="ann", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text="go")])):
            events.append(event)
    except Exception as exc:
        error = (type(exc).__name__, str(exc))
    await runner.close()
    return events, error
'''


def _rows(events: list[Any]) -> list[dict[str, Any]]:
    """What a google-adk user reads of each event."""
    return [json.loads(json.dumps({
        "author": e.author, "path": e.node_info.path if e.node_info else None, "output": e.output,
        "error_code": e.error_code, "error_message": e.error_message}, default=str, sort_keys=True)) for e in events]


def run_both(server: Any, case: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The case on google-adk, then on ours: its event rows and its error (class, text)."""
    seen = []
    for source in (PROGRAM, rewritten(PROGRAM)):
        _, (events, error) = run_program(source, [], server, case)
        seen.append({"events": _rows(events), "error": list(error) if error else None})
    return seen[0], seen[1]


@pytest.mark.parametrize(("case", "path"), [("default", "flow@1/parent@1"), ("decorated", "flow@1/decorated@1")])
def test_run_node_from_a_node_without_rerun_on_resume_is_refused_as_in_google_adk(gemini: Any, case: str,
                                                                                   path: str) -> None:
    theirs, ours = run_both(gemini, case)
    # the same error class, in the same event; the words are each kit's own
    assert theirs["error"] is not None and theirs["error"][0] == "ValueError" == ours["error"][0]
    assert "rerun_on_resume=True" in theirs["error"][1] and "rerun_on_resume=True" in ours["error"][1]
    # the calling node's error event is the run's only event: the child never ran
    for side in (theirs, ours):
        assert [(row["path"], row["error_code"], row["error_message"]) for row in side["events"]] == [
            (path, "ValueError", side["error"][1])]


def test_run_node_from_a_node_with_rerun_on_resume_runs_the_child_as_in_google_adk(gemini: Any) -> None:
    theirs, ours = run_both(gemini, "rerun")
    assert ours == theirs
    assert theirs["error"] is None
    outputs = [(row["path"], row["output"]) for row in theirs["events"] if row["output"] is not None]
    assert ("flow@1/parent@1/child@1", "child saw tea") in outputs
    assert outputs[-1] == ("flow@1/parent@1", "child saw tea")
