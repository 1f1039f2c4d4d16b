"""Running an eval set against a host, and turning a session into an eval case.

``run_eval_set(runner, eval_set, metrics)``, for each case, in order:

1. create a session of its own (id ``___eval___session___<hex>``, google-adk's
   prefix, which the HTTP API's session lists leave out) with the case's initial
   state, for the case's user;
2. send the case's user messages one after the other, as turns of that session, each
   turn's events making one actual invocation (as ``invocations_of`` makes them), timed
   (see below);
3. score each metric on the (actual, expected) pairs (``_metrics.score``).

A turn that ends well is timed here, at the caller: its ``duration`` is from the
turn's request to its terminal message (the hops to the host and back included, as a
user's wall time includes them), read off ``_timing.clock``. Where its seconds went
(``model_duration``, ``tool_duration``) comes from the session's trace, read when the
turn has ended: a host's Runner's ``session_trace``, or for an ``HttpRunner`` the
host's ``GET /dev/apps/{app}/debug/trace/session/{session_id}`` (google-adk's route,
``HttpRunner.session_trace``; kept while the host's ``trace_turns`` is not 0). Of it, the spans of the turn's trace
(``_timing.spans_of_turn``: an ``AgentTool``'s child run's too) give the split, by
the in-process rule (``_timing.split_of_spans``). Without them -- no trace kept, no
span of the turn in it, a trace that cannot be read or does not parse (a host that
refuses the route, another server) -- both stay None: the turn is timed, its split
is not known. A turn that fails is not timed.

The same trace, read once per turn, gives the turn's ``app_details`` (what each agent
that answered it was told: its model request's system instruction and tools, as
google-adk's eval takes them; ``_app_details.details_from_trace``), which the judge
metrics put in their prompts. Without a trace, or without a model call of the turn in
it, ``app_details`` stays None. A turn that fails has none either.

The case passes when every metric passes, fails when one fails, and is not evaluated
when no metric could be (a judge that gave no verdict). A turn that fails (a deadline, a
model error) fails its case: the metrics are scored on what was made, and the
failure is in the case's result as ``details.error`` of each metric. A judge metric
whose judge model cannot be had (no key, no provider) is not evaluated, and says why
in ``details.error``. The eval
session is kept, so the run can be looked at in the console afterwards.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from .._exceptions import AdkError
from .._names import EVAL_SESSION_PREFIX
from .._types import Content, Event
from ..tracing import TraceSpan
from . import _timing
from ._app_details import details_from_trace
from ._custom import CustomMetricError
from ._errors import EvalError
from ._metrics import check_metric, score, unscored
from ._models import (
    EvalCase,
    EvalCaseResult,
    EvalMetric,
    EvalMetricResult,
    EvalMetricResultPerInvocation,
    EvalSet,
    EvalSetResult,
    EvalStatus,
    Invocation,
    InvocationEvent,
    InvocationEvents,
    SessionInput,
)

__all__ = ["EVAL_SESSION_PREFIX", "case_from_session", "instruction_keys_state", "invocation_from", "invocations_of",
           "run_eval_set", "said_by_user"]


class TurnRunner(Protocol):
    """What a run of an eval set needs of a Runner (``adk_actors.Runner`` or ``HttpRunner``)."""

    def create_session(self, user_id: str, session_id: str | None = None,
                       state: dict[str, Any] | None = None) -> Any: ...

    def run(self, user_id: str, session_id: str, message: str | Content) -> Iterator[Event]: ...


def _trace(runner: TurnRunner, user_id: str, session_id: str) -> list[TraceSpan] | None:
    """The session's trace (see the module); None when the runner keeps none or it
    cannot be read."""
    trace = getattr(runner, "session_trace", None)
    if not callable(trace):
        return None
    try:
        spans: list[TraceSpan] = list(trace(session_id, user_id))
    except (AdkError, OSError, ValueError):
        return None
    return spans


def _from_trace(runner: TurnRunner, user_id: str, session_id: str, invocation: Invocation, took: float,
                made: list[Event]) -> Invocation:
    """``invocation`` with its ``duration`` (``took``), and from the session's trace its
    split (each rounded to the millisecond) and its ``app_details`` (``_app_details``);
    those stay None when the trace does not say."""
    spans = _trace(runner, user_id, session_id)
    split = None if spans is None else _timing.split_of_spans(_timing.spans_of_turn(spans, invocation.invocation_id))
    model, tool = (None, None) if split is None else (round(split[0], 3), round(split[1], 3))
    details = None if spans is None else details_from_trace(spans, made)
    return invocation.model_copy(update={"duration": round(took, 3), "model_duration": model, "tool_duration": tool,
                                         "app_details": details})


def _is_final(event: Event) -> bool:
    content = event.content
    return (content is not None and not event.partial and not content.function_calls
            and not content.function_responses and bool(content.parts))


def _text(event: Event) -> str:
    return event.content.text if event.content is not None else ""


def invocations_of(events: Iterable[Event]) -> list[Invocation]:
    """A session's events as invocations, as google-adk converts them: per invocation
    id, the user's message, the last final response (text preferred), and the events
    in between (tool calls and answers, other agents' texts)."""
    grouped: dict[str, list[Event]] = {}
    for event in events:
        if not event.partial and not event.invocation_id.startswith("p-"):  # p-: a state PATCH
            grouped.setdefault(event.invocation_id, []).append(event)
    invocations = []
    for invocation_id, members in grouped.items():
        user = next((e for e in members if said_by_user(e)), None)
        if user is not None and user.content is not None:
            invocations.append(invocation_from(invocation_id, user.content, user.timestamp,
                                           [e for e in members if e is not user]))
    return invocations


def said_by_user(event: Event) -> bool:
    return event.author == "user" and event.content is not None and not event.content.function_responses


def invocation_from(invocation_id: str, user_content: Content, when: float, answers: list[Event]) -> Invocation:
    """One invocation: the user's message and the events that answered it (the last
    final response, a text one rather than one without text), and as its events, in
    order, each answer with content parts or with grounding metadata (google-adk keeps
    a grounded event without content too), each with its grounding; the final
    response's own event without its content (it is the invocation's final response)."""
    final: Event | None = None
    for event in answers:
        if _is_final(event) and (final is None or _text(event) or not _text(final)):
            final = event
    between = [InvocationEvent(author=e.author, content=None if e is final else e.content,
                               grounding_metadata=e.grounding_metadata, usage_metadata=e.usage_metadata,
                               model_version=e.model_version)
               for e in answers if (e.content is not None and e.content.parts) or e.grounding_metadata is not None]
    return Invocation(invocation_id=invocation_id, user_content=user_content,
                      final_response=final.content if final is not None else None,
                      intermediate_data=InvocationEvents(invocation_events=between), creation_timestamp=when)


def instruction_keys_state(root_agent: Any) -> dict[str, str]:
    """google-adk's initial state for a session added to an eval set: an empty string
    for every ``{key}`` (a plain word, no ``?``, no scope) of the text instructions of
    ``root_agent`` and every agent and graph node under it, each agent once; {} for
    None. A case run with it fills those keys with nothing, as google-adk's does."""
    found: dict[str, str] = {}
    seen: set[int] = set()

    def walk(agent: Any) -> None:
        if agent is None or id(agent) in seen:
            return
        seen.add(id(agent))
        for sub_agent in getattr(agent, "sub_agents", None) or []:
            walk(sub_agent)
        graph = getattr(agent, "graph", None)
        nodes = getattr(graph, "nodes", None) or []
        for node in nodes.values() if isinstance(nodes, dict) else nodes:
            walk(node)
        instruction = getattr(agent, "instruction", None)
        if isinstance(instruction, str):
            found.update((key, "") for key in re.findall(r"{(\w+)}", instruction))

    walk(root_agent)
    return found


def case_from_session(eval_id: str, app_name: str, user_id: str, events: list[Event],
                      initial_state: dict[str, Any] | None = None) -> EvalCase:
    """An eval case expecting what the session's turns did (google-adk's "add the current
    session to an eval set"), beginning with ``initial_state`` (the HTTP route gives
    :func:`instruction_keys_state` of the app's root agent, as google-adk's)."""
    return EvalCase(eval_id=eval_id, conversation=invocations_of(events),
                    session_input=SessionInput(app_name=app_name, user_id=user_id, state=dict(initial_state or {})),
                    creation_timestamp=time.time())


def _run_case(runner: TurnRunner, eval_set_id: str, case: EvalCase, metrics: list[EvalMetric]) -> EvalCaseResult:
    expected = case.conversation or []
    user = case.session_input.user_id if case.session_input else "eval_user"
    session_id = f"{EVAL_SESSION_PREFIX}{uuid.uuid4().hex}"
    runner.create_session(user, session_id, dict(case.session_input.state) if case.session_input else {})
    actual: list[Invocation] = []
    error = ""
    for invocation in expected:
        # The turn's own events (a Runner streams the user's event first, HTTP does not).
        made: list[Event] = []
        began, started = time.time(), _timing.clock()
        try:
            made.extend(event for event in runner.run(user, session_id, invocation.user_content)
                        if not event.partial and not said_by_user(event))
        except AdkError as exc:
            error = f"{type(exc).__name__}: {exc}"
        took = _timing.clock() - started
        if made:
            ran = invocation_from(made[0].invocation_id, invocation.user_content, began, made)
            actual.append(ran if error else _from_trace(runner, user, session_id, ran, took, made))
        if error:
            break
    pairs: list[tuple[Invocation, Invocation | None]] = list(zip(actual, expected, strict=False))
    overall: list[EvalMetricResult] = []
    per_invocation = [EvalMetricResultPerInvocation(actual_invocation=a, expected_invocation=e) for a, e in pairs]
    for metric in metrics:
        try:
            total, each = score(metric, pairs, case)
        except CustomMetricError:
            raise  # a custom metric's function that answered out of shape: the user's bug, said now
        except (AdkError, OSError, ValueError) as exc:  # a judge model that could not be had
            total, each = unscored(metric, len(pairs), f"{type(exc).__name__}: {exc}")
        if error or len(actual) != len(expected):
            failed = {"error": error or f"{len(actual)} of {len(expected)} invocations ran"}
            total = total.model_copy(update={"eval_status": EvalStatus.FAILED, "details": failed})
        overall.append(total)
        for row, result in zip(per_invocation, each, strict=True):
            row.eval_metric_results.append(result)
    statuses = {result.eval_status for result in overall}
    status = (EvalStatus.FAILED if EvalStatus.FAILED in statuses else
              EvalStatus.PASSED if EvalStatus.PASSED in statuses else EvalStatus.NOT_EVALUATED)
    return EvalCaseResult(eval_set_file=eval_set_id, eval_set_id=eval_set_id, eval_id=case.eval_id,
                          final_eval_status=status, overall_eval_metric_results=overall,
                          eval_metric_result_per_invocation=per_invocation, session_id=session_id, user_id=user)


def run_eval_set(runner: TurnRunner, app_name: str, eval_set: EvalSet, metrics: list[EvalMetric],
                 case_ids: list[str] | None = None) -> EvalSetResult:
    """Run the cases of ``eval_set`` named by ``case_ids`` (all when empty), one after
    the other (see the module). Raises EvalError for a metric not offered here, a case
    id the set does not have, or a case without a conversation, before any case runs."""
    wanted = list(case_ids or [])
    missing = sorted(set(wanted) - {case.eval_id for case in eval_set.eval_cases})
    if missing:
        raise EvalError(f"eval set {eval_set.eval_set_id!r} has no case {', '.join(map(repr, missing))}")
    for metric in metrics:
        check_metric(metric)  # an unknown metric, a bad criterion: EvalError now, not after the first case ran
    cases = [case for case in eval_set.eval_cases if not wanted or case.eval_id in wanted]
    played = [case.eval_id for case in cases if case.conversation is None]
    if played:
        raise EvalError(f"eval case {played[0]!r} has no conversation: a conversation_scenario case (played by the "
                        f"user simulator) runs in process, with AgentEvaluator")
    began = time.time()
    results = [_run_case(runner, eval_set.eval_set_id, case, metrics) for case in cases]
    result_id = f"{app_name}_{eval_set.eval_set_id}_{began:.6f}".replace(".", "_")
    return EvalSetResult(eval_set_result_id=result_id, eval_set_result_name=result_id,
                         eval_set_id=eval_set.eval_set_id, eval_case_results=results, creation_timestamp=began)
