"""google-adk's ``TranscriptionEntry``: one piece of a live conversation kept for
transcription, the audio (a Blob) or text (a Content) and who said it (``role``:
``user`` or ``model``; None for a function call). A plain data type: it validates its
fields (an unknown one is refused) and does nothing else."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from .._types import Blob, Content

__all__ = ["TranscriptionEntry"]


class TranscriptionEntry(BaseModel):
    """See the module."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    role: str | None = None
    data: Blob | Content
