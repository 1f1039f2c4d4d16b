"""History assembly: session events -> the ``contents`` of a request.

In order:

0. **Rewinds.** A rewind event (``Runner.rewind_async``) takes itself and every
   event back to the first of the invocation it names out of the history; read from
   the last event back, so a rewind can itself be rewound.
1. **Visibility.** Partial events and events without content are dropped. Branch
   filtering as google-adk: an event is visible when either branch is empty, they
   are equal, or the current branch descends from the event's (``a.b`` sees
   ``a``, not its sibling ``a.c``), so parallel siblings don't see each other.
2. **Current turn only** with ``include_contents="none"``: history starts at the last
   user message (not a tool result) or the last text from another agent.
3. **Roles.** User events -> role user; the current agent's events keep their role
   (model; its tool results are user-role); other agents' events become user-role
   context fenced as google-adk 2.13 fences them
   (:func:`adk_actors.agents._fencing.other_agent_message`): a "For context" sentence
   (ours) naming the quote markers, then "[A] said:", "[A] called tool `f` with
   parameters:", "[A] `f` tool returned result:" (and, with ``include_thoughts``,
   "[A] thought:"), each followed by its payload between the quote markers (markers
   inside a payload elided); an event with nothing left to relay is dropped.
4. **Compaction.** A compaction event replaces the first ``message_count`` messages
   assembled so far with one summary message.
5. **Pairing.** Each of the current agent's tool calls is immediately followed by its
   results (the latest result per call id); a call without a result (the process
   died mid-call) gets a synthetic error result saying it was interrupted; results
   with no call are dropped. A long-running tool's call that no result answers yet
   (its id in an event's ``long_running_tool_ids``) is the exception, as in
   google-adk 2.13: it is sent as it is, with no result after it (with two such
   calls and one answered, the request holds both calls and the one answer).
   Before steps 1-5, a history whose last event answers calls made before the event
   just preceding it (a long-running call answered later) is cut after the latest of
   those calls and their answers put after them, as google-adk 2.13 rearranges it
   (``_answers``: the model's words after the call's first response are not sent).
6. The context's ``new_message``, if any, comes last.

Steps 1, 3 and 4 are a fold over the events, and a session's history only grows: the
messages folded from a history are kept (per agent, branch, session and whether
thoughts are relayed, the last
``FOLDS_KEPT`` of them in this process), and the next call on a longer history that
begins with the same events continues from them. A prefix is known by its first
event's id, its length and its last event's id (events never change; ids are
unique). The result is the same as folding from the start; a turn of a 1,000-event
session compiles in about half the time (docs/benchmarks.md).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from .._prefix_scan import PrefixScan
from .._types import Content, Event, FunctionCall, FunctionResponse, Part
from ..agents._fencing import other_agent_message
from ._answers import latest_answer_history
from ._branches import branch_visible

__all__ = ["INTERRUPTED_RESULT", "branch_visible", "build_contents", "live_events"]

INTERRUPTED_RESULT = {"error": "The tool call was interrupted and did not return a result. Do not assume it ran."}
SUMMARY_PREFIX = "Summary of the earlier conversation:\n"
#: Folds kept for the next call on the same history (see the module).
FOLDS_KEPT = 1024


@dataclass(frozen=True)
class _Fold:
    count: int  # events folded
    last_id: str  # the id of the last of them
    messages: tuple[Content, ...]
    has_calls: bool  # a message holds a tool call or a tool result


_folds: OrderedDict[tuple[str, str | None, bool, str], _Fold] = OrderedDict()
_folds_lock = threading.Lock()


#: whether a history holds a rewind (read incrementally as the session grows)
_has_rewind = PrefixScan(lambda event: bool(event.actions.rewind_before_invocation_id))
#: whether a history holds a long-running tool's call (read as the session grows)
_has_long_running = PrefixScan(lambda event: bool(event.long_running_tool_ids))


def _long_running_ids(events: Sequence[Event]) -> frozenset[str]:
    """The ids of the long-running tools' calls in ``events`` (none read when the
    history holds none)."""
    if not _has_long_running(events):
        return frozenset()
    return frozenset(i for event in events if event.long_running_tool_ids for i in event.long_running_tool_ids)


def live_events(events: Sequence[Event]) -> Sequence[Event]:
    """``events`` without those a rewind took back (step 0 of the module): walking from
    the last event back, a rewind event is dropped with everything after the first
    event of the invocation it names (a name that no earlier event has: the rewind
    event alone). ``events`` itself when there is no rewind."""
    if not _has_rewind(events):
        return events
    first: dict[str, int] = {}
    for index, event in enumerate(events):
        first.setdefault(event.invocation_id, index)
    kept: list[Event] = []
    index = len(events) - 1
    while index >= 0:
        event = events[index]
        target = event.actions.rewind_before_invocation_id
        if target:
            start = first.get(target)
            if start is not None and start < index:
                index = start
        else:
            kept.append(event)
        index -= 1
    kept.reverse()
    return kept


def _own_message(event: Event) -> Content:
    content = event.content
    assert content is not None
    if content.role is not None:
        return content
    is_result = any(p.function_response is not None for p in content.parts)
    role = "user" if is_result or event.author == "user" else "model"
    return content.model_copy(update={"role": role})


def _current_turn_start(events: Sequence[Event], agent_name: str) -> int:
    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        content = event.content
        if content is None:
            continue
        if event.author == "user":
            if any(p.function_response is None for p in content.parts):
                return index
        elif (
            event.author != agent_name
            and event.actions.transfer_to_agent is None
            and any(p.text for p in content.parts if not p.thought)
        ):
            return index
    return 0


def _key(item: FunctionCall | FunctionResponse) -> str:
    return item.id if item.id else f"name:{item.name}"


def _pair_calls(messages: list[Content], long_running: frozenset[str] = frozenset()) -> list[Content]:
    """Put each tool call's latest result right after it; synthesize interrupted ones,
    except for the calls of ``long_running`` (ids) no result answers: they stay open."""
    latest: dict[str, Part] = {}
    for message in messages:
        for part in message.parts:
            if part.function_response is not None:
                latest[_key(part.function_response)] = part
    placed: set[str] = set()
    out: list[Content] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        call_keys = [_key(p.function_call) for p in message.parts if p.function_call is not None]
        if not call_keys:
            if any(p.function_response is not None for p in message.parts):
                # Results are placed right after their call; met here, a result was
                # moved there already, or it answers no call (an orphan): drop it.
                others = tuple(p for p in message.parts if p.function_response is None)
                if others:
                    out.append(Content(role=message.role, parts=others))
                continue
            out.append(message)
            continue
        out.append(message)
        wanted = [k for k in call_keys if k not in placed and (k in latest or k not in long_running)]
        following = messages[index] if index < len(messages) else None
        if wanted and following is not None and following.parts and all(
            latest.get(_key(p.function_response)) is p for p in following.parts if p.function_response is not None
        ) and [_key(p.function_response) for p in following.parts if p.function_response] == wanted:
            out.append(following)  # already well-formed (text next to the results too, as google-adk's): as is
            placed.update(wanted)
            index += 1
            continue
        results: list[Part] = []
        for part in message.parts:
            call = part.function_call
            if call is None or _key(call) in placed:
                continue
            key = _key(call)
            placed.add(key)
            if key not in latest and key in long_running:
                continue  # a long-running call not answered yet: sent open, as google-adk's
            results.append(
                latest.get(key)
                or Part(function_response=FunctionResponse(id=call.id, name=call.name, response=INTERRUPTED_RESULT))
            )
        if results:
            out.append(Content(role="user", parts=tuple(results)))
    return out


def _fold(agent_name: str, events: Sequence[Event], branch: str | None, messages: list[Content],
          has_calls: bool, include_thoughts: bool = False) -> tuple[list[Content], bool]:
    """Steps 1, 3 and 4 over ``events``, after ``messages`` (folded from the events
    before them); also whether any message holds a tool call or result.
    ``include_thoughts``: other agents' thoughts are relayed too."""
    for event in events:
        if event.partial:
            continue
        if branch is not None and event.branch and not branch_visible(event.branch, branch):
            continue
        compaction = event.actions.compaction
        if compaction is not None:
            summary = Content(role="user", parts=(Part(text=SUMMARY_PREFIX + compaction.summary),))
            messages = [summary, *messages[compaction.message_count:]]
        content = event.content
        if content is None or not content.parts:
            continue
        message = (_own_message(event) if event.author in ("user", agent_name)
                   else other_agent_message(event, include_thoughts=include_thoughts))
        if message is not None:
            messages.append(message)
            if not has_calls:
                for part in message.parts:
                    if part.function_call is not None or part.function_response is not None:
                        has_calls = True
                        break
    return messages, has_calls


def _fold_continued(agent_name: str, events: Sequence[Event], branch: str | None,
                    include_thoughts: bool = False) -> tuple[list[Content], bool]:
    """:func:`_fold` over all of ``events``, continued from the fold kept for a prefix of
    them when there is one; the new fold is kept in its place."""
    if not events:
        return [], False
    key = (agent_name, branch, include_thoughts, events[0].id)
    with _folds_lock:
        kept = _folds.get(key)
    messages: list[Content] = []
    has_calls = False
    start = 0
    if kept is not None and kept.count <= len(events) and events[kept.count - 1].id == kept.last_id:
        start, messages, has_calls = kept.count, list(kept.messages), kept.has_calls
    messages, has_calls = _fold(agent_name, events[start:], branch, messages, has_calls, include_thoughts)
    with _folds_lock:
        _folds[key] = _Fold(len(events), events[-1].id, tuple(messages), has_calls)
        _folds.move_to_end(key)
        while len(_folds) > FOLDS_KEPT:
            _folds.popitem(last=False)
    return messages, has_calls


def build_contents(
    agent_name: str,
    events: Sequence[Event],
    *,
    branch: str | None = None,
    include_contents: str = "default",
    new_message: Content | None = None,
    include_thoughts: bool = False,
) -> list[Content]:
    """The request history for ``agent_name`` from ``events`` (see the module doc for the
    rules). ``include_thoughts`` (google-adk's RunConfig
    ``include_thoughts_from_other_agents``): other agents' thoughts are relayed as
    context too; with ``include_contents="none"`` they never are, as in google-adk."""
    events = live_events(events)
    rearranged = latest_answer_history(events, agent_name, branch)
    if include_contents == "none":
        messages, has_calls = _fold(agent_name, rearranged[_current_turn_start(rearranged, agent_name):], branch,
                                    [], False)
    elif rearranged is not events:  # made for this request (an event may stand for others): folded afresh
        messages, has_calls = _fold(agent_name, rearranged, branch, [], False, include_thoughts)
    else:
        messages, has_calls = _fold_continued(agent_name, events, branch, include_thoughts)
    if has_calls:
        messages = _pair_calls(messages, _long_running_ids(events))
    if new_message is not None:
        messages.append(new_message if new_message.role else new_message.model_copy(update={"role": "user"}))
    return messages
