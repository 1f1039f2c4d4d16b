"""The step after an answer of an agent whose model runs its code itself
(``LlmAgent(code_executor=BuiltInCodeExecutor())``), as google-adk's.

:func:`model_code_step`, in order: each image the answer carries (an ``inline_data``
part whose MIME type is ``image/...``, such as a chart the model's code drew) is saved
as an artifact of the session, named by its display name or else by the local time
(``YYYYmmdd_HHMMSS.<subtype>``), and its part replaced by the text ``Saved as
artifact: <name>. ``; then it gives the step's event: one of the agent with no content
whose ``artifact_delta`` names what was saved (empty when nothing was), and the answer
as it now is.
"""

from __future__ import annotations

import datetime

from .._types import Content, Event, EventActions, LlmResponse, Part
from ..agents.callback_context import CallbackContext
from ._context import InvocationContext

__all__ = ["model_code_step"]


def _file_name(part: Part) -> str:
    blob = part.inline_data
    assert blob is not None
    if blob.display_name:
        return blob.display_name
    stamp = datetime.datetime.now().astimezone().strftime("%Y%m%d_%H%M%S")
    return f"{stamp}.{blob.mime_type.split('/')[-1] or 'image'}"


async def model_code_step(ctx: InvocationContext, response: LlmResponse) -> tuple[Event, LlmResponse]:
    """The step's event and the answer with its images saved (see the module)."""
    content = response.content
    if content is None or not any(p.inline_data is not None and p.inline_data.mime_type.startswith("image/")
                                  for p in content.parts):
        return ctx.event(), response
    saver = CallbackContext(ctx)
    parts = []
    for part in content.parts:
        if part.inline_data is not None and part.inline_data.mime_type.startswith("image/"):
            name = _file_name(part)
            await saver.save_artifact(name, Part(inline_data=part.inline_data.model_copy(update={"display_name": None})))
            part = Part(text=f"Saved as artifact: {name}. ")
        parts.append(part)
    step = ctx.event(actions=EventActions(artifact_delta=dict(saver.actions.artifact_delta)))
    return step, response.model_copy(update={"content": Content(role=content.role, parts=tuple(parts))})
