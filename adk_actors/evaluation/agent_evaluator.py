"""google-adk's ``google.adk.evaluation.agent_evaluator`` path (see :mod:`adk_actors.evals`),
with :func:`load_json`."""

from __future__ import annotations

import json
from typing import Any

from ..evals import NUM_RUNS, AgentEvaluator, EvalFailed

__all__ = ["NUM_RUNS", "AgentEvaluator", "EvalFailed", "load_json"]


def load_json(file_path: str) -> dict[str, Any] | list[Any]:
    """The JSON value in the UTF-8 file at ``file_path``. OSError when it cannot be
    read, ``json.JSONDecodeError`` (a ValueError) when it is not JSON; a JSON value that
    is neither an object nor an array is returned as it is, as google-adk's does."""
    with open(file_path, encoding="utf-8") as file:
        loaded: dict[str, Any] | list[Any] = json.load(file)
    return loaded
