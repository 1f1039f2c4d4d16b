"""Agents for the durable-run tests: a tree with every workflow agent, whose model
answers as a function of the request (so a resumed run gets the answers the
uninterrupted one got), and tools that count their executions outside the engine
(see ``_count``; ``pause_once_at`` pauses a step the first time only)."""

from __future__ import annotations

import asyncio
import fcntl
import time
from collections import Counter
from pathlib import Path
from typing import Any

from pid_files import write_pid

from adk_actors import LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from adk_actors.engine import App, Plugin
from adk_actors.models import ScriptedModel, call
from adk_actors.tools import FunctionTool, LongRunningFunctionTool, idempotent

COUNTS: Counter[str] = Counter()


def _count(kind: str, step: str, tool_context: Any) -> None:
    """Count an execution: in the file the session's state names (``counts_file``: a
    host's workers are other processes), else in ``COUNTS``. A step the state names in
    ``pause_at`` then waits a minute (a kill lands after the tool ran, before its
    result is committed)."""
    state = tool_context.state
    path = state.get("counts_file")
    if not path:
        COUNTS[f"{kind}:{step}"] += 1
        return
    with open(path, "a") as file:  # one line per execution, appended under a lock
        fcntl.flock(file, fcntl.LOCK_EX)
        file.write(f"{kind}:{step}\n")
    once = step in (state.get("pause_once_at") or []) and not Path(f"{path}.paused").exists()
    if once or step in (state.get("pause_at") or []):
        Path(f"{path}.paused").touch()
        write_pid(f"{path}.pid")  # the process to kill
        time.sleep(60)


def counted(path: str | Path) -> Counter[str]:
    """The executions written to ``path`` by the tools of a host's workers."""
    file = Path(path)
    return Counter(file.read_text().split()) if file.exists() else Counter()


@idempotent
def note(step: str, tool_context: Any) -> dict[str, Any]:
    """Write a note (harmless to repeat).

    Args:
        step: the step's name.
    """
    _count("note", step, tool_context)
    return {"noted": step}


def send(step: str, tool_context: Any) -> dict[str, Any]:
    """Send a message (not idempotent: it must not be sent twice).

    Args:
        step: the step's name.
    """
    _count("send", step, tool_context)
    return {"sent": step}


async def charge(step: str, tool_context: Any) -> dict[str, Any]:
    """Charge a card (not idempotent). A coroutine that blocks its loop while it works,
    as careless ones do: nothing else of the run moves meanwhile.

    Args:
        step: the step's name.
    """
    _count("charge", step, tool_context)
    return {"charged": step}


@idempotent
async def stall(step: str, tool_context: Any) -> dict[str, Any]:
    """Look something up (harmless to repeat). A coroutine that blocks its loop while
    it works: nothing the run holds is sent meanwhile.

    Args:
        step: the step's name.
    """
    _count("stall", step, tool_context)
    return {"looked up": step}


def book(step: str, tool_context: Any) -> dict[str, Any]:
    """Book a trip (a human approves each booking first).

    Args:
        step: the step's name.
    """
    _count("book", step, tool_context)
    return {"booked": step}


def answer(request: Any) -> Any:
    """The model: an agent named in its instruction ("You are NAME; use TOOL.") calls
    its tool first, then says it is done."""
    instruction = request.system_instruction
    name = instruction.split("You are ", 1)[1].split(";", 1)[0]
    tool = instruction.split("use ", 1)[1].split(".", 1)[0]
    last = request.contents[-1] if request.contents else None
    answered = last is not None and any(p.function_response is not None for p in last.parts)
    if tool == "nothing" or answered:
        return f"{name} done"
    return call(tool, step=name)


def _agent(name: str, tool: str) -> LlmAgent:
    tools = {"note": [note], "send": [send], "book": [FunctionTool(book, require_confirmation=True)],
             "charge": [charge], "stall": [stall], "nothing": []}[tool]
    return LlmAgent(name=name, model=ScriptedModel(fallback=answer), instruction=f"You are {name}; use {tool}.",
                    tools=tools)


def tree() -> SequentialAgent:
    """first (send) -> fan: left (note) | right (send) -> again: looped (note) x 2 -> last."""
    return SequentialAgent(name="root", sub_agents=[
        _agent("first", "send"),
        ParallelAgent(name="fan", sub_agents=[_agent("left", "note"), _agent("right", "send")]),
        LoopAgent(name="again", max_iterations=2, sub_agents=[_agent("looped", "note")]),
        _agent("last", "nothing"),
    ])


root_agent = tree()

class PauseAtBoundary(Plugin):
    """Before a model call or a tool call (a step boundary), when the invocation has
    committed exactly ``pause_after`` events (the state says; the user's counts), wait a
    minute, once: the test kills the run there."""

    name = "pause_at_boundary"

    async def before_model(self, state: Any, cb: Any, request: Any) -> tuple[Any, Any]:
        await _pause_if_due(cb.invocation)
        return state, None

    async def before_tool(self, state: Any, tool: Any, args: Any, tool_context: Any) -> tuple[Any, Any]:
        await _pause_if_due(tool_context.invocation)
        return state, None


async def _pause_if_due(ctx: Any) -> None:
    state = ctx.session.state
    due, path = state.get("pause_after"), state.get("counts_file")
    if due is None or not path or Path(f"{path}.paused").exists():
        return
    if sum(1 for e in ctx.session.events if e.invocation_id == ctx.invocation_id) == due:
        Path(f"{path}.paused").touch()
        write_pid(f"{path}.pid")
        await asyncio.sleep(60)


#: The tree, paused at a chosen step boundary (``PauseAtBoundary``).
boundary_app = App(root_agent=tree(), plugins=[PauseAtBoundary()])

#: The same tree in an app whose crashed runs the host resumes on its own, twice at most.
resuming_app = App(root_agent=tree(), resume_interrupted=2)

#: One agent whose tool blocks the run's loop while it charges.
charging_agent = _agent("payer", "charge")

#: A message sent (not idempotent), then a look-up that blocks the run's loop; crashed
#: runs are resumed.
sent_then_stalled_app = App(root_agent=SequentialAgent(name="root", sub_agents=[
    _agent("first", "send"), _agent("then", "stall")]), resume_interrupted=2)

#: One agent whose tool waits for a human's approval; crashed runs are resumed.
booking_app = App(root_agent=_agent("booker", "book"), resume_interrupted=2)


def ask_manager(question: str) -> None:
    """Ask a manager; the answer comes later, as a new message.

    Args:
        question: what to ask.
    """
    return None


def _ask(request: Any) -> Any:
    last = request.contents[-1]
    for part in last.parts:
        if part.function_response is not None:
            return f"the manager said {part.function_response.response.get('answer')}"
    return call("ask_manager", question="may I?")


#: An agent whose tool is long-running: its call ends the turn; the answer is a later message.
asking_app = App(root_agent=LlmAgent(name="asker", model=ScriptedModel(fallback=_ask),
                                     tools=[LongRunningFunctionTool(ask_manager)]))
