"""google-adk's import path of ``GoogleMapsGroundingTool`` and ``google_maps_grounding``."""

from ._gemini_builtins import GoogleMapsGroundingTool, google_maps_grounding

__all__ = ["GoogleMapsGroundingTool", "google_maps_grounding"]
