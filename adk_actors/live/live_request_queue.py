"""google-adk's ``google.adk.live.live_request_queue`` path (see :mod:`adk_actors.live`)."""

from ..agents.live_request_queue import LiveRequest, LiveRequestQueue

__all__ = ["LiveRequest", "LiveRequestQueue"]
