"""What a run request asks for, as a type: built once, where the request enters its session.

In order: ``turn_of`` reads a ``RunRequest`` (``messages``) as one of four turns: a
:class:`FollowTurn` (a ``FollowRun``: join a run another request started), a
:class:`LiveTurn` (``live``: its inputs come as ``LiveInput``), a :class:`ResumeTurn`
(``resume``: continue an earlier run's invocation from its committed events), else a
:class:`NewTurn` (a user message). ``Session.take`` matches on it; the three that start
a run (``RunTurn``) are kept on the session's run, and travel to the run worker in
``StartRun.turn``, where ``RunActor`` matches on it to pick the engine's entry point.
A request that is both live and a resume is refused (``invalid_request``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from supervision import BadRequest

from .._decisions import CallDecision
from .._types import Content
from ..messages import FollowRun, RunRequest

__all__ = ["FollowTurn", "LiveTurn", "NewTurn", "ResumeTurn", "RunTurn", "Turn", "turn_of"]


@dataclass(frozen=True)
class NewTurn:
    """A user message, and the state changes committed with it (on its event)."""

    message: Content
    state_delta: dict[str, Any] | None = None


@dataclass(frozen=True)
class LiveTurn:
    """A live conversation: no message; its inputs come as ``LiveInput`` (``LiveSend``
    to its worker) until it is closed, cancelled or past its deadline."""


@dataclass(frozen=True)
class ResumeTurn:
    """Continue the invocation of run ``resumes`` from its committed events.
    ``decisions``: call id -> CallDecision, for the calls it stopped before;
    ``message`` and ``state_delta``: the resumed run's own (``Session.take`` reads them
    from the store), for a run that committed nothing yet."""

    resumes: str
    decisions: dict[str, CallDecision] | None = None
    message: Content = field(default_factory=lambda: Content.user(""))
    state_delta: dict[str, Any] | None = None


@dataclass(frozen=True)
class FollowTurn:
    """Join run ``run_id`` as its caller, after event ``after`` (see ``Session.follow``)."""

    run_id: str
    after: str = ""


#: The turns that start a run on a worker.
RunTurn = NewTurn | LiveTurn | ResumeTurn
Turn = RunTurn | FollowTurn


def turn_of(request: RunRequest) -> Turn:
    """The turn ``request`` asks for (see the module); BadRequest for one both live and
    a resume."""
    if isinstance(request, FollowRun):
        return FollowTurn(request.run_id, request.after)
    if request.live and request.resume:
        raise BadRequest("a RunRequest is live or resumes a run, not both")
    if request.live:
        return LiveTurn()
    if request.resume:
        return ResumeTurn(request.resume, request.decisions, request.new_message, request.state_delta)
    return NewTurn(request.new_message, request.state_delta)
