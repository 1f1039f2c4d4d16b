"""What a session actor and its run actor say to each other.

The session sends ``RunSettings`` once (the args of the run actor's ``Init``), then
``StartRun`` (a turn to run) and ``Cancel``; the run answers with
``RunOutput`` messages, the last of a run carrying its ``RunOutcome``. They travel on
the direct line of ``_link`` when it can take them, through Thespian otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._types import Content, Event, RunConfig

__all__ = ["Cancel", "RunOutcome", "RunOutput", "RunSettings", "StartRun"]


@dataclass(frozen=True)
class RunSettings:
    """What every run of one run actor shares: sent once, with its ``Init``; never
    with each turn."""

    agent_path: str
    app_name: str
    user_id: str
    session_id: str
    registry: Any = None  # where to find the host's services (None: runs use none)
    model_base_urls: dict[str, str] | None = None
    model_options: dict[str, Any] | None = None  # retry policy and timeout for provider connectors


@dataclass(frozen=True)
class StartRun:
    """One turn: what the run actor does not hold yet."""

    run_id: str
    invocation_id: str
    base_count: int  # events of the history the run actor holds (forked with it, or its last turn's) to keep
    extra_events: list[Event]  # events appended since
    state: dict[str, Any]
    new_message: Content
    run_config: RunConfig

    def __str__(self) -> str:  # what Thespian logs for it (see supervision._messages)
        return f"StartRun({self.run_id})"


@dataclass(frozen=True)
class Cancel:
    reason: str = "cancelled"


@dataclass(frozen=True)
class RunOutcome:
    run_id: str
    ok: bool
    reason: str = ""
    error_type: str = ""
    detail: str = ""


@dataclass(frozen=True)
class RunOutput:
    """Events of a run, in order; the last output of a run carries its outcome too
    (one message instead of two at the end of every turn)."""

    run_id: str
    events: list[Event]
    outcome: RunOutcome | None = None

    def __str__(self) -> str:
        return f"RunOutput({self.run_id}, {len(self.events)} events, outcome={self.outcome is not None})"
