"""An app for the resume soak's report: one agent whose tool is slow and not
idempotent, so a run worker killed during a turn most likely kills it while the tool
runs, and its resume stops with ``needs_decision`` (the call may have run)."""

from __future__ import annotations

import time
from typing import Any

from adk_actors import LlmAgent
from adk_actors.models import ScriptedModel, call


def post_letter(to: str) -> dict[str, Any]:
    """Post a letter (not idempotent: it must not be posted twice). Takes a while.

    Args:
        to: who it is for.
    """
    time.sleep(0.5)
    return {"posted": to}


def _answer(request: Any) -> Any:
    last = request.contents[-1] if request.contents else None
    if last is not None and any(p.function_response is not None for p in last.parts):
        return "posted"
    return call("post_letter", to="Ann")


root_agent = LlmAgent(name="poster", model=ScriptedModel(fallback=_answer), instruction="You post letters.",
                      tools=[post_letter])
