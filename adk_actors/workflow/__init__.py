"""google-adk 2.x's graph workflows (``google.adk.workflow``): ``Workflow`` with
``Edge``\\ s from ``START``, nodes that are agents, functions, ``FunctionNode``\\ s,
``JoinNode``\\ s and nested workflows, routes (``DEFAULT_ROUTE``, route maps, fan-out),
per-node ``RetryConfig`` and timeouts, ``RequestInput`` (a node that waits for a
human's answer, across restarts), ``node`` (the decorator, with ``parallel_worker``:
a node run once per item of a list, concurrently), and the graph views adk-web draws
(``workflow_info``, ``graph_views``). A workflow is an agent: a Runner, an App or a
host runs it as any root agent, on the same engine.

Our extension, which google-adk has not: ``node(fn, processes=True)`` (or
``FunctionNode(func=fn, processes=True)``) runs a sync function node's calls in OS
processes of a pool its graph run owns (as many as the machine has cores, started as
needed), so that CPU-bound items of a parallel worker, or CPU-bound branches of a
fan-out, use several cores; the processes end with the run (cancelled, failed, or its
run worker killed with kill -9: see ``_processes``). The function must be a sync
module-level function that does not take ``ctx``; else the node is refused when
built (:class:`UnpicklableNodeError` names it).
"""

from .._node_settings import RetryConfig
from ._errors import (
    GraphValidationError,
    NodeProcessError,
    NodeTimeoutError,
    UnpicklableNodeError,
    WorkflowConfigurationError,
    WorkflowDataError,
    WorkflowResumeError,
)
from ._graph import DEFAULT_ROUTE, Edge
from ._input import REQUEST_INPUT_FUNCTION_CALL_NAME, RequestInput, request_input_response
from ._node import Node, node
from ._nodes import START, BaseNode, Context, FunctionNode, JoinNode
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
    "Node",
    "NodeProcessError",
    "NodeTimeoutError",
    "RequestInput",
    "RetryConfig",
    "UnpicklableNodeError",
    "WaitingInput",
    "Workflow",
    "WorkflowConfigurationError",
    "WorkflowDataError",
    "WorkflowResumeError",
    "graph_views",
    "node",
    "node_statuses",
    "request_input_response",
    "waiting_inputs",
    "workflow_dot",
    "workflow_info",
]
