"""The errors a workflow graph raises: a bad graph when it is built, bad data or a
slow node when it runs."""

from __future__ import annotations

from .._exceptions import AdkError, AgentDefinitionError

__all__ = ["GraphValidationError", "NodeProcessError", "NodeTimeoutError", "UnpicklableNodeError",
           "WorkflowConfigurationError", "WorkflowDataError", "WorkflowResumeError"]


class WorkflowConfigurationError(AgentDefinitionError):
    """A workflow or node definition is invalid (google-adk's name; a ValueError):
    raised when it is constructed, or when a run finds several terminal outputs."""


class GraphValidationError(WorkflowConfigurationError):
    """A workflow's graph is invalid, found when the ``Workflow`` is built: an edge to
    a node that is not in the graph, a node START cannot reach, a route with no edge to
    follow, a cycle of unconditional edges (no exit, no limit), two nodes of one name."""


class WorkflowDataError(AdkError, ValueError):
    """A node's input does not fit it: a function node's parameter found neither in the
    session state nor as a default, or a value that its annotation refuses."""


class NodeTimeoutError(AdkError):
    """A node ran longer than its ``timeout`` (seconds); it names the node and the
    timeout, in google-adk's words (``Node '<name>' timed out after <timeout> seconds.``)."""

    def __init__(self, *, node_name: str, timeout: float) -> None:
        super().__init__(f"Node '{node_name}' timed out after {timeout} seconds.")
        self.node_name = node_name
        self.timeout = timeout


class WorkflowResumeError(AdkError):
    """A resumed invocation (``Runner.resume``, ``App(resume_interrupted=N)``) cannot
    resume a workflow graph at the node runs it was in: its committed events name nodes
    that the workflow's graph no longer has (the app changed since the run was
    interrupted). Nothing runs; the committed events stay in the session."""


class UnpicklableNodeError(WorkflowConfigurationError):
    """A function node asked to run in processes (``node(..., processes=True)``) whose
    function, arguments or result cannot cross to another process: a lambda or a
    function defined inside another (a process finds a function by its module and
    name), a value pickle refuses. It names the node."""

    def __init__(self, *, node_name: str, reason: str) -> None:
        super().__init__(f"node {node_name!r} cannot run in another process: {reason}")
        self.node_name = node_name
        self.reason = reason


class NodeProcessError(AdkError):
    """The process a function node's call ran in died before it answered (killed,
    out of memory) or could not start; it names the node."""

    def __init__(self, *, node_name: str, reason: str) -> None:
        super().__init__(f"node {node_name!r}: its process {reason}")
        self.node_name = node_name
        self.reason = reason
