"""The skill catalog as the model reads it (google-adk's ``google.adk.skills.prompt``)."""

from __future__ import annotations

import html
import warnings
from typing import Any

from . import _instruction, models

__all__ = ["format_skills_as_xml"]


def format_skills_as_xml(skills: list[models.Frontmatter | models.Skill]) -> str:
    """``skills`` as an ``<available_skills>`` block: one ``<skill>`` element per item,
    in order, holding its ``<name>`` and ``<description>`` (HTML-escaped), one tag or
    value per line; an empty list gives the opening and closing tags alone."""
    lines = ["<available_skills>"]
    for item in skills:
        lines += ["<skill>", "<name>", html.escape(item.name), "</name>",
                  "<description>", html.escape(item.description), "</description>", "</skill>"]
    lines.append("</available_skills>")
    return "\n".join(lines)


def __getattr__(name: str) -> Any:
    """``DEFAULT_SKILL_SYSTEM_INSTRUCTION``, still reachable here as in google-adk, with
    a ``DeprecationWarning`` naming its home (``adk_actors.tools.skill_toolset``)."""
    if name == "DEFAULT_SKILL_SYSTEM_INSTRUCTION":
        warnings.warn("DEFAULT_SKILL_SYSTEM_INSTRUCTION has moved: import it from"
                      " adk_actors.tools.skill_toolset, not adk_actors.skills.prompt.",
                      DeprecationWarning, stacklevel=2)
        return _instruction.DEFAULT_SKILL_SYSTEM_INSTRUCTION
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
