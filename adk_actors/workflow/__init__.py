"""google-adk 2.x's graph workflows (``google.adk.workflow``): ``Workflow`` with
``Edge``\\ s from ``START``, nodes that are agents, functions, ``FunctionNode``\\ s,
``JoinNode``\\ s and nested workflows, routes (``DEFAULT_ROUTE``, route maps, fan-out),
per-node ``RetryConfig`` and timeouts, ``RequestInput`` (a node that waits for a
human's answer, across restarts), and the graph views adk-web draws
(``workflow_info``, ``graph_views``). A workflow is an agent: a Runner, an App or a
host runs it as any root agent, on the same engine.
"""

from ._errors import (
    GraphValidationError,
    NodeTimeoutError,
    WorkflowConfigurationError,
    WorkflowDataError,
    WorkflowResumeError,
)
from ._graph import DEFAULT_ROUTE, Edge
from ._input import REQUEST_INPUT_FUNCTION_CALL_NAME, RequestInput, request_input_response
from ._nodes import START, BaseNode, Context, FunctionNode, JoinNode, RetryConfig
from ._views import graph_views, node_statuses, workflow_dot, workflow_info
from ._waiting import WaitingInput, waiting_inputs
from ._workflow import Workflow

__all__ = [
    "DEFAULT_ROUTE",
    "REQUEST_INPUT_FUNCTION_CALL_NAME",
    "START",
    "BaseNode",
    "Context",
    "Edge",
    "FunctionNode",
    "GraphValidationError",
    "JoinNode",
    "NodeTimeoutError",
    "RequestInput",
    "RetryConfig",
    "WaitingInput",
    "Workflow",
    "WorkflowConfigurationError",
    "WorkflowDataError",
    "WorkflowResumeError",
    "graph_views",
    "node_statuses",
    "request_input_response",
    "waiting_inputs",
    "workflow_dot",
    "workflow_info",
]
