"""Human input in a workflow graph (google-adk 2.x's ``RequestInput``): a node asks,
the run ends waiting, and a later message answers.

Asking: a node yields (or returns) a :class:`RequestInput`. Its event is google-adk's
interrupt event: a ``model`` content with one function call named
``adk_request_input`` whose id is the ``interrupt_id`` and whose args are
``interruptId``, ``payload``, ``message`` and ``response_schema`` (a JSON schema, or
None), and ``long_running_tool_ids`` naming that id. The node does not finish: the
nodes after it are not triggered, the rest of the graph runs on, and the run ends
without an error once nothing else runs. Everything that says a node waits is in the
committed events, so a waiting run outlives any restart of its host.

A node's request for a credential (``adk_request_credential``, see ``_node_auth``) is
a second kind of question under the same rule: :func:`interrupt_ids` names both, and
what follows holds for both, except that a credential's answer is checked as a
credential (it carries one, and the OAuth state the request made) instead of against
a ``response_schema``.

Answering: a new message whose parts are function responses (name
``adk_request_input``, id the interrupt's, response ``{"result": value}`` or a dict)
continues the graph where it waits (:func:`find_continuation`), as google-adk's runner
does: the nodes that finished are not run again; a node whose requests are all
answered finishes with the answer as its output (several: a dict by interrupt id; a
node that chose a route while asking: on that route, with no output), or, with
``rerun_on_resume=True``, runs again as soon as one of its latest requests is answered,
with the answers so far in ``ctx.resume_inputs``. An answer answers the newest open
request of its id (the same id may be asked again round a loop, or by a new run of the
graph) and is checked against its ``response_schema`` first. The answer is a new
invocation: its events carry its own invocation id (google-adk reuses the one that
asked). In order, a message is refused with
:class:`WorkflowDataError` (nothing runs) when it answers a request the workflow never
made, one already answered, requests of two different runs, or gives an answer its
schema refuses.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError, create_model

from .._types import Content, Event, FunctionCall, FunctionResponse, Part
from ..events.request_input import RequestInput
from ._errors import WorkflowDataError, WorkflowResumeError

__all__ = ["QUESTIONS", "REQUEST_CREDENTIAL_FUNCTION_CALL_NAME", "REQUEST_INPUT_FUNCTION_CALL_NAME", "AskKey",
           "Continuation", "Record", "RequestInput", "find_continuation", "interrupt_ids", "request_input_event",
           "request_input_response"]

#: The function call name of a request for input (google-adk's).
REQUEST_INPUT_FUNCTION_CALL_NAME = "adk_request_input"
#: The function call name of a request for a credential (google-adk's; see ``_node_auth``).
REQUEST_CREDENTIAL_FUNCTION_CALL_NAME = "adk_request_credential"
#: The questions a node asks a client and waits on: the one rule (``interrupt_ids``)
#: the graph's waiting, answering and resuming read.
QUESTIONS = frozenset({REQUEST_INPUT_FUNCTION_CALL_NAME, REQUEST_CREDENTIAL_FUNCTION_CALL_NAME})


def _json_schema(schema: Any) -> dict[str, Any] | None:
    if schema is None:
        return None
    if isinstance(schema, dict):
        return schema
    return TypeAdapter(schema).json_schema()


def request_input_event(request: RequestInput) -> Event:
    """The interrupt event of ``request`` (see the module)."""
    args = request.model_dump(by_alias=True, exclude={"response_schema"}, mode="json")
    args["response_schema"] = _json_schema(request.response_schema)
    call = FunctionCall(id=request.interrupt_id, name=REQUEST_INPUT_FUNCTION_CALL_NAME, args=args)
    return Event(content=Content(role="model", parts=(Part(function_call=call),)),
                 long_running_tool_ids=(request.interrupt_id,))


def request_input_response(interrupt_id: str, response: Any) -> Part:
    """The part that answers request ``interrupt_id`` (a dict as it is; any other value
    as ``{"result": value}``)."""
    wrapped = response if isinstance(response, dict) else {"result": response}
    return Part(function_response=FunctionResponse(id=interrupt_id, name=REQUEST_INPUT_FUNCTION_CALL_NAME,
                                                   response=wrapped))


def interrupt_ids(event: Event) -> list[str]:
    """The ids of the questions ``event`` asks a client (its function calls named in
    :data:`QUESTIONS`: requests for input and for a credential)."""
    if event.content is None:
        return []
    return [c.id for c in event.content.function_calls if c.name in QUESTIONS and c.id]


def _question_of(event: Event, interrupt_id: str) -> FunctionCall | None:
    for call in event.content.function_calls if event.content is not None else ():
        if call.id == interrupt_id:
            return call
    return None


def _unwrap(response: dict[str, Any]) -> Any:
    """A function response as the answer: ``{"result": v}`` is ``v`` (a string that is
    JSON, parsed: adk-web sends typed text so); any other dict as it is."""
    if len(response) == 1 and "result" in response:
        value = response["result"]
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError:
                return value
        return value
    return response


_TYPES: dict[str, Any] = {"integer": int, "number": float, "string": str, "boolean": bool, "array": list,
                          "object": dict}


def _checked(value: Any, schema: Any, interrupt_id: str) -> Any:
    """``value`` coerced to the request's JSON ``schema`` (google-adk's rule: an object
    with properties is validated field by field, a missing optional field None; a
    plain type coerced; any other schema taken as it is)."""
    if not isinstance(schema, dict):
        return value
    kind = schema.get("type")
    try:
        if kind == "object" and isinstance(schema.get("properties"), dict):
            required = set(schema.get("required") or ())
            fields: dict[str, Any] = {}
            for name, spec in schema["properties"].items():
                typ = _TYPES.get(str(spec.get("type")), Any) if isinstance(spec, dict) else Any
                fields[name] = (typ, ...) if name in required else (typ | None, None)
            model = create_model("Answer", **fields)
            return model.model_validate(value).model_dump()
        if isinstance(kind, str) and kind in _TYPES:
            return TypeAdapter(_TYPES[kind]).validate_python(value)
    except ValidationError as exc:
        raise WorkflowDataError(f"the answer to request {interrupt_id!r} does not fit its response_schema: "
                                f"{exc}") from None
    return value


def _usable_credential(value: Any, args: dict[str, Any], interrupt_id: str) -> Any:
    """``value`` when it can answer the credential request whose call has ``args``: it
    carries a credential and, when the request made an OAuth state, that state (tried
    on a scratch state with the request's ``authConfig``; a request whose config does
    not parse leaves the node to judge). Else :class:`WorkflowDataError`."""
    from ..auth._requests import store_answer
    from ..auth.auth_tool import AuthConfig

    try:
        requested = AuthConfig.model_validate(args.get("authConfig"))
    except (ValidationError, TypeError, ValueError):
        return value
    if store_answer(requested, value, {}, interrupt_id) is None:
        raise WorkflowDataError(
            f"the answer to credential request {interrupt_id!r} cannot be used: it carries no credential, or not the "
            f"OAuth state the request was made with; answer with the request's authConfig, its "
            f"exchangedAuthCredential filled in")
    return value


def _answer(response: dict[str, Any], question: FunctionCall | None, interrupt_id: str) -> Any:
    """A function response as the answer to ``question`` (its call), unwrapped and
    checked: against its ``response_schema`` (a request for input) or as a credential
    (a request for one); :class:`WorkflowDataError` when refused."""
    value = _unwrap(response)
    args = dict(question.args or {}) if question is not None else {}
    if question is not None and question.name == REQUEST_CREDENTIAL_FUNCTION_CALL_NAME:
        return _usable_credential(value, args, interrupt_id)
    return _checked(value, args.get("response_schema"), interrupt_id)


#: A request as asked once: (the id of the event that asked it, its interrupt id). The
#: same interrupt id may be asked again (a loop back to the asking node, or another run
#: of the graph): an answer answers the newest ask of its id still open, as google-adk's.
AskKey = tuple[str, str]


@dataclass
class Continuation:
    """A graph run continued by answers: ``invocations`` (the ids of the invocations of
    the run, the current one last), ``events`` (their committed node events, in order),
    ``answers`` (each ask answered -> its answer, checked), ``fresh`` (the asks the
    current message answers), ``node_input`` (the message the run began with),
    ``resumed`` (the current invocation is itself being resumed, so some of its nodes
    may have run)."""

    invocations: list[str]
    events: list[Event]
    answers: dict[AskKey, Any]
    fresh: set[AskKey]
    node_input: Any
    resumed: bool = False


def _ours(event: Event, root_path: str) -> bool:
    path = event.node_info.path if event.node_info is not None else None
    return bool(path) and (path == root_path or str(path).startswith(root_path + "/"))


@dataclass
class _Ask:
    key: AskKey
    invocation: str
    question: FunctionCall | None


def find_continuation(root_path: str, events: Iterable[Event], invocation_id: str, message: Content | None,
                      *, resumed: bool) -> Continuation | None:
    """The graph run that ``message`` (the current invocation's, ``invocation_id``)
    continues, from the session's ``events``; None when the message answers nothing
    (it has no function response). Raises :class:`WorkflowDataError` as the module
    says."""
    responses = [r for r in (message.function_responses if message is not None else []) if r.id]
    if not responses:
        return None
    open_asks: dict[str, list[_Ask]] = {}  # interrupt id -> its asks not answered yet, newest last
    ever: set[str] = set()
    answered: dict[AskKey, tuple[_Ask, Any]] = {}
    parent: dict[str, str] = {}  # a continuing invocation -> the one it answered
    first_message: dict[str, Any] = {}
    history = list(events)
    # this turn's events are left out: those of its invocation from its user event on (an
    # answering turn goes on in the invocation it answers, so earlier ones stay in)
    ids = {r.id for r in responses}
    own = [i for i, e in enumerate(history) if e.invocation_id == invocation_id and e.author == "user"]
    current = next((i for i in reversed(own) if ids <= {r.id for r in history[i].get_function_responses()}), 0)
    for index, event in enumerate(history):
        if event.invocation_id == invocation_id and index >= current:
            continue
        if event.author == "user":
            first_message.setdefault(event.invocation_id, event.content)
            for response in event.get_function_responses():
                pending = open_asks.get(response.id or "")
                if not pending:
                    continue
                try:
                    value = _answer(response.response, pending[-1].question, response.id or "")
                except WorkflowDataError:
                    continue  # a refused answer: its run failed, the request is still open
                ask = pending.pop()
                answered[ask.key] = (ask, value)
                parent[event.invocation_id] = ask.invocation
        elif _ours(event, root_path):
            for interrupt in interrupt_ids(event):
                ever.add(interrupt)
                open_asks.setdefault(interrupt, []).append(
                    _Ask((event.id, interrupt), event.invocation_id, _question_of(event, interrupt)))

    def origin(invocation: str) -> str:
        seen = set()
        while invocation in parent and invocation not in seen:
            seen.add(invocation)
            invocation = parent[invocation]
        return invocation

    unknown = [r.id for r in responses if r.id not in ever]
    if unknown:
        raise WorkflowDataError(f"this message answers {unknown}, which no node of {root_path.split('@')[0]!r} "
                                f"asked for (a function response's id is the interrupt_id of a RequestInput)")
    now: dict[AskKey, tuple[_Ask, Any]] = {}
    for response in responses:
        pending = [a for a in open_asks.get(response.id or "", []) if a.key not in now]
        if not pending:
            raise WorkflowDataError(f"request {response.id!r} was answered already (and not asked again)")
        now[pending[-1].key] = (pending[-1], _answer(response.response, pending[-1].question, response.id or ""))
    runs = {origin(ask.invocation) for ask, _ in now.values()}
    if len(runs) > 1:
        raise WorkflowDataError("this message answers requests of different runs: answer each run in its own message")
    run = runs.pop()
    answers = {key: value for key, (ask, value) in {**answered, **now}.items() if origin(ask.invocation) == run}
    members = [inv for inv in dict.fromkeys(e.invocation_id for e in history) if inv and origin(inv) == run]
    members = [inv for inv in members if inv != invocation_id] + [invocation_id]
    chosen = set(members)
    node_events = [e for e in history if e.invocation_id in chosen and e.author != "user" and _ours(e, root_path)]
    return Continuation(invocations=members, events=node_events, answers=answers, fresh=set(now),
                        node_input=first_message.get(run), resumed=resumed)


class Record:
    """The committed node events of a continued run, as the graph scheduler takes them
    (the part of the engine's replay it uses): each handed out once, remembered so that
    they are not yielded again. A continuation that is not itself a resumed invocation
    continues a run that ended: a node run found begun and not finished there (its
    invocation was killed and never resumed) is refused with
    :class:`WorkflowResumeError` unless it is safe to run again."""

    def __init__(self, events: list[Event], decisions: dict[str, Any] | None = None) -> None:
        self.decisions = dict(decisions or {})
        self._events = list(events)
        self.replayed: set[str] = set()

    def take_matching(self, wanted: Any) -> list[Event]:
        taken = [e for e in self._events if wanted(e)]
        self._events = [e for e in self._events if not wanted(e)]
        self.replayed.update(e.id for e in taken)
        return taken

    def scoped(self, events: list[Event]) -> Record:
        scoped = Record(events, self.decisions)
        scoped.replayed.update(e.id for e in events)
        return scoped

    def was_replayed(self, event: Event) -> bool:
        return event.id in self.replayed

    def has(self, author: str, branch: str | None) -> bool:
        """Whether an agent has events to replay by author: never (graphs take theirs by path)."""
        return False

    def pending_results(self, agent: str, calls: list[FunctionCall], tools: Any,
                        not_run: set[str] | frozenset[str] = frozenset(),
                        ) -> tuple[list[FunctionCall], dict[str, dict[str, Any]]]:
        unsafe = [c.id for c in calls if c.id not in not_run]
        if unsafe:
            raise WorkflowResumeError(
                f"workflow {agent!r}: node runs {unsafe} began and did not finish in an invocation that was "
                f"interrupted and never resumed: resume it first (Runner.resume), then answer")
        return list(calls), {}
