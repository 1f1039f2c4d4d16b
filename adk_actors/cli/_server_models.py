"""The request and response bodies of google-adk's HTTP API, as its
``google.adk.cli.api_server`` and ``google.adk.cli.dev_server`` name them: what a
Python client builds a request with (``RunAgentRequest(...).model_dump(by_alias=True,
exclude_none=True)``) and reads an answer into.

Each validates and dumps as google-adk's: camelCase aliases (snake_case names accepted
too), the same defaults and required fields, unknown keys ignored. Where a route of the
host (``adk_actors.http``) takes the same shape, its own model is the one exported
(:mod:`adk_actors.cli.api_server`, :mod:`adk_actors.cli.dev_server`); those defined
here are the shapes no route of the host takes as they are.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from .._types import Content, Part
from ..evaluation.eval_config import LiveModelConfig
from ..evaluation.eval_metrics import (
    EvalMetric,
    EvalMetricResult,
    EvalMetricResultPerInvocation,
    EvalStatus,
    MetricInfo,
)
from ..evaluation.eval_result import EvalSetResult
from ..models import ServiceTier
from ..utils.agent_info import AgentInfo

__all__ = ["AppInfo", "CreateTestRequest", "EvalResult", "FinalizeAgentIdentityCredentialsRequest",
           "GetEventGraphResult", "ListAppsResponse", "ListEvalResultsResponse", "ListEvalSetsResponse",
           "ListMetricsInfoResponse",
           "RunAgentRequest", "RunEvalRequest", "RunEvalResponse", "RunEvalResult", "SaveArtifactRequest",
           "TelemetryConsentRequest"]


class _Camel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


def _fields_holder(value: Any) -> Any:
    """``value`` as it is, unless it is a plain value (text, a number, a list ...), which
    no google.genai model can be read from: then the error google.genai's models give
    for it (they read their fields from attributes too)."""
    if isinstance(value, (str, bytes, int, float, list, tuple, set, frozenset)):
        raise PydanticCustomError("model_attributes_type",
                                  "Input should be a valid dictionary or object to extract fields from")
    return value


#: google.genai's Content and Part, as a field of these models: ours, refused as google.genai's are
_Content = Annotated[Content, BeforeValidator(_fields_holder)]
_Part = Annotated[Part, BeforeValidator(_fields_holder)]


class RunAgentRequest(_Camel):
    """A turn for ``POST /run`` and ``POST /run_sse``. ``app_name`` may be left out
    where the server names a default app; ``function_call_event_id`` and
    ``invocation_id`` name what a resumed run answers; ``service_tier`` the serving
    tier asked of the run's model calls."""

    app_name: str | None = None
    user_id: str
    session_id: str
    new_message: _Content | None = None
    streaming: bool = False
    state_delta: dict[str, Any] | None = None
    function_call_event_id: str | None = None
    invocation_id: str | None = None
    custom_metadata: dict[str, Any] | None = None
    service_tier: ServiceTier | str | None = None


class SaveArtifactRequest(_Camel):
    """A new version of an artifact (``POST .../sessions/{id}/artifacts``)."""

    filename: str = Field(description="The artifact's name.")
    artifact: _Part = Field(description="Its content, as a google.genai Part.")
    custom_metadata: dict[str, Any] | None = Field(default=None, description="Metadata kept with this version.")


class FinalizeAgentIdentityCredentialsRequest(_Camel):
    """The end of an Agent Identity connector's three-legged consent: the connector's
    resource name, the user it is for, the validation state and the nonce its consent
    redirect gave back."""

    connector_name: str
    user_id: str
    user_id_validation_state: str
    consent_nonce: str


class AppInfo(_Camel):
    """One app of ``GET /list-apps?detailed=true``."""

    name: str
    root_agent_name: str
    description: str
    language: Literal["yaml", "python"]
    is_computer_use: bool = False
    agents: dict[str, AgentInfo] | None = None


class ListAppsResponse(_Camel):
    apps: list[AppInfo]


class CreateTestRequest(_Camel):
    session_data: dict[Any, Any]


class RunEvalRequest(_Camel):
    """An eval set's run (``POST /dev/apps/{app}/eval-sets/{id}/run``): the cases
    (none: every case), the metrics, and, for live models, the live run's settings and
    a user simulator's (its ``type`` picks the kind)."""

    eval_ids: list[str] = Field(default_factory=list, deprecated=True,
                                description="Deprecated: the older name of eval_case_ids.")
    eval_case_ids: list[str] = Field(default_factory=list,
                                     description="The eval cases to run; none: every case of the set.")
    eval_metrics: list[EvalMetric]
    live_model_config: LiveModelConfig | None = Field(
        default=None, description="How to run the cases on a live (bidirectional streaming) model.")
    user_simulator_config: dict[str, Any] | None = Field(
        default=None, description="A user simulator's settings, its kind named by their 'type'.")


class RunEvalResult(_Camel):
    """One eval case's outcome in a :class:`RunEvalResponse`."""

    eval_set_file: str
    eval_set_id: str
    eval_id: str
    final_eval_status: EvalStatus
    eval_metric_results: list[tuple[EvalMetric, EvalMetricResult]] = Field(
        default_factory=list, deprecated=True, description="Deprecated: see overall_eval_metric_results.")
    overall_eval_metric_results: list[EvalMetricResult]
    eval_metric_result_per_invocation: list[EvalMetricResultPerInvocation]
    user_id: str
    session_id: str


class RunEvalResponse(_Camel):
    run_eval_results: list[RunEvalResult]


class GetEventGraphResult(_Camel):
    dot_src: str


class EvalResult(EvalSetResult):
    """An eval set's result as ``GET /dev/apps/{app}/eval-results/{id}`` answers it
    (an :class:`EvalSetResult` under the route's name)."""


class ListEvalSetsResponse(_Camel):
    eval_set_ids: list[str]


class ListEvalResultsResponse(_Camel):
    eval_result_ids: list[str]


class ListMetricsInfoResponse(_Camel):
    metrics_info: list[MetricInfo]


class TelemetryConsentRequest(_Camel):
    """Whether the developer UI may send telemetry."""

    telemetry: bool
