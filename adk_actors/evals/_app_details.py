"""What each agent of the app was told, per invocation: google-adk's ``AppDetails``,
recorded while an eval case runs in this process, for the judge metrics that read an
agent's instructions and tools (``rubric_based_multi_turn_trajectory_quality_v1``).

:class:`AppDetailsRecorder` is a plugin added after the app's own. On every model
call it keeps, under the call's invocation id and the calling agent's name, the
request's system instruction and its function declarations (as one Gemini ``Tool``
entry, ``{"function_declarations": [...]}``, google-adk's shape), from the agent's
first model call of the invocation (as google-adk keeps them). It never answers, so the call goes
on as it would without it. A model call that an earlier plugin answered is not seen.
"""

from __future__ import annotations

from typing import Any

from .._types import LlmRequest, LlmResponse
from ..plugins.base_plugin import BasePlugin
from ._models import AgentDetails, AppDetails

__all__ = ["AppDetailsRecorder"]


class AppDetailsRecorder(BasePlugin):
    """Keeps each invocation's :class:`AppDetails` (see the module)."""

    def __init__(self) -> None:
        super().__init__(name="adk_actors_eval_app_details")
        self._seen: dict[str, AppDetails] = {}

    async def before_model_callback(self, *, callback_context: Any, llm_request: LlmRequest) -> LlmResponse | None:
        declarations = [tool.model_dump(mode="json", exclude_none=True) for tool in llm_request.tools]
        details = AgentDetails(name=callback_context.agent_name, instructions=llm_request.system_instruction,
                               tool_declarations=[{"function_declarations": declarations}] if declarations else [])
        kept = self._seen.setdefault(callback_context.invocation_id, AppDetails())
        kept.agent_details.setdefault(details.name, details)
        return None

    def details_of(self, invocation_id: str) -> AppDetails | None:
        """The invocation's app details; None when no model call of it was seen."""
        return self._seen.get(invocation_id)
