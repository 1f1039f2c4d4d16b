"""The two google-adk feature switches the skills read, by google-adk's environment
variables: ``ADK_ENABLE_<NAME>`` / ``ADK_DISABLE_<NAME>`` (``1``, ``true``, ``yes``,
``on``), each read when asked, so a test may set one for a while."""

from __future__ import annotations

import os

__all__ = ["SKILL_LIFECYCLE", "SNAKE_CASE_SKILL_NAME", "enabled"]

#: snake_case skill names too (off by default, as in google-adk 2.13)
SNAKE_CASE_SKILL_NAME = "SNAKE_CASE_SKILL_NAME"
#: the ``unload_skill`` tool and the pruning of unloaded skills (off by default)
SKILL_LIFECYCLE = "SKILL_LIFECYCLE"

_TRUE = ("1", "true", "yes", "on")


def enabled(name: str, default: bool = False) -> bool:
    """Whether the switch ``name`` is on: ``ADK_ENABLE_<name>`` set true turns it on,
    else ``ADK_DISABLE_<name>`` set true turns it off, else ``default`` (google-adk's
    order)."""
    if os.environ.get(f"ADK_ENABLE_{name}", "").strip().lower() in _TRUE:
        return True
    if os.environ.get(f"ADK_DISABLE_{name}", "").strip().lower() in _TRUE:
        return False
    return default
