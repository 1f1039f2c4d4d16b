"""Durable runs: an interrupted invocation continued from its committed events.

A run killed part-way (its worker, partition or host) leaves its committed events in
the session: the user's message, then each step it finished. :func:`resume_invocation`
runs the same invocation (same id) again from its root agent in *replay*: every agent
meets its own committed events first, in the order it made them, and takes them
instead of doing the work again; where an agent's events run out, it goes on live.

* Events are matched per (author, branch): parallel branches replay independently, a
  loop's child meets its events of earlier iterations in order, a transfer's target
  its own. Replayed events are not committed or yielded again; they still pass up
  through the workflow agents, which therefore re-enter at the same child and
  iteration (a replayed ``escalate`` ends a loop, a replayed transfer runs its target).
* One step of an LlmAgent's flow is replayed whole: what came before its model event
  (a compaction, a toolset's error, a before-agent hook's state), the model event (it
  counts toward ``max_llm_calls``), its tool-response event (and an auth request, or
  the event of the structured answer ``set_model_response`` accepted).
  The model is never asked again for a committed step.
* A model event whose calls have no committed response: the calls may have run, or
  not. A call that waited for a human's approval that never came (pending, expired,
  denied) cannot have run: it runs again, and its approval request is the one it had
  (a decision made while the host was down stands). A call of an idempotent tool (``FunctionTool(..., idempotent=True)``, the
  ``@idempotent`` decorator, an MCP tool whose server says ``idempotentHint``; and
  ``transfer_to_agent``) runs again. Any other stops the invocation with
  :class:`NeedsDecision` (the calls and their arguments) unless a
  :class:`CallDecision` is given for it: ``rerun``, ``result`` (its response, as if the
  tool had answered it) or ``end`` (:class:`EndedByDecision`).
* The invocation's last event, when it is an error (the model failed and the run
  ended there), is not replayed: the step is tried again.
* A workflow graph (``adk_actors.workflow``) is not replayed by author and branch:
  its scheduler takes each node run's events by ``node_info.path``
  (:meth:`Replay.take_matching`), does not run finished ones again, and runs an
  unfinished agent node with a replay of its own events (:meth:`Replay.scoped`);
  function nodes follow the tool rule above, their node path as the call id.
* Agent hooks: an agent that had started does not run its before-agent hooks again
  (their event, if they made one, is replayed); its after-agent hooks run live only
  when its replay ran out before them. A custom agent (neither an LlmAgent nor a
  workflow agent) cannot be entered part-way: its events are replayed, and it is
  run again from its start unless another agent spoke after it.

:func:`calls_to_rerun` is google-adk's resume of a live invocation (not a durable one):
a user's function response that answers a call without settling it (one that names no
call, such as an answer by id only) has the call run again before the model is asked.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .._decisions import CallDecision, PendingCall
from .._exceptions import AdkError, RunStopped
from .._types import Event, FunctionCall

__all__ = [
    "CallDecision",
    "EndedByDecision",
    "NeedsDecision",
    "NothingToResume",
    "PendingCall",
    "Replay",
    "ReplayVerdict",
    "ReplayedStep",
    "calls_to_rerun",
    "is_idempotent",
]

class NeedsDecision(RunStopped):
    """The run stopped before calls of tools that are not idempotent and whose results
    were not committed: each needs a :class:`CallDecision`. ``calls`` lists them."""

    def __init__(self, calls: list[PendingCall]) -> None:
        self.calls = calls
        names = ", ".join(f"{c.name} ({c.call_id})" for c in calls)
        super().__init__(f"these calls may have run before the run was interrupted, and their tools are not "
                         f"idempotent: {names}; decide for each: rerun, result or end")

    def detail(self) -> str:
        """The pending calls as JSON (a run's failure detail: the caller decides on them)."""
        return json.dumps({"pending_calls": [c.to_dict() for c in self.calls]}, default=str)


class EndedByDecision(RunStopped):
    """A human decided to end the run rather than rerun or answer a pending call."""


class NothingToResume(AdkError):
    """The session has no event of that invocation to continue from."""


def is_idempotent(tool: Any, name: str) -> bool:
    """Whether a call of ``tool`` (named ``name``) may simply run again on resume."""
    return name in ("transfer_to_agent", "exit_loop") or bool(getattr(tool, "idempotent", False))


class ReplayVerdict(Enum):
    """What the flow does after a replayed step (see :class:`ReplayedStep`)."""

    END = "end"  #: the agent's flow ended with this step
    NEXT = "next"  #: its loop goes on: the next step
    LIVE = "live"  #: nothing of the step's model call was committed: do the step now
    PENDING = "pending"  #: the model event's calls have no response: run or decide them, then go on
    ANSWER = "answer"  #: set_model_response accepted an answer whose own event was not committed


@dataclass
class ReplayedStep:
    """One step of an LlmAgent's flow, taken from the committed events.

    ``verdict`` (a :class:`ReplayVerdict`): ``END`` (the agent's flow ended with this
    step), ``NEXT`` (its loop goes on: the next step), ``LIVE`` (nothing of the step's
    model call was committed: do the step now), ``PENDING`` (the model event's
    ``calls`` have no response: run or decide them, then go on as live), ``ANSWER``
    (``set_model_response`` accepted a structured answer whose own event was not
    committed: make it, and the flow ends)."""

    events: list[Event]
    verdict: ReplayVerdict
    model_calls: int = 0
    calls: list[FunctionCall] = field(default_factory=list)


def _is_model_step(event: Event) -> bool:
    if event.error_code and event.error_code != "toolset_error":
        return True
    return event.content is not None and event.content.role == "model" and bool(event.content.parts)


def _answers(event: Event, calls: list[FunctionCall]) -> bool:
    """Is ``event`` the tool-response event of ``calls``?"""
    if event.content is None or event.content.role != "user":
        return False
    ids = {c.id for c in calls}
    responses = [p.function_response for p in event.content.parts if p.function_response is not None]
    return bool(responses) and all(r.id in ids for r in responses)


class Replay:
    """The committed events of one invocation (after its user event), per (author,
    branch), in order; the ids of those handed out, so that the invocation does not
    commit or yield them again; and the decisions given for pending calls."""

    def __init__(self, events: list[Event], decisions: Mapping[str, CallDecision] | None = None) -> None:
        self.decisions = dict(decisions or {})
        self._queues: dict[tuple[str, str | None], deque[tuple[int, Event]]] = {}
        self._last_index: dict[tuple[str, str | None], int] = {}
        for index, event in enumerate(events):
            key = (event.author, event.branch)
            self._queues.setdefault(key, deque()).append((index, event))
            self._last_index[key] = index
        last = events[-1] if events else None
        self._final_error = last.id if last is not None and last.error_code else None
        self._last = len(events) - 1
        self.replayed: set[str] = set()

    def has(self, author: str, branch: str | None) -> bool:
        """Does ``author`` on ``branch`` still have committed events to meet?"""
        return bool(self._queues.get((author, branch)))

    def head(self, author: str, branch: str | None) -> Event | None:
        queue = self._queues.get((author, branch))
        return queue[0][1] if queue else None

    def take(self, author: str, branch: str | None) -> Event:
        """The next committed event of ``author`` on ``branch`` (marked replayed)."""
        _, event = self._queues[(author, branch)].popleft()
        self.replayed.add(event.id)
        return event

    def take_matching(self, wanted: Any) -> list[Event]:
        """Every committed event for which ``wanted(event)`` is true, whatever its
        author and branch, in their committed order (marked replayed; a workflow graph
        takes a node run's events by their ``node_info.path``)."""
        taken: list[tuple[int, Event]] = []
        for key, queue in self._queues.items():
            kept = deque(item for item in queue if not wanted(item[1]))
            taken.extend(item for item in queue if wanted(item[1]))
            self._queues[key] = kept
        taken.sort(key=lambda item: item[0])
        self.replayed.update(event.id for _, event in taken)
        return [event for _, event in taken]

    def scoped(self, events: list[Event]) -> Replay:
        """A replay of ``events`` alone (taken with :meth:`take_matching`): the same
        decisions; their last event is the failure to try again only if it is this
        invocation's."""
        scoped = Replay(events, self.decisions)
        scoped._final_error = self._final_error if any(e.id == self._final_error for e in events) else None
        scoped.replayed.update(e.id for e in events)
        return scoped

    def was_replayed(self, event: Event) -> bool:
        return event.id in self.replayed

    def spoke_last(self, author: str, branch: str | None) -> bool:
        """Did ``author`` on ``branch`` make the invocation's last committed event?"""
        return self._last_index.get((author, branch), -1) == self._last

    def step(self, author: str, branch: str | None) -> ReplayedStep | None:
        """The next committed step of an LlmAgent's flow (see :class:`ReplayedStep`);
        None when the agent has no committed event left."""
        queue = self._queues.get((author, branch))
        if not queue:
            return None
        events: list[Event] = []
        while queue and not _is_model_step(queue[0][1]):
            events.append(self.take(author, branch))
        if not queue:
            return ReplayedStep(events, ReplayVerdict.LIVE)
        if queue[0][1].id == self._final_error:
            queue.popleft()  # the failure that ended the run: the step is tried again
            return ReplayedStep(events, ReplayVerdict.LIVE)
        model = self.take(author, branch)
        events.append(model)
        calls = list(model.content.function_calls) if model.content is not None else []
        if model.error_code or not calls:
            return ReplayedStep(events, ReplayVerdict.END, 1)
        if not queue or not _answers(queue[0][1], calls):
            return ReplayedStep(events, ReplayVerdict.PENDING, 1, calls)
        answered = self.take(author, branch)
        events.append(answered)
        if answered.actions.requested_auth_configs:
            head = queue[0][1] if queue else None
            if head is not None and head.content is None and head.actions.requested_auth_configs:
                events.append(self.take(author, branch))
            return ReplayedStep(events, ReplayVerdict.END, 1)
        if answered.actions.set_model_response is not None:  # a structured answer: its event ends the flow
            head = queue[0][1] if queue else None
            if head is not None and head.content is not None and head.content.role == "model" \
                    and not head.content.function_calls and not head.error_code:
                events.append(self.take(author, branch))
                return ReplayedStep(events, ReplayVerdict.END, 1)
            return ReplayedStep(events, ReplayVerdict.ANSWER, 1)
        if answered.actions.transfer_to_agent or answered.actions.skip_summarization:
            return ReplayedStep(events, ReplayVerdict.END, 1)
        return ReplayedStep(events, ReplayVerdict.NEXT, 1)

    def pending_results(self, agent: str, calls: list[FunctionCall], tools: Mapping[str, Any],
                        not_run: set[str] | frozenset[str] = frozenset(),
                        ) -> tuple[list[FunctionCall], dict[str, dict[str, Any]]]:
        """Of ``calls`` left without a response: those to run again (idempotent, decided
        ``rerun``, or known ``not_run``: their approval never came), and the responses
        decided for the others. Raises :class:`EndedByDecision` when a decision ends the
        run, :class:`NeedsDecision` for the calls nobody decided on (nothing runs then)."""
        rerun: list[FunctionCall] = []
        decided: dict[str, dict[str, Any]] = {}
        undecided: list[PendingCall] = []
        for call in calls:
            decision = self.decisions.get(call.id or "")
            if decision is not None and decision.action == "end":
                raise EndedByDecision(f"the run was ended by a decision on the call to {call.name} ({call.id})")
            if decision is not None and decision.action == "result" and decision.result is not None:
                decided[call.id or ""] = decision.result
            elif decision is not None or call.id in not_run or is_idempotent(tools.get(call.name), call.name):
                rerun.append(call)
            else:
                undecided.append(PendingCall(call.id or "", call.name, dict(call.args), agent))
        if undecided:
            raise NeedsDecision(undecided)
        return rerun, decided


async def decided_results(run_tool: Any, agent: Any, ctx: Any, calls: list[FunctionCall],
                          tools: Mapping[str, Any], make_context: Any,
                          not_run: set[str]) -> list[tuple[dict[str, Any] | None, Any]]:
    """The responses of a resumed step's pending ``calls``, in their order: decided ones
    as given (with a fresh tool context), the others run again with ``run_tool``
    (``not_run``: the ids of calls known not to have run)."""
    rerun, decided = ctx.replay.pending_results(agent.name, calls, tools, not_run)
    ran = await asyncio.gather(*(run_tool(agent, ctx, call, tools) for call in rerun))
    by_id = {call.id: result for call, result in zip(rerun, ran, strict=True)}
    return [by_id[call.id] if call.id in by_id else (decided[call.id or ""], make_context(ctx, call))
            for call in calls]


# -- a user's answer to a call: google-adk's rerun of a call the answer does not settle --


def _run_ids(branch: str | None) -> set[str]:
    """The call ids a ``name@call_id`` branch path was opened by (one per segment)."""
    return {segment.split("@", 1)[1] for segment in (branch or "").split(".") if "@" in segment}


def _call_index(events: Sequence[Event], agent_name: str, tools: Mapping[str, Any]) -> int | None:
    """The index of the last event before the last that ``agent_name`` made calling a
    tool of ``tools`` (another author's call is never run here); None when there is none."""
    for index in range(len(events) - 2, -1, -1):
        event = events[index]
        if event.author == agent_name and any(c.name in tools for c in event.get_function_calls()):
            return index
    return None


def _answer(events: Sequence[Event], call_index: int, ids: set[str | None], names: set[str]) -> Event:
    """The last event after the call's that answers it (a response by one of ``ids``,
    by one of ``names`` when it has no id, or the user's from a branch one of the calls
    opened); the last event when none does."""
    for event in reversed(events[call_index + 1:]):
        for response in event.get_function_responses():
            if (response.id is not None and response.id in ids) or (response.id is None and response.name in names) \
                    or (event.author == "user" and ids & _run_ids(event.branch)):
                return event
    return events[-1]


def _not_run(call_event: Event, later: Sequence[Event], *, open_calls_too: bool) -> list[FunctionCall]:
    """The calls of ``call_event`` that nothing in ``later`` answers by id and name (a
    response without an id answers one call of its name, in call order). Unless
    ``open_calls_too``: none once the call's author spoke after it on its branch, and
    never a long-running call (it may be answered later)."""
    if not open_calls_too and any(e.author == call_event.author and e.branch == call_event.branch
                                  and e.content is not None for e in later):
        return []
    responses = [r for e in later for r in e.get_function_responses()]
    by_id = {(r.id, r.name) for r in responses if r.id is not None}
    by_name = Counter(r.name for r in responses if r.id is None)
    waiting = set() if open_calls_too else set(call_event.long_running_tool_ids or ())
    pending: list[FunctionCall] = []
    for call in call_event.get_function_calls():
        if (call.id, call.name) in by_id or call.id in waiting:
            continue
        if by_name[call.name]:
            by_name[call.name] -= 1
        else:
            pending.append(call)
    return pending


def calls_to_rerun(events: Sequence[Event], agent_name: str, tools: Mapping[str, Any]) -> list[FunctionCall]:
    """The calls google-adk's resume runs again before asking the model, when the last
    of ``events`` (the invocation's events on the agent's branch, oldest first) is the
    user's answer to calls; [] when the model is asked as usual. In order:

    1. the agent's last event calling one of its ``tools`` before the last event
       (none: []), its long-running ids (those of the events from it on), and the
       event answering it (:func:`_answer`);
    2. a call still unanswered (no response carries one of its ids, or, for its
       long-running ids, none carries one of them; a response of the answer by one
       of its names counts): [] (the model is asked; the call stays open);
    3. an answer with a response that names none of the calls (a response by id only
       is one), or from a branch a call opened: the calls that no later response
       answers by both id and name run again, long-running or not;
    4. else, every long-running id answered: the calls no later response answers,
       unless the agent spoke after them (a crash between the call and its response).
    """
    if len(events) < 2 or events[-1].author != "user" or not events[-1].get_function_responses():
        return []
    index = _call_index(events, agent_name, tools)
    if index is None:
        return []
    call_event, later = events[index], events[index + 1:]
    calls = call_event.get_function_calls()
    names = {c.name for c in calls}
    waiting = {i for e in events[index:] for i in (e.long_running_tool_ids or ())}
    ids: set[str | None] = {c.id for c in calls} | waiting
    answer = _answer(events, index, ids, names)
    answered = {r.id for e in later for r in e.get_function_responses() if r.id is not None}
    responses = answer.get_function_responses()
    from_branch = answer.author == "user" and bool(ids & _run_ids(answer.branch))
    open_call = (bool(waiting) and not waiting & answered) or (
        not ids & answered and not any(r.name in names for r in responses))
    if open_call and not from_branch:
        return []
    if not responses or from_branch or any(r.name not in names for r in responses):
        return _not_run(call_event, later, open_calls_too=True)
    if waiting - answered:
        return []
    return _not_run(call_event, later, open_calls_too=False)
