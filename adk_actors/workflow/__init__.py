"""google-adk 2.x's graph workflows (``google.adk.workflow``): ``Workflow`` with
``Edge``\\ s from ``START``, nodes that are agents, functions, ``FunctionNode``\\ s,
``JoinNode``\\ s and nested workflows, routes (``DEFAULT_ROUTE``, route maps, fan-out),
per-node ``RetryConfig`` and timeouts. A workflow is an agent: a Runner, an App or a
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
from ._nodes import START, BaseNode, Context, FunctionNode, JoinNode, RetryConfig
from ._workflow import Workflow

__all__ = [
    "DEFAULT_ROUTE",
    "START",
    "BaseNode",
    "Context",
    "Edge",
    "FunctionNode",
    "GraphValidationError",
    "JoinNode",
    "NodeTimeoutError",
    "RetryConfig",
    "Workflow",
    "WorkflowConfigurationError",
    "WorkflowDataError",
    "WorkflowResumeError",
]
