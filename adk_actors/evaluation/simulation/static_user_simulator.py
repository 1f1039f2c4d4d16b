"""google-adk's ``google.adk.evaluation.simulation.static_user_simulator`` path:
:class:`StaticUserSimulator`, the user of a case with a fixed ``conversation``: it says
each invocation's ``user_content`` in turn, then stops."""

from __future__ import annotations

from typing import Any

from ..._types import Event
from ...evals import Invocation
from .user_simulator import BaseUserSimulatorConfig, NextUserMessage, Status, UserSimulator

__all__ = ["StaticUserSimulator"]


class StaticUserSimulator(UserSimulator):
    """``StaticUserSimulator(static_conversation=[...])`` (see the module)."""

    def __init__(self, *, static_conversation: list[Invocation]) -> None:
        super().__init__(BaseUserSimulatorConfig(), config_type=BaseUserSimulatorConfig)
        self.static_conversation = static_conversation
        self.invocation_idx = 0

    async def get_next_user_message(self, events: list[Event]) -> NextUserMessage:
        """The next invocation's ``user_content`` (``SUCCESS``), whatever ``events``
        holds; after the last one, ``STOP_SIGNAL_DETECTED`` with no message, on every
        later call too."""
        if self.invocation_idx >= len(self.static_conversation):
            return NextUserMessage(status=Status.STOP_SIGNAL_DETECTED)
        message = self.static_conversation[self.invocation_idx].user_content
        self.invocation_idx += 1
        return NextUserMessage(status=Status.SUCCESS, user_message=message)

    def get_simulation_evaluator(self) -> Any:
        """None: a fixed conversation needs no evaluator of its own."""
        return None
