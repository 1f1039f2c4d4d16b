"""google-adk's import path of ``LoadArtifactsTool``, ``load_artifacts_tool``
(``adk_actors.tools.load_artifacts`` is that same instance) and
``as_safe_part_for_llm``."""

from __future__ import annotations

from typing import Any

from .._types import Part
from ..types import ours
from ._load_artifacts import LoadArtifactsTool, _readable, load_artifacts_tool

load_artifacts = load_artifacts_tool

__all__ = ["LoadArtifactsTool", "as_safe_part_for_llm", "load_artifacts", "load_artifacts_tool"]


def as_safe_part_for_llm(artifact: Any, artifact_name: str, enable_spreadsheet_parsing: bool = False) -> Part:
    """``artifact`` (a Part, ours or google.genai's) as a part a model can take, by
    the rule ``load_artifacts`` shows artifacts with: a part without inline data, an
    image, audio, video or PDF as it is; a text-like one (``text/*``, JSON, CSV,
    XML, or a ``.txt``/``.csv``/``.json``/``.xml`` name) as its text (bad UTF-8
    replaced); any other binary as one line naming it, its size and type.

    Raises ``InvalidRequestError`` when ``artifact`` is no Part.
    ``enable_spreadsheet_parsing`` is accepted for google-adk's signature, but a
    spreadsheet is not parsed here: it is shown as that one line."""
    return _readable(ours(artifact, Part), artifact_name)
