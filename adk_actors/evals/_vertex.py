"""google-adk's metrics that Vertex AI's Gen AI evaluation service scores, named here so
a config that names them loads and says plainly why they give no score.

google-adk 2.13 hands these to the Vertex AI SDK (``client.evals.evaluate`` with a
prebuilt or rubric metric: ``SAFETY`` v1, ``COHERENCE``, ``MULTI_TURN_TASK_SUCCESS``,
``MULTI_TURN_TRAJECTORY_QUALITY``, ``MULTI_TURN_TOOL_USE_QUALITY``), which needs a
Google Cloud project and location (or an API key) and calls Google's service; the
request and answer on the wire are the SDK's, not written in google-adk's source, so
no stand-in of that service is built here. Naming one in a config raises
:class:`VertexEvalRequired` (an :class:`EvalError`) naming the metric and what it
needs, when the metrics are checked, before any agent runs (google-adk, without a
project, runs the agent and reports the metric not evaluated).
"""

from __future__ import annotations

from ._errors import EvalError
from ._models import EvalMetric

__all__ = [
    "MULTI_TURN_TASK_SUCCESS",
    "MULTI_TURN_TOOL_USE_QUALITY",
    "MULTI_TURN_TRAJECTORY_QUALITY",
    "RESPONSE_EVALUATION",
    "SAFETY_V1",
    "VERTEX_METRICS",
    "VertexEvalRequired",
    "vertex_required",
]

SAFETY_V1 = "safety_v1"
RESPONSE_EVALUATION = "response_evaluation_score"
MULTI_TURN_TASK_SUCCESS = "multi_turn_task_success_v1"
MULTI_TURN_TRAJECTORY_QUALITY = "multi_turn_trajectory_quality_v1"
MULTI_TURN_TOOL_USE_QUALITY = "multi_turn_tool_use_quality_v1"

#: each Vertex-scored metric and the Vertex metric google-adk asks for
VERTEX_METRICS = {
    SAFETY_V1: "PrebuiltMetric.SAFETY (version v1)",
    RESPONSE_EVALUATION: "PrebuiltMetric.COHERENCE",
    MULTI_TURN_TASK_SUCCESS: "RubricMetric.MULTI_TURN_TASK_SUCCESS",
    MULTI_TURN_TRAJECTORY_QUALITY: "RubricMetric.MULTI_TURN_TRAJECTORY_QUALITY",
    MULTI_TURN_TOOL_USE_QUALITY: "RubricMetric.MULTI_TURN_TOOL_USE_QUALITY",
}


class VertexEvalRequired(EvalError):
    """A metric that only Vertex AI's Gen AI evaluation service scores was asked for
    (the message names the metric and what it needs)."""


def vertex_required(metric: EvalMetric) -> VertexEvalRequired:
    """The error for scoring ``metric``, one of :data:`VERTEX_METRICS`."""
    name = metric.metric_name
    return VertexEvalRequired(
        f"metric {name!r} is not offered here: it is scored by Vertex AI's Gen AI evaluation service "
        f"({VERTEX_METRICS[name]}), which adk-actors does not call; it needs a Google Cloud project with the Vertex AI API (GOOGLE_CLOUD_PROJECT, "
        "GOOGLE_CLOUD_LOCATION and application default credentials) and the Vertex AI SDK. Run it with "
        "google-adk, or use a judge metric offered here (rubric_based_multi_turn_trajectory_quality_v1, "
        "rubric_based_final_response_quality_v1, hallucinations_v1)")
