"""google-adk's ``a2a.converters.request_converter``: an A2A request as the
arguments of a run (:class:`AgentRunRequest`).

:func:`convert_a2a_request_to_agent_run_request`, in order: a request with no
message is a ValueError; the request's metadata (if any) is kept as the run's
``custom_metadata["a2a_metadata"]``; the message's parts go through the part
converter into the user's new message; the user is the authenticated caller's name,
else ``A2A_USER_<context id>`` (the rule our A2A executor runs tasks by); the
session is the context id.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from a2a.server.agent_execution import RequestContext
from pydantic import BaseModel, ConfigDict

from ..._types import Content, RunConfig
from ..executor.a2a_agent_executor import user_of_request
from ._common import as_dict, converted
from .part_converter import A2APartToGenAIPartConverter, convert_a2a_part_to_genai_part

__all__ = ["A2A_METADATA_KEY", "AgentRunRequest", "convert_a2a_request_to_agent_run_request"]

A2A_METADATA_KEY = "a2a_metadata"


class AgentRunRequest(BaseModel):
    """What a run is started with: ``runner.run_async(**request.model_dump())``-style
    arguments (the user, the session, the new message, the state delta, the run config)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    user_id: str | None = None
    session_id: str | None = None
    invocation_id: str | None = None
    new_message: Content | None = None
    state_delta: dict[str, Any] | None = None
    run_config: RunConfig | None = None


A2ARequestToAgentRunRequestConverter = Callable[[RequestContext, A2APartToGenAIPartConverter], AgentRunRequest]


def convert_a2a_request_to_agent_run_request(
        request: RequestContext,
        part_converter: A2APartToGenAIPartConverter = convert_a2a_part_to_genai_part) -> AgentRunRequest:
    """See the module."""
    if request.message is None:
        raise ValueError("an A2A request needs a message to run")
    metadata = as_dict(request.metadata)
    custom_metadata = {A2A_METADATA_KEY: metadata} if metadata else {}
    parts = converted(request.message.parts, part_converter)
    return AgentRunRequest(user_id=user_of_request(request), session_id=request.context_id,
                           new_message=Content(role="user", parts=parts),
                           run_config=RunConfig(custom_metadata=custom_metadata))
