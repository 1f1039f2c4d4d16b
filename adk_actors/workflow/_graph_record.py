"""What a graph run's committed events say when it runs again: :class:`GraphRecord`,
which the graph run (``_run``) inherits, and the outcome of a node run.

Resume (a resumed invocation: ``ctx.replay`` holds its committed events). The graph
is run again from START, with the same run numbers, but each node run whose trigger
is on record is first looked up by its node path (``look_up``): a run that finished
is not run again, its committed events pass as replayed and its output and route
(an output event also keeps a function's ``ctx.route``, in case its route event was
not committed) feed the nodes after it, which are looked up in turn; runs found
finished are taken in the order they had finished. A run that had not finished:
an agent node or a nested workflow runs again through the engine, meeting its own
committed events first (the engine replays an LLM step and decides its tools as it
always does); a function node may have run, so it runs again only when that is safe
(``rerun_on_resume=True``, an ``@idempotent`` function, a join), else on a decision
given for its node path, as for a tool call (``rerun``, ``result``, ``end``), and
without one the run stops with ``NeedsDecision`` before it starts. A join fed by
finished runs waits only for the runs still missing. Whatever stops the run for a
decision lets the node runs already running finish (and commit) first. A node run
triggered by one that ran live cannot have run before: it runs live. Committed node
paths the graph does not have: :class:`WorkflowResumeError`. A parallel worker runs
again (``rerun_on_resume=True``, as google-adk's): its items whose output is on record
give it without running again; the others run again, without a decision.
"""

from __future__ import annotations

import contextvars
import inspect
from dataclasses import dataclass
from typing import Any

from pydantic_core import to_jsonable_python

from .._types import Event, FunctionCall
from ._errors import WorkflowResumeError
from ._graph import Graph
from ._input import AskKey, Continuation, Record, interrupt_ids
from ._nodes import ROUTE_KEY, BaseNode, FunctionNode, JoinNode, node_event

__all__ = ["CONTINUATION", "GraphRecord", "Lookup", "Outcome", "one_event", "recorded_output", "rerun_is_safe"]


#: The graph run the current invocation continues with answers (see ``_input``), set
#: by the root workflow for the graphs inside it.
CONTINUATION: contextvars.ContextVar[Continuation | None] = contextvars.ContextVar("adk_workflow_continuation",
                                                                                   default=None)


@dataclass
class Outcome:
    output: Any = None
    has_output: bool = False
    route: Any = None
    branch: str = ""
    recorded: bool = False  # rebuilt from the committed events on resume (not run now)
    waiting: bool = False  # it asked for input and has no answer: it has not finished


@dataclass
class Lookup:
    """What the committed events say of a node run on resume: its events (passed on
    as replayed), its first attempt to make; and one of: its ``outcome`` (it finished:
    it does not run again), an ``agent_replay`` (an agent or nested workflow that did
    not finish: run again through the engine, meeting these events first), or a
    ``call`` (a function node that may have run: ``safe`` to run again, or run as its
    decision says, ``decided`` the output a ``result`` decision gave)."""

    events: list[Event]
    first: int = 1
    outcome: Outcome | None = None
    agent_replay: Any = None
    call: FunctionCall | None = None
    safe: bool = False
    decided: dict[str, Any] | None = None
    waiting: bool = False  # it asked for input, still unanswered: it waits on
    resume_inputs: dict[str, Any] | None = None  # answered, it runs again with these


def recorded_output(event: Event) -> Any:
    """A committed output event's output: its ``output``, else its text (an agent's answer)."""
    if event.output is not None:
        return event.output
    if event.content is None:
        return None
    return "".join(p.text or "" for p in event.content.parts if not p.thought)


def one_event(node: Any) -> bool:
    """Does ``node`` end with the one event it makes (so any committed event of it means it finished)?"""
    if isinstance(node, JoinNode):
        return True
    if isinstance(node, FunctionNode):
        return not (inspect.isgeneratorfunction(node.func) or inspect.isasyncgenfunction(node.func))
    return False


def rerun_is_safe(node: BaseNode) -> bool:
    """May ``node`` run again when it may already have run (see ``resume_node``)?"""
    return (node.rerun_on_resume or isinstance(node, JoinNode)
            or bool(getattr(getattr(node, "func", None), "idempotent", False)))


class GraphRecord:
    """The resume side of a graph run (see the module): it reads the run's ``ctx``
    (its ``replay`` and session), ``workflow``, ``graph`` and ``frame``, fills ``ends``,
    and hands events on with the run's ``emit`` and ``stamp``."""

    workflow: Any
    graph: Graph
    ctx: Any
    frame: Any
    ends: dict[str, int]

    async def emit(self, event: Event) -> None:
        raise NotImplementedError

    def stamp(self, event: Event, ctx: Any, path: str, terminal: bool) -> Event:
        raise NotImplementedError


    def look_up(self, node: Any, path: str, node_input: Any) -> Lookup:
        """On resume, what the committed events of node run ``path`` say of it (see
        :class:`Lookup`), taken out of the invocation's replay. Called as the run is
        started, so that the decisions its node needs are known before anything runs.

        The run's committed events are its own and those of the nodes inside it; the
        failed attempts among them count as attempts made (one more is always made).
        The run finished when an event after its last failure gives its output (its
        ``output_for`` names ``path``) or its route, or, for a function node that makes
        one event (a plain or async function, a join), when there is any such event: its
        outcome is rebuilt from them and it does not run again. An agent or a nested
        workflow that did not finish runs again through the engine, which meets its
        committed events first (an LLM step replayed, tools decided as the engine
        decides them; a nested graph resumed node by node). A function node that did
        not finish may have run: it runs again when that is safe (``rerun_on_resume=True``,
        a function marked ``@idempotent``, a JoinNode); else it needs a decision, as a
        tool call does, its call id the node path (see ``start_ready``).

        Continuing a waiting run with answers (``CONTINUATION``): a node run that asked
        is waiting or answered (see ``answered``), what it made before it asked not its
        result; a node run with no committed event, in a continuation that is not itself
        resumed, gave nothing and finished (the run it continues had ended)."""
        replay = self.ctx.replay
        inside = path + "/"
        events = replay.take_matching(lambda e: e.node_info is not None and e.node_info.path is not None and (
            e.node_info.path == path or e.node_info.path.startswith(inside)))
        failures = [i for i, e in enumerate(events)
                    if e.error_code and e.node_info.path == path and e.author == self.workflow.name]
        tail = events[failures[-1] + 1:] if failures else events
        found = Lookup(events=events, first=len(failures) + 1)
        outcome = Outcome(recorded=True)
        continuation = CONTINUATION.get()
        if not events and continuation is not None and not continuation.resumed:
            found.outcome = outcome  # the run it continues ended: a node run with no event gave nothing
            return found
        asked = [i for i, e in enumerate(tail) if e.node_info.path == path and interrupt_ids(e)]
        if asked:
            asks = [(tail[i].id, n) for i in asked for n in interrupt_ids(tail[i])]
            question = tail[asked[-1]]
            latest = [(tail[i].id, n) for i in asked if tail[i].invocation_id == question.invocation_id
                      for n in interrupt_ids(tail[i])]  # asked by the node's latest run
            # what it made before it asked is not its result; after it, in the invocation
            # that asked, the end of the run that asked (its route stays); later, a rerun's
            asking = [question, *(e for e in tail[asked[-1] + 1:] if e.invocation_id == question.invocation_id)]
            tail = [e for e in tail[asked[-1] + 1:] if e.invocation_id != question.invocation_id]
            if not any(path in (e.node_info.output_for or []) or (
                    e.node_info.path == path and e.actions.route is not None) for e in tail):
                routes = [e.actions.route if e.actions.route is not None else (e.custom_metadata or {})[ROUTE_KEY]
                          for e in asking if e.node_info.path == path and (
                              e.actions.route is not None or ROUTE_KEY in (e.custom_metadata or {}))]
                answered = self.answered(node, asks, latest, routes[-1] if routes else None)
                if answered is None:
                    found.waiting = True
                elif isinstance(answered, Outcome):
                    found.outcome = answered
                else:
                    found.resume_inputs = answered
                return found
        for event in tail:
            if path in (event.node_info.output_for or []):
                outcome.output, outcome.has_output = recorded_output(event), True
            if event.node_info.path == path and event.actions.route is not None:
                outcome.route = event.actions.route
            elif event.node_info.path == path and ROUTE_KEY in (event.custom_metadata or {}):
                outcome.route = (event.custom_metadata or {})[ROUTE_KEY]  # its route event was not committed
        if outcome.has_output or outcome.route is not None or (
                one_event(node) and any(e.node_info.path == path for e in tail)):
            found.outcome = outcome
        elif not isinstance(node, BaseNode):
            if isinstance(replay, Record) and not getattr(node, "_is_workflow", False):
                raise WorkflowResumeError(
                    f"workflow {self.workflow.name!r}: agent node run {path} began and did not finish in an "
                    f"invocation that was interrupted and never resumed: resume it first (Runner.resume)")
            found.events, found.agent_replay = events[:len(events) - len(tail)], replay.scoped(tail)
        else:
            found.call = FunctionCall(id=path, name=node.name,
                                      args={"node_input": to_jsonable_python(node_input, fallback=str)})
            # a node that failed in the run a continuation continues (that run ended with
            # its error) runs again, as google-adk's does
            found.safe = rerun_is_safe(node) or (continuation is not None and not continuation.resumed
                                         and bool(failures) and not tail)
        return found

    def answered(self, node: Any, asks: list[AskKey], latest: list[AskKey],
                 route: Any = None) -> Outcome | dict[str, Any] | None:
        """What the answers given so far (see ``_input``) make of a node run that made
        ``asks`` (in order; ``latest``: those of its latest run, which asked last) and
        chose ``route`` in the run that asked: None while it waits; for a node that runs
        again (``rerun_on_resume=True``), once any of ``latest`` is answered, the answers
        it runs with (all so far, by interrupt id); else, once every ask is answered,
        its outcome: that route and no output when it chose one (google-adk's rule: its
        route stays), else the answer its output (several: by interrupt id). The
        outcome is on record (the nodes after it may have run) unless this message gave
        it, in an invocation not itself resumed."""
        continuation = CONTINUATION.get()
        answers = continuation.answers if continuation is not None else {}
        fresh = continuation.fresh if continuation is not None else set()
        given = {key: answers[key] for key in asks if key in answers}
        by_id = {key[1]: value for key, value in given.items()}
        if getattr(node, "rerun_on_resume", False):
            return by_id if set(latest) & set(given) else None
        if len(given) < len(set(asks)):
            return None
        recorded = not fresh & set(given) or (continuation is not None and continuation.resumed)
        if route is not None:
            return Outcome(route=route, recorded=recorded)
        output = next(iter(by_id.values())) if len(by_id) == 1 else by_id
        return Outcome(output=output, has_output=True, recorded=recorded)

    def decide(self, found: list[Lookup]) -> None:
        """The decisions for the function node runs about to start that may have run
        (as a tool's calls are decided): each safe one runs again, each other as its
        decision says (``rerun``; ``result``: that dict is its output, as if the node had
        returned it; ``end``: :class:`EndedByDecision`); any left undecided stop the run
        with ``NeedsDecision`` (all of them listed) before any of them starts."""
        calls = [f.call for f in found if f.call is not None]
        if not calls:
            return
        safe = {f.call.id or "" for f in found if f.call is not None and f.safe}
        _, decided = self.ctx.replay.pending_results(self.workflow.name, calls, {}, safe)
        for f in found:
            if f.call is not None and f.call.id in decided:
                f.decided = decided[f.call.id or ""]

    async def resume_node(self, found: Lookup | None, ctx: Any, path: str,
                          terminal: bool) -> tuple[Any, Outcome | None, int]:
        """A looked-up run on resume, as (its replay for an agent node, its outcome
        when it does not run again, its first attempt to make): its committed events
        are passed on as replayed (the invocation passes them over); a ``result``
        decision becomes its output event. Not looked up: (None, None, 1)."""
        if found is None:
            return None, None, 1
        for event in found.events:
            await self.emit(event)
        if found.waiting:
            return None, Outcome(waiting=True, recorded=True), found.first
        if found.decided is not None:
            outcome = Outcome(output=found.decided, has_output=True)
            await self.emit(self.stamp(node_event(output=found.decided), ctx, path, terminal))
            return None, outcome, found.first
        return found.agent_replay, found.outcome, found.first

    def read_record(self) -> None:
        """On resume, before any node starts: the position in the invocation's committed
        events where each node run directly under this workflow finished (see
        ``resume_node``), so that the runs found finished are taken in the order they
        finished (the run numbers of the nodes after them are those they had). Every
        committed node path must name a node of the graph; else
        :class:`WorkflowResumeError` (the graph changed since the run was interrupted)."""
        if getattr(self.ctx, "replay", None) is None:
            return
        inside = self.frame.path + "/"
        names: set[str] = set()
        continuation = CONTINUATION.get()
        invocations = set(continuation.invocations) if continuation is not None else {self.ctx.invocation_id}
        ours = (e for e in self.ctx.session.events if e.invocation_id in invocations)
        for index, event in enumerate(ours):
            path = event.node_info.path if event.node_info is not None else None
            if not path or not path.startswith(inside):
                continue
            child = inside + path[len(inside):].split("/")[0]
            name = child[len(inside):].split("@")[0]
            names.add(name)
            own = path == child
            if (child in (event.node_info.output_for or []) or (own and event.actions.route is not None)
                    or (own and not event.error_code and not interrupt_ids(event)
                        and one_event(self.graph.nodes.get(name)))):
                self.ends[child] = index
        unknown = sorted(names - set(self.graph.nodes))
        if unknown:
            raise WorkflowResumeError(
                f"workflow {self.workflow.name!r} cannot resume this run: its committed events name nodes "
                f"{unknown} that its graph no longer has")
