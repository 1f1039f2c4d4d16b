"""What a human decides for a call that a resumed run cannot know ran (durable runs:
see ``engine._resume``), and how such a call is shown to them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["CallDecision", "PendingCall"]

Action = Literal["rerun", "result", "end"]


@dataclass(frozen=True)
class CallDecision:
    """A human's answer for one call left without a committed result: ``rerun`` it,
    take ``result`` as its response, or ``end`` the run."""

    action: Action
    result: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.action not in ("rerun", "result", "end"):
            raise ValueError(f"a decision is 'rerun', 'result' or 'end', not {self.action!r}")
        if self.action == "result" and not isinstance(self.result, dict):
            raise ValueError("a 'result' decision needs the call's response, as a dict")


@dataclass(frozen=True)
class PendingCall:
    """A call whose tool may have run: it has no committed response."""

    call_id: str
    name: str
    args: dict[str, Any]
    agent: str

    def to_dict(self) -> dict[str, Any]:
        return {"call_id": self.call_id, "name": self.name, "args": self.args, "agent": self.agent}
