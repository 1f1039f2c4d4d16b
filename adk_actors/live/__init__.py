"""google-adk's ``google.adk.live`` path for the live-run queue: ``LiveRequestQueue`` and
``LiveRequest`` are the same classes as :mod:`adk_actors.agents` gives (a queue made
here feeds ``Runner.run_live`` as one made there does). google-adk's cascade pipeline
(``CascadeLive``, its speech-to-text and text-to-speech stages and their events) is not
built: live runs here go to the model's own live connection."""

from .live_request_queue import LiveRequest, LiveRequestQueue

__all__ = ["LiveRequest", "LiveRequestQueue"]
