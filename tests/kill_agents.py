"""Agents for tests/test_kill_is_kill.py, imported by path inside the run workers.

``marker``'s tool appends a line (its pid, thread and the wall clock) to a file every
100 ms for as long as it is asked: a side effect that shows whether its work goes on.
It blocks on its thread, so a cancel cannot stop it at a step boundary: only its
process's death does. ``patient``'s tool naps; its app resumes runs a crash ended.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from adk_actors import LlmAgent, LlmRequest
from adk_actors.engine import App
from adk_actors.models import ScriptedModel, call
from adk_actors.tools import idempotent


def _last_user_text(request: LlmRequest) -> str:
    for content in reversed(request.contents):
        if content.role == "user" and content.text:
            return content.text
    return ""


def _tool_answered(request: LlmRequest) -> bool:
    return bool(request.contents) and bool(request.contents[-1].function_responses)


def mark(path: str, seconds: float) -> str:
    """Append a line to ``path`` every 100 ms for ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with open(path, "a") as out:
            out.write(f"{os.getpid()} {threading.get_ident()} {time.time():.6f}\n")
        time.sleep(0.1)
    return "marked"


def _marker(request: LlmRequest) -> Any:
    if _tool_answered(request):
        return "marked"
    words = _last_user_text(request).split()
    if len(words) == 3 and words[0] == "mark":
        return call("mark", path=words[1], seconds=float(words[2]))
    return "idle"


marker_agent = LlmAgent(name="marker", model=ScriptedModel(fallback=_marker), tools=[mark])


@idempotent
def nap(seconds: float) -> str:
    """Sleep for ``seconds`` (safe to run again: a resumed run reruns it)."""
    time.sleep(seconds)
    return "rested"


def _patient(request: LlmRequest) -> Any:
    if _tool_answered(request):
        return "rested well"
    words = _last_user_text(request).split()
    if len(words) == 2 and words[0] == "nap":
        return call("nap", seconds=float(words[1]))
    return "awake"


patient_app = App(root_agent=LlmAgent(name="patient", model=ScriptedModel(fallback=_patient), tools=[nap]),
                  resume_interrupted=2)

APPS = {"marker": "kill_agents:marker_agent", "patient": "kill_agents:patient_app"}
