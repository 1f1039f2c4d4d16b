"""google-adk's ``google.adk.cli.dev_server``: the bodies of its development routes
(eval sets and runs, graphs, tests, telemetry consent) and :class:`DevServer`.

Where one of the host's ``/dev`` routes takes the same shape its own body model is the
one exported here: ``AddSessionToEvalSetRequest`` (``POST .../eval-sets/{id}/add-session``)
and ``CreateEvalSetRequest`` (``POST .../eval-sets``). The others are in
:mod:`adk_actors.cli._server_models`; among them ``RunEvalRequest`` (google-adk's, with
``liveModelConfig`` and ``userSimulatorConfig``, which the host's eval run does not
take) and the answers' shapes (``RunEvalResponse``, ``ListEvalSetsResponse``,
``ListMetricsInfoResponse``, ``GetEventGraphResult``, ``EvalResult``...).

:class:`DevServer` is :class:`~adk_actors.cli.api_server.ApiServer` with the
development routes: the app serves the console at ``/``, adk-web at ``/dev-ui/`` (when
google-adk is installed) and the ``/dev`` routes, as ``adk-actors web``.
"""

from __future__ import annotations

from ..http._evals import AddSessionBody as AddSessionToEvalSetRequest
from ..http._evals import CreateEvalSetBody as CreateEvalSetRequest
from ._server_models import (
    CreateTestRequest,
    EvalResult,
    GetEventGraphResult,
    ListEvalResultsResponse,
    ListEvalSetsResponse,
    ListMetricsInfoResponse,
    RunEvalRequest,
    RunEvalResponse,
    RunEvalResult,
    TelemetryConsentRequest,
)
from .api_server import ApiServer

__all__ = ["AddSessionToEvalSetRequest", "CreateEvalSetRequest", "CreateTestRequest", "DevServer", "EvalResult",
           "GetEventGraphResult", "ListEvalResultsResponse", "ListEvalSetsResponse", "ListMetricsInfoResponse",
           "RunEvalRequest", "RunEvalResponse", "RunEvalResult", "TelemetryConsentRequest"]


class DevServer(ApiServer):
    """google-adk's development server on an adk-actors host: :class:`ApiServer`, its
    parameters checked and refused the same way, whose app also serves the console,
    adk-web and the ``/dev`` routes (``web=True`` of ``get_fast_api_app``). As
    google-adk's, for local development: bind it to loopback."""

    _web = True
