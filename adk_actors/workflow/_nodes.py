"""The nodes of a workflow graph (google-adk 2.x's names): ``BaseNode``, ``START``,
``FunctionNode`` (a Python function), ``JoinNode`` (waits for all its predecessors),
and ``Context`` (what a function node's ``ctx`` is). ``BaseNode``, ``START``,
``JoinNode`` and ``node_event`` live in ``_base_node`` and are re-exported here, as
``RetryConfig`` is, the one class every agent's ``retry_config`` takes too
(``adk_actors._node_settings``).

A node's :meth:`BaseNode.run` yields events: in order, each item its ``_run_impl``
yields is normalized (None is skipped, an Event passes, any other value becomes an
event whose ``output`` is that value; a :class:`RequestInput` becomes its interrupt
event, see ``_input``). Agents are nodes too, as they are (the
scheduler in ``_run`` runs them through the engine); they are not ``BaseNode``\\ s.
"""

from __future__ import annotations

import asyncio
import inspect
import typing
from collections.abc import AsyncIterator, Callable
from typing import Any, Literal

from pydantic import (
    BaseModel,
    PrivateAttr,
    ValidationError,
    field_validator,
)

from .._node_settings import RetryConfig, check_state_entry
from .._types import Content, Event, EventActions, State
from ._base_node import START, BaseNode, JoinNode, node_event
from ._errors import WorkflowConfigurationError, WorkflowDataError
from ._input import RequestInput, request_input_event
from ._node_auth import auth_interrupt_id, credential_request, has_credential, take_answer
from ._node_data import (
    REJECTED,
    adapter,
    confirmation_answer,
    confirmation_request,
    content_payload,
    inferred_schemas,
    is_json_schema,
    needs_confirmation,
    signature_schemas,
)
from ._processes import ProcessPool, Shipment, shipment

__all__ = ["ROUTE_KEY", "START", "BaseNode", "Context", "FunctionNode", "JoinNode", "RetryConfig", "as_node", "node_event"]


class _SchemaState(State):
    """The session state a node writes through: each write checked first against the
    node's state schema (see :func:`check_state_entry`; a refused one raises
    :class:`StateSchemaError` and is not written)."""

    def __init__(self, base: Any, delta: dict[str, Any], schema: type[BaseModel] | None) -> None:
        super().__init__(base, delta)
        self._schema = schema

    def __setitem__(self, key: str, value: Any) -> None:
        check_state_entry(self._schema, key, value)
        super().__setitem__(key, value)


#: google-adk's refusal of ``ctx.run_node`` from a node without ``rerun_on_resume=True``
RUN_NODE_NEEDS_RERUN = ("ctx.run_node() needs its calling node to have rerun_on_resume=True: a node it starts may "
                        "be interrupted, and the calling node is then run again to get that node's output.")


class Context:
    """What a function node's ``ctx`` parameter is (google-adk's ``Context``): the
    session ``state`` (reads see this node's writes at once; the writes go out with the
    node's output event), ``route`` (set it to choose the node's outgoing edges),
    ``actions`` (``actions.state_delta``), ``session``, ``invocation_id``, ``branch``,
    ``node_path``, ``run_id``, ``user_content``, ``resume_inputs`` (the answers to
    the node's requests for input, by interrupt id, when it runs again answered) and
    ``tool_confirmation`` (a node that asks for confirmation: the answer it runs on,
    else None).
    Inside a graph run: ``run_node`` (a node run as a child of this one; only from a
    node with ``rerun_on_resume=True``, its ``rerun_on_resume`` given here) and
    ``processes``, the run's :class:`ProcessPool` (see ``_processes``).

    ``state_schema`` (the node's own, else the one it inherits: see ``_run``): each
    write to ``state`` (``ctx.state[key] = value``, ``update``) is checked against it
    as it is made; a key it does not declare, or a value its field refuses, raises
    :class:`StateSchemaError` there (keys holding ``:`` pass), as google-adk's."""

    def __init__(self, invocation: Any, *, node_path: str, run_id: str,
                 resume_inputs: dict[str, Any] | None = None, processes: ProcessPool | None = None,
                 child_runner: Callable[..., Any] | None = None,
                 state_schema: type[BaseModel] | None = None, rerun_on_resume: bool = True) -> None:
        self._invocation = invocation
        self._rerun_on_resume = rerun_on_resume
        self.processes = processes
        self._child_runner = child_runner
        self.resume_inputs: dict[str, Any] = dict(resume_inputs or {})
        self.tool_confirmation: Any = None
        self.actions = EventActions()
        self.state_schema = state_schema
        self.state: State = _SchemaState(invocation.session.state, self.actions.state_delta, state_schema)
        self.route: bool | int | str | list[bool | int | str] | None = None
        self.node_path = node_path
        self.run_id = run_id

    @property
    def session(self) -> Any:
        return self._invocation.session

    @property
    def invocation_id(self) -> str:
        return str(self._invocation.invocation_id)

    @property
    def branch(self) -> str | None:
        return self._invocation.branch  # type: ignore[no-any-return]

    @property
    def user_content(self) -> Content | None:
        return self._invocation.user_content  # type: ignore[no-any-return]

    @property
    def invocation_context(self) -> Any:
        return self._invocation

    async def run_node(self, node: Any, node_input: Any = None, *, use_sub_branch: bool = False) -> Any:
        """Run ``node`` (a BaseNode, an agent, or a function made a :class:`FunctionNode`)
        as a child of this node run and return its output (google-adk's
        ``ctx.run_node``): its path ``<this node's path>/<name>@<n>`` (``n`` counts its
        runs under this one), on a branch of its own under this one's with
        ``use_sub_branch``; its events committed one by one, its ``retry_config`` and
        ``timeout`` applied. An agent runs as an agent node does (single-turn: its
        ``node_input`` as the user's message, its answer the output). It fails with
        the child's error, after the child's error event. Refused, before anything runs:
        a call outside a graph run (:class:`WorkflowConfigurationError`); a call from a
        node without ``rerun_on_resume=True`` (google-adk's ValueError and text: a child
        that waits for input is answered by running its parent again); then something
        that is no node (:class:`WorkflowConfigurationError`)."""
        if self._child_runner is None:
            raise WorkflowConfigurationError("ctx.run_node runs a node only inside a workflow graph's run")
        if not self._rerun_on_resume:
            raise ValueError(RUN_NODE_NEEDS_RERUN)
        return await self._child_runner(as_node(node), node_input, use_sub_branch)

    def take_state_delta(self) -> dict[str, Any]:
        """The state written since the last call (then forgotten here)."""
        delta = dict(self.actions.state_delta)
        self.actions.state_delta.clear()
        return delta


class FunctionNode(BaseNode):
    """A node that calls a function (sync or async, or a generator of either). Its
    parameters are bound by name, as ``parameter_binding`` says: ``"state"`` (the
    default): ``ctx`` (a :class:`Context`), ``node_input`` (the predecessor's output:
    the user's message for a node right after START), every other from the session
    state; ``"node_input"`` (a node called as a tool is): ``ctx``, every other a key
    (or attribute) of the node input, a ``**kwargs`` taking its other keys, and
    ``node_input`` when no key names it, the whole input if the node has a model
    ``input_schema``. A parameter not found takes its default, else
    :class:`WorkflowDataError`; each is coerced to its annotation (Content to its text
    for ``str``, else its text parsed as JSON). What it returns (or yields) is its
    output; the state it wrote goes with it; an Event passes as it is; a
    ``RequestInput`` asks a human and the node waits for the answer (see ``_input``).
    A sync function runs on a worker thread, off the event loop. On resume, a run that
    had started and not finished may have had its effect: it runs again only when
    ``rerun_on_resume`` is True or the function is marked ``@idempotent`` (as a tool);
    by default it needs a decision, as a tool call does (see ``_run``).

    Its schemas, unless given: bound from the state, ``output_schema`` the model class
    its return hint (a generator's item type) names, ``input_schema`` the one its
    ``node_input`` hint names; bound from the input, JSON schemas of its parameters
    and its return hint, never enforced (see ``_node_data``).

    ``require_confirmation`` (True, or a predicate of the bound arguments, see
    ``_node_data.needs_confirmation``; it needs ``rerun_on_resume=True``, else
    :class:`WorkflowConfigurationError`): before the function runs, in order, an
    answer to the run's confirmation request (``ctx.tool_confirmation``) that rejects
    makes the output ``{"error": "This tool call is rejected."}`` and the function does
    not run; one that approves lets it run (a run that gives nothing then gives an
    empty event); with no answer, when confirmation is needed, the node asks (see
    ``_node_data``) and waits.

    ``auth_config`` (an ``AuthConfig``; needs ``rerun_on_resume=True``, else
    :class:`WorkflowConfigurationError`): after that gate, the client's answer to the
    run's credential request is kept (unusable: :class:`WorkflowDataError`); with none
    and no credential in the state, the node asks and waits (see ``_node_auth``).

    ``processes=True`` (our extension, see ``_processes``): the function runs in a
    process of the run's pool instead of on a thread, so that CPU-bound calls use
    several cores. It must be a plain sync function at module level that does not
    take ``ctx``; else the node is refused when built (:class:`UnpicklableNodeError`,
    :class:`WorkflowConfigurationError`)."""

    require_confirmation: bool | Callable[..., Any] = False
    parameter_binding: Literal["state", "node_input"] = "state"
    auth_config: Any = None

    @field_validator("auth_config", mode="before")
    @classmethod
    def _auth_config(cls, value: Any) -> Any:
        """A mapping (a workflow file's) read as an ``AuthConfig``."""
        if isinstance(value, dict):
            from ..auth.auth_tool import AuthConfig

            return AuthConfig.model_validate(value)
        return value

    _func: Callable[..., Any] = PrivateAttr()
    _shipment: Shipment | None = PrivateAttr(default=None)
    _signature: inspect.Signature = PrivateAttr()
    _hints: dict[str, Any] = PrivateAttr()

    def __init__(self, *, func: Callable[..., Any], name: str | None = None, retry_config: RetryConfig | None = None,
                 timeout: float | None = None, rerun_on_resume: bool = False, description: str | None = None,
                 processes: bool = False, state_schema: type[BaseModel] | None = None,
                 require_confirmation: bool | Callable[..., Any] = False,
                 parameter_binding: Literal["state", "node_input"] = "state", auth_config: Any = None) -> None:
        """Raises :class:`WorkflowConfigurationError` when ``func`` is not callable or has
        no name, when it asks for confirmation or has an ``auth_config`` without
        ``rerun_on_resume``, or
        (``processes=True``) cannot run in a process (see the class)."""
        if not callable(func):
            raise WorkflowConfigurationError(f"a FunctionNode needs a callable, got {func!r}")
        if require_confirmation and not rerun_on_resume:
            raise WorkflowConfigurationError("FunctionNode with require_confirmation requires rerun_on_resume=True. "
                                             "The node must rerun after confirmation is provided.")
        if auth_config and not rerun_on_resume:
            raise WorkflowConfigurationError(
                f"FunctionNode {name or getattr(func, '__name__', '')!r} has an auth_config but not "
                f"rerun_on_resume=True: it asks the client for a credential and must run again once answered")
        name = name or getattr(func, "__name__", None)
        if not name:
            raise WorkflowConfigurationError(f"{func!r} has no __name__: give the FunctionNode a name")
        # this class's own fields, validated with the rest
        own: dict[str, Any] = {"require_confirmation": require_confirmation, "parameter_binding": parameter_binding,
                               "auth_config": auth_config}
        super().__init__(name=name, retry_config=retry_config, timeout=timeout, rerun_on_resume=rerun_on_resume,
                         description=description if description is not None else inspect.getdoc(func) or "",
                         state_schema=state_schema, **own)
        self._func = func
        if processes:
            self._shipment = shipment(func, name)
        self._signature = inspect.signature(func)
        try:
            self._hints = typing.get_type_hints(func)
        except Exception:
            self._hints = {}
        if parameter_binding == "state":
            self.input_schema, self.output_schema = inferred_schemas(self._hints)
        else:
            self.input_schema, self.output_schema = signature_schemas(func, self._signature, self._hints)

    @property
    def func(self) -> Callable[..., Any]:
        return self._func

    @property
    def processes(self) -> bool:
        """Does the function run in a process of the run's pool (see the class)?"""
        return self._shipment is not None

    def in_processes(self) -> FunctionNode:
        """This node, its function run in processes (see the class)."""
        copied = self.model_copy()
        copied._shipment = shipment(self._func, self.name)
        return copied

    def _validate_output_data(self, data: Any) -> Any:
        if self.require_confirmation and data == REJECTED:
            return data
        return super()._validate_output_data(data)

    def _coerce(self, name: str, value: Any) -> Any:
        hint = self._hints.get(name)
        if hint is None or hint is Any:
            return value
        if isinstance(value, Content):
            value = content_payload(value, hint)
        try:
            return adapter(hint).validate_python(value)
        except ValidationError as exc:
            raise WorkflowDataError(f"parameter {name!r} of node {self.name!r}: {exc}") from None

    def _arguments(self, ctx: Context, node_input: Any) -> dict[str, Any]:
        by_input = self.parameter_binding == "node_input"
        source: Any = (node_input if isinstance(node_input, (dict, BaseModel)) else {}) if by_input else ctx.state
        arguments: dict[str, Any] = {}
        for name, parameter in self._signature.parameters.items():
            if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
                continue
            if parameter.kind is inspect.Parameter.VAR_KEYWORD:
                if by_input and isinstance(source, dict):
                    arguments.update({key: value for key, value in source.items()
                                      if key not in self._signature.parameters and key != "ctx"})
                continue
            if name == "ctx":
                arguments[name] = ctx
                continue
            if name == "node_input" and not by_input:
                arguments[name] = self._coerce(name, node_input)
                continue
            if isinstance(source, BaseModel):
                found, value = hasattr(source, name), getattr(source, name, None)
            else:
                found, value = name in source, source.get(name)
            if (not found and name == "node_input" and self.input_schema is not None
                    and not is_json_schema(self.input_schema) and name in self._hints):
                try:
                    arguments[name] = self._coerce(name, node_input)
                    continue
                except WorkflowDataError:
                    pass
            if found:
                arguments[name] = self._coerce(name, value)
            elif parameter.default is not inspect.Parameter.empty:
                arguments[name] = parameter.default
            else:
                where = "the node input" if by_input else "the session state"
                raise WorkflowDataError(f"missing value for parameter {name!r} of node {self.name!r}: "
                                        f"not in {where} and no default")
        return arguments

    def _event(self, ctx: Context, value: Any) -> Event | None:
        delta = ctx.take_state_delta()
        if isinstance(value, Event):
            if delta:
                actions = value.actions.model_copy(update={"state_delta": {**delta, **value.actions.state_delta}})
                return value.model_copy(update={"actions": actions})
            return value
        if isinstance(value, Content):
            return node_event(content=value, state=delta)
        if isinstance(value, RequestInput):
            asked = request_input_event(value)
            return asked.model_copy(update={"actions": EventActions(state_delta=delta)}) if delta else asked
        if value is None:
            return node_event(state=delta) if delta else None
        if isinstance(value, BaseModel):
            value = value.model_dump()
        return node_event(output=value, state=delta)

    async def _run_impl(self, *, ctx: Any, node_input: Any) -> AsyncIterator[Any]:
        arguments = self._arguments(ctx, node_input)
        approved = False
        if self.require_confirmation:
            ctx.tool_confirmation = confirmation_answer(ctx.resume_inputs, ctx.node_path)
            approved = ctx.tool_confirmation is not None
            if ctx.tool_confirmation is not None and not ctx.tool_confirmation.confirmed:
                yield Event(output=dict(REJECTED))
                return
            bound = {key: value for key, value in arguments.items() if key != "ctx"}
            if not approved and await needs_confirmation(self.require_confirmation, ctx, node_input, bound):
                yield confirmation_request(ctx.node_path, self.name, bound)
                return
        if self.auth_config:
            asked = auth_interrupt_id(ctx.node_path)
            answer = ctx.resume_inputs.get(asked)
            if answer is not None:
                take_answer(answer, self.auth_config, ctx.state, asked)
            elif not has_credential(self.auth_config, ctx.state):
                yield credential_request(self.auth_config, asked, ctx.state)
                return
        gave = False
        async for event in self._calls(ctx, arguments):
            if event is not None:
                gave = True
                yield event
        if approved and not gave:
            yield Event()

    async def _calls(self, ctx: Any, arguments: dict[str, Any]) -> AsyncIterator[Event | None]:
        """The function called with ``arguments``: what it gives, as events."""
        func = self._func
        if inspect.isasyncgenfunction(func):
            async for item in func(**arguments):
                yield self._event(ctx, item)
        elif inspect.isgeneratorfunction(func):
            for item in func(**arguments):
                yield self._event(ctx, item)
        elif inspect.iscoroutinefunction(func):
            yield _with_route(self._event(ctx, await func(**arguments)), ctx)
        elif self._shipment is not None:
            pool = getattr(ctx, "processes", None)
            if pool is None:
                raise WorkflowConfigurationError(
                    f"node {self.name!r} runs in processes: it runs only in a workflow graph's run, which owns them")
            yield _with_route(self._event(ctx, await pool.call(self.name, self._shipment, arguments)), ctx)
        else:
            yield _with_route(self._event(ctx, await asyncio.to_thread(func, **arguments)), ctx)


#: Where a function node's output event also records the ``ctx.route`` it chose (its
#: route event, as google-adk sends it, comes after): a run killed between the two
#: commits resumes on the route its node chose.
ROUTE_KEY = "adk_actors:route"


def _with_route(event: Event | None, ctx: Any) -> Event | None:
    """``event`` with the route the function chose in ``ctx.route`` in its metadata."""
    route = getattr(ctx, "route", None)
    if event is None or route is None or event.actions.route is not None:
        return event
    return event.model_copy(update={"custom_metadata": {**(event.custom_metadata or {}), ROUTE_KEY: route}})


def as_node(item: Any) -> Any:
    """A graph element as a node: a BaseNode or an agent as it is; a function as a
    :class:`FunctionNode`. Anything else: :class:`WorkflowConfigurationError`."""
    if isinstance(item, BaseNode):
        return item
    if hasattr(item, "name") and callable(getattr(item, "run", None)) and hasattr(item, "sub_agents"):
        return item  # an agent
    if callable(item):
        return FunctionNode(func=item)
    raise WorkflowConfigurationError(
        f"{item!r} is not a node: give a BaseNode, an agent, a function or 'START'")
