"""google-adk's ``google.adk.evaluation.simulation.static_user_simulator`` path:
:class:`StaticUserSimulator`, the user of a case with a fixed ``conversation``: it says
each invocation's ``user_content`` in turn, then stops (``adk_actors.evals._simulator``,
the one our eval runs replay such a case with)."""

from __future__ import annotations

from ...evals._simulator import StaticUserSimulator

__all__ = ["StaticUserSimulator"]
