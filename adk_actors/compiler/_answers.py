"""A late answer to a call: the history as google-adk 2.13 rearranges it (issue 52).

When the last event the agent sees carries function responses answering calls made
before the event just preceding it (a long-running tool's call answered by the user
later, after the model spoke), the request's history ends at the latest of those
calls, followed by their answers: in order,

1. the events the agent sees are those of :func:`history_sees` (not partial, with
   content, visible on the branch); a function response counts only in the user's or
   the agent's own events (another agent's are quoted as text), and answers the last
   call before it with its id (or, without an id, the last id-less call of its name);
2. the last event's responses that answer no call are left out (so are its parts
   when none answers one: nothing changes); its other parts go with the responses
   to the latest call answered;
3. nothing changes when that call is in the event just before the last and it is
   the only call answered;
4. else the history is: every event up to the latest answered call, without the
   responses to answered calls (an event left with no call and no response is left
   out), each answered call followed by one event: its earlier responses (and the
   other parts of the events that held them, unless those events also called tools),
   each response replaced by the last event's of the same id, then the last event's.
   Everything after the latest answered call is left out (the model's words after
   the first response, other turns in between); events the history does not show
   (a compaction's, for one) stay where they were up to that call, and after the
   last event; those between the call and the last event are left out too.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._types import Event, FunctionResponse, Part
from ._branches import branch_visible

__all__ = ["history_sees", "latest_answer_history"]


def history_sees(event: Event, branch: str | None) -> bool:
    """Does the history show ``event`` on ``branch`` (not partial, with content, visible)?"""
    if event.partial or event.content is None or not event.content.parts:
        return False
    return branch_visible(event.branch, branch)


def _owner(seen: list[Event], agent_name: str, response: FunctionResponse) -> int:
    """The position in ``seen`` of the last event calling what ``response`` answers; -1."""
    for position in range(len(seen) - 1, -1, -1):
        event = seen[position]
        if event.author not in ("user", agent_name):
            continue
        for call in event.get_function_calls():
            if (response.id and call.id == response.id) or (
                    not response.id and not call.id and response.name and call.name == response.name):
                return position
    return -1


def _with_parts(event: Event, parts: list[Part]) -> Event:
    assert event.content is not None
    return event.model_copy(update={"content": event.content.model_copy(update={"parts": tuple(parts)})})


def _merged(answers: list[Event]) -> Event:
    """One event from ``answers`` (oldest first): the first's parts, a later response
    replacing the one of the same id, other later parts appended."""
    parts = list(answers[0].content.parts) if answers[0].content is not None else []
    where = {p.function_response.id: i for i, p in enumerate(parts) if p.function_response is not None}
    for event in answers[1:]:
        for part in event.content.parts if event.content is not None else ():
            key = part.function_response.id if part.function_response is not None else None
            if part.function_response is not None and key in where:
                parts[where[key]] = part
                continue
            parts.append(part)
            if part.function_response is not None:
                where[key] = len(parts) - 1
    return _with_parts(answers[0], parts)


def _answer_for(seen: list[Event], agent_name: str, call: int, last_parts: list[Part]) -> Event:
    """Step 4's event after the call at ``call``: its earlier responses, then ``last_parts``."""
    earlier: list[Event] = []
    for position in range(call + 1, len(seen) - 1):
        event = seen[position]
        if event.author not in ("user", agent_name) or event.content is None or not event.get_function_responses():
            continue
        calls = bool(event.get_function_calls())
        kept = [p for p in event.content.parts
                if (_owner(seen[:position], agent_name, p.function_response) == call
                    if p.function_response is not None else not calls)]
        if any(p.function_response is not None for p in kept):
            earlier.append(event if len(kept) == len(event.content.parts) else _with_parts(event, kept))
    return _merged([*earlier, _with_parts(seen[-1], last_parts)])


def latest_answer_history(events: Sequence[Event], agent_name: str, branch: str | None) -> Sequence[Event]:
    """``events`` rearranged for their last answer (see the module); ``events`` itself
    when nothing changes."""
    last = next((i for i in range(len(events) - 1, -1, -1) if history_sees(events[i], branch)), None)
    if last is None or events[last].author not in ("user", agent_name) or not events[last].get_function_responses():
        return events
    where = [i for i in range(last + 1) if history_sees(events[i], branch)]
    seen = [events[i] for i in where]
    if len(seen) < 2:
        return events
    by_call: dict[int, list[Part]] = {}
    others: list[Part] = []
    assert seen[-1].content is not None
    for part in seen[-1].content.parts:
        if part.function_response is None:
            others.append(part)
            continue
        owner = _owner(seen[:-1], agent_name, part.function_response)
        if owner >= 0:
            by_call.setdefault(owner, []).append(part)
    if not by_call:
        return events
    latest = max(by_call)
    by_call[latest].extend(others)
    if latest == len(seen) - 2 and len(by_call) == 1:
        return events
    out: list[Event] = [e for e in events[:where[0]]]  # what the history does not show stays as it was
    for position in range(latest + 1):
        out.extend(events[where[position - 1] + 1:where[position]] if position else ())
        event = seen[position]
        if event.author in ("user", agent_name) and event.content is not None and event.get_function_responses():
            kept = [p for p in event.content.parts if p.function_response is None
                    or _owner(seen[:position], agent_name, p.function_response) not in by_call]
            if not any(p.function_response is not None or p.function_call is not None for p in kept):
                continue
            if len(kept) != len(event.content.parts):
                event = _with_parts(event, kept)
        out.append(event)
        if position in by_call:
            out.append(_answer_for(seen, agent_name, position, by_call[position]))
    return [*out, *events[last + 1:]]  # (after the last shown event: only events the history does not show)
