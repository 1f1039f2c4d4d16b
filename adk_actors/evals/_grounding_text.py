"""The grounding of an invocation's events as the text a judge's prompt carries
(google-adk's ``get_grounding_metadata_as_json_str``; ``adk_actors.evaluation.
llm_as_judge_utils`` gives it at google-adk's path): what Gemini's own search or
retrieval found for the agent, which the judges of ``hallucinations_v1`` and
``rubric_based_final_response_quality_v1`` count as context."""

from __future__ import annotations

import json
from typing import Any

from ._models import InvocationEvents

__all__ = ["NO_GROUNDING", "grounding_text"]

#: what a judge is shown when no event of the invocation carries grounding
NO_GROUNDING = "No grounding metadata was provided."


def grounding_text(intermediate_data: Any) -> str:
    """The grounding metadata of an invocation's events, each with its step (the
    event's index) and author, as JSON: ``{"grounding_metadata": [{"step", "author",
    "grounding_metadata"}]}`` (snake_case field names, empty fields left out),
    indented by 2; :data:`NO_GROUNDING` when the data is not events or no event has any."""
    if not isinstance(intermediate_data, InvocationEvents):
        return NO_GROUNDING
    entries: list[dict[str, Any]] = []
    for step, event in enumerate(intermediate_data.invocation_events):
        if event.grounding_metadata is not None:
            entries.append({"step": step, "author": event.author,
                            "grounding_metadata": event.grounding_metadata.model_dump(mode="json", exclude_none=True)})
    if not entries:
        return NO_GROUNDING
    return json.dumps({"grounding_metadata": entries}, indent=2, ensure_ascii=False)
