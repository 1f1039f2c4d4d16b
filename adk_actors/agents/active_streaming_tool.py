"""google-adk's ``ActiveStreamingTool``: what a live run keeps of a streaming tool
while it runs, its task and the :class:`LiveRequestQueue` that feeds it input. A
plain data type: it validates its fields (an unknown one is refused) and does
nothing else."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel, ConfigDict

from .live_request_queue import LiveRequestQueue

__all__ = ["ActiveStreamingTool"]


class ActiveStreamingTool(BaseModel):
    """See the module."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    task: asyncio.Task[Any] | None = None
    stream: LiveRequestQueue | None = None
