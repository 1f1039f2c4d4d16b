"""google-adk's ``google.adk.evaluation.app_details`` path (see :mod:`adk_actors.evals`)."""

from ..evals import AgentDetails, AppDetails

__all__ = ["AgentDetails", "AppDetails"]
