"""google-adk 2.x's ``node``: a decorator, or a function, that makes a node of a
function (or a node with some settings overridden), optionally a parallel worker
(see ``_parallel_worker``); and our extension, ``processes=True`` (see
``_processes``).

``node(fn)``, ``@node``, ``@node()``, ``@node(name=..., ...)``, ``node(a_node, ...)``,
in order: ``max_parallel_workers`` without ``parallel_worker=True``, or below 1, is a
:class:`WorkflowConfigurationError` (google-adk's messages); with no node given, a
decorator that does the rest is returned. The node is built: ``"START"`` is START; a
function becomes a :class:`FunctionNode` with ``name`` (else its ``__name__``),
``rerun_on_resume`` (None: False), ``retry_config`` and ``timeout``; a BaseNode is a
copy with those of them that are not None; an agent is itself (overrides on an
agent: :class:`WorkflowConfigurationError`, not supported here yet). With
``processes=True`` the function node's function runs in processes (a node that is not
a function node: :class:`WorkflowConfigurationError`). With ``parallel_worker=True``,
the built node is wrapped in a parallel worker of the same name
(``max_parallel_workers``: at most that many items at once; None: no limit), its
``retry_config`` and ``timeout`` staying on the node each item runs, as in google-adk.

``Node`` (google-adk's too) is a BaseNode to subclass: override ``run_node_impl``;
``Node(..., parallel_worker=True)`` runs it once per item of a list input.

``require_confirmation`` (see :class:`FunctionNode`) is given to a function's node,
or replaces a function node's; when the node asks for confirmation and
``rerun_on_resume`` is not given, it is set True (the node runs again once answered).
:class:`WorkflowConfigurationError` when the node asks and ``rerun_on_resume=False``
is given, and when a truthy ``require_confirmation`` is given for a node that is no
function node (an agent too). ``parameter_binding`` is given to a function's node
only (a node passed in keeps its own). ``auth_config`` (see :class:`FunctionNode`)
is given to a function's node, or replaces a function node's; the node must run
again on resume (``rerun_on_resume=True``, given or the node's), else
:class:`WorkflowConfigurationError` (google-adk's type); for a node that is no function
node it is refused too (:class:`WorkflowConfigurationError`: google-adk drops it
silently).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, Literal

from pydantic import Field, model_validator

from .._node_settings import RetryConfig
from ._errors import WorkflowConfigurationError
from ._nodes import START, BaseNode, FunctionNode
from ._parallel_worker import _ParallelWorker

__all__ = ["Node", "node"]


def _built(node_like: Any, *, name: str | None, rerun_on_resume: bool | None, retry_config: RetryConfig | None,
           timeout: float | None, processes: bool, require_confirmation: bool | Callable[..., Any] | None = None,
           parameter_binding: Literal["state", "node_input"] = "state", auth_config: Any = None) -> Any:
    if isinstance(node_like, str) and node_like == "START":
        return START
    overrides: dict[str, Any] = {key: value for key, value in (
        ("name", name), ("rerun_on_resume", rerun_on_resume), ("retry_config", retry_config),
        ("timeout", timeout)) if value is not None}
    if isinstance(node_like, FunctionNode):
        asks = require_confirmation if require_confirmation is not None else node_like.require_confirmation
        if asks and rerun_on_resume is False:
            raise WorkflowConfigurationError("FunctionNode with require_confirmation requires rerun_on_resume=True. "
                                             "The node must rerun after confirmation is provided.")
        if require_confirmation is not None:
            overrides["require_confirmation"] = require_confirmation
            if require_confirmation and rerun_on_resume is None:
                overrides["rerun_on_resume"] = True
        if (auth_config or node_like.auth_config) and not overrides.get("rerun_on_resume", node_like.rerun_on_resume):
            raise WorkflowConfigurationError(
                f"node(): {node_like.name!r} has an auth_config but does not run again on resume: give "
                f"rerun_on_resume=True (it runs again once the client answers)")
        if auth_config:
            overrides["auth_config"] = auth_config
    elif auth_config and (isinstance(node_like, BaseNode) or hasattr(node_like, "sub_agents")):
        raise WorkflowConfigurationError(
            f"auth_config is given to a function's node only, got {type(node_like).__name__}")
    elif require_confirmation and (isinstance(node_like, BaseNode) or hasattr(node_like, "sub_agents")):
        raise WorkflowConfigurationError(
            f"require_confirmation is only supported on FunctionNode, got {type(node_like).__name__}.")
    if isinstance(node_like, BaseNode):
        if processes and not isinstance(node_like, FunctionNode):
            raise WorkflowConfigurationError(
                f"processes=True runs a function node's function in processes; {node_like.name!r} is a "
                f"{type(node_like).__name__}")
        if name is not None and not name.isidentifier():
            raise WorkflowConfigurationError(f"node name {name!r} must be a valid Python identifier")
        built = node_like.model_copy(update=overrides) if overrides else node_like
        if processes and isinstance(built, FunctionNode) and not built.processes:
            built = built.in_processes()
        return built
    if hasattr(node_like, "sub_agents") and callable(getattr(node_like, "run", None)):
        if overrides or processes:
            raise WorkflowConfigurationError(
                f"node() overrides ({sorted(overrides) + (['processes'] if processes else [])}) on agent "
                f"{getattr(node_like, 'name', node_like)!r}: not supported here yet")
        return node_like
    if callable(node_like):
        rerun = True if require_confirmation and rerun_on_resume is None else bool(rerun_on_resume)
        return FunctionNode(func=node_like, name=name, rerun_on_resume=rerun, retry_config=retry_config,
                            timeout=timeout, processes=processes, require_confirmation=require_confirmation or False,
                            parameter_binding=parameter_binding, auth_config=auth_config)
    raise WorkflowConfigurationError(
        f"Invalid node type: {type(node_like)}. Node must be a BaseNode, a BaseAgent, a BaseTool, or a callable.")


def node(node_like: Any = None, *, name: str | None = None, rerun_on_resume: bool | None = None,
         retry_config: RetryConfig | None = None, timeout: float | None = None, parallel_worker: bool = False,
         max_parallel_workers: int | None = None, auth_config: Any = None,
         require_confirmation: bool | Callable[..., bool] | None = None,
         parameter_binding: Literal["state", "node_input"] = "state", processes: bool = False) -> Any:
    """A node made of ``node_like``, or a decorator that makes one (see the module)."""
    if max_parallel_workers is not None:
        if not parallel_worker:
            raise WorkflowConfigurationError("max_parallel_workers can only be set when parallel_worker is True.")
        if max_parallel_workers < 1:
            raise WorkflowConfigurationError("max_parallel_workers must be greater than or equal to 1.")
    if node_like is None:
        def decorate(func: Any) -> Any:
            return node(func, name=name, rerun_on_resume=rerun_on_resume, retry_config=retry_config,
                        timeout=timeout, parallel_worker=parallel_worker, max_parallel_workers=max_parallel_workers,
                        require_confirmation=require_confirmation, parameter_binding=parameter_binding,
                        processes=processes, auth_config=auth_config)
        return decorate
    built = _built(node_like, name=name, rerun_on_resume=rerun_on_resume, retry_config=retry_config,
                   timeout=timeout, processes=processes, require_confirmation=require_confirmation,
                   parameter_binding=parameter_binding, auth_config=auth_config)
    if parallel_worker:
        return _ParallelWorker(node=built, max_parallel_workers=max_parallel_workers)
    return built


class Node(BaseNode):
    """A node class to subclass (google-adk's ``Node``): override
    ``run_node_impl(*, ctx, node_input)``, an async generator of outputs or events.
    With ``parallel_worker=True`` a run gives the node's run per item of its input
    list, at most ``max_parallel_workers`` at once (None: no limit), as a parallel
    worker does (see ``_parallel_worker``), and it runs again on resume
    (``rerun_on_resume`` True). ``max_parallel_workers`` without ``parallel_worker``,
    or below 1: refused when built, as google-adk's (pydantic's ValidationError, a
    ValueError, carrying the :class:`WorkflowConfigurationError`'s message)."""

    parallel_worker: bool = Field(default=False, frozen=True)
    max_parallel_workers: int | None = Field(default=None, frozen=True)

    @model_validator(mode="after")
    def _parallel_settings(self) -> Node:
        if self.max_parallel_workers is not None:
            if not self.parallel_worker:
                raise WorkflowConfigurationError(
                    "max_parallel_workers can only be set when parallel_worker is True.")
            if self.max_parallel_workers < 1:
                raise WorkflowConfigurationError("max_parallel_workers must be greater than or equal to 1.")
        if self.parallel_worker:
            self.rerun_on_resume = True
        return self

    async def run_node_impl(self, *, ctx: Any, node_input: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("run_node_impl must be implemented.")
        yield  # pragma: no cover

    async def _run_impl(self, *, ctx: Any, node_input: Any) -> AsyncIterator[Any]:
        """A parallel worker's run over a copy of this node that is not one; else
        ``run_node_impl``."""
        if self.parallel_worker:
            single = self.model_copy(update={"parallel_worker": False, "max_parallel_workers": None})
            worker = _ParallelWorker(node=single, max_parallel_workers=self.max_parallel_workers)
            async for item in worker._run_impl(ctx=ctx, node_input=node_input):
                yield item
            return
        async for item in self.run_node_impl(ctx=ctx, node_input=node_input):
            yield item
