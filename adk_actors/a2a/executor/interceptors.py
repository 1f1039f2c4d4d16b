"""google-adk's ``a2a.executor.interceptors``:
:data:`include_artifacts_in_a2a_event_interceptor`, an :class:`~.config.ExecuteInterceptor`
whose ``after_event`` publishes the artifacts an event saved.

For a status or artifact update made of an event whose ``artifact_delta`` names
artifacts, and a runner with an artifact service: each artifact's version is loaded
(for the task's app, user and session) and, when it has a part A2A can carry, becomes
an artifact update after the event's (artifact id ``<filename>_<version>``, named
after its file, the event's metadata, one whole chunk); the event's ``artifact_delta``
is then emptied. Any other event passes as it is.
"""

from __future__ import annotations

from a2a.server.events import Event as A2AEvent
from a2a.types import Artifact, TaskArtifactUpdateEvent, TaskStatusUpdateEvent

from ..._types import Event
from ..converters.part_converter import convert_genai_part_to_a2a_part
from .config import ExecuteInterceptor
from .executor_context import ExecutorContext

__all__ = ["include_artifacts_in_a2a_event_interceptor"]


async def _with_artifacts(ctx: ExecutorContext, a2a_event: A2AEvent, adk_event: Event) -> A2AEvent | list[A2AEvent]:
    """See the module."""
    if not isinstance(a2a_event, (TaskStatusUpdateEvent, TaskArtifactUpdateEvent)):
        return a2a_event
    service = getattr(ctx.runner, "artifact_service", None)
    if service is None or not adk_event.actions.artifact_delta:
        return a2a_event
    more: list[A2AEvent] = []
    for filename, version in adk_event.actions.artifact_delta.items():
        loaded = await service.load_artifact(app_name=ctx.app_name, user_id=ctx.user_id,
                                             session_id=ctx.session_id, filename=filename, version=version)
        part = convert_genai_part_to_a2a_part(loaded) if loaded else None
        if part is not None:
            more.append(TaskArtifactUpdateEvent(
                task_id=a2a_event.task_id, context_id=a2a_event.context_id, metadata=a2a_event.metadata,
                append=False, last_chunk=True,
                artifact=Artifact(artifact_id=f"{filename}_{version}", name=filename, parts=[part])))
    adk_event.actions.artifact_delta = {}
    return [a2a_event, *more] if more else a2a_event


include_artifacts_in_a2a_event_interceptor = ExecuteInterceptor(after_event=_with_artifacts)
