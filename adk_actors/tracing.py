"""Traces of turns, kept with their sessions (what google-adk's adk-web trace view shows).

A :class:`TraceRecorder` is a telemetry handler (:mod:`adk_actors.telemetry`). The
run workers attach one. It turns each invocation's ``agent``, ``llm`` and ``tool``
spans into :class:`TraceSpan` records, in the shape google-adk's trace view reads:

* ``invoke_agent <agent>``: one per agent run; the root of its trace (a workflow's:
  see the next).
* ``invoke_workflow <workflow>``: one per run of a graph :class:`~adk_actors.workflow.Workflow`,
  root or nested, in place of its ``invoke_agent`` span (the engine's agent span of
  the workflow, which opens inside the workflow's own, is taken as it: what runs
  inside it is its child). It carries ``gen_ai.workflow.name``, and
  ``gen_ai.workflow.nested`` (true) when it runs inside another span of the turn, as
  google-adk's does inside another workflow or its runner's: the root workflow's has none.
* ``generate_content <model>``: one per model call. It carries the id of the event
  the call made (``gcp.vertex.agent.event_id``), the request
  (``gcp.vertex.agent.llm_request``), the response (``gcp.vertex.agent.llm_response``),
  the token usage and the finish reason.
* ``execute_tool <tool>``: one per tool call, with its arguments and its response;
  no ``gen_ai.conversation.id`` (google-adk's names none; every other span names the
  session).
* ``invoke_node <node>``: one per attempt of a workflow's function node (a join, a
  parallel worker too; not an agent node nor a nested workflow), under its workflow's
  span (a node run by ``ctx.run_node``: under the span of the node that ran it), as
  google-adk's: ``gen_ai.operation.name`` and ``gen_ai.conversation.id`` (no agent), and
  when the attempt succeeded with events, their ids
  (``gcp.vertex.agent.associated_event_ids``).

An ``AgentTool``'s agent runs as an invocation of its own inside the tool's span. Its
spans are the turn's, as google-adk's are (its child run shares the caller's trace):
they join the trace of the span they start in, under it (its ``invoke_agent`` under the
``execute_tool`` span, and so on down), keep their own invocation id
(``gcp.vertex.agent.invocation_id``), name the child's own session (google-adk runs it
in a new in-memory session) as their ``gen_ai.conversation.id``, and are taken with
the turn that ran the tool.

When a turn ends, the worker takes the turn's spans (:meth:`TraceRecorder.take`),
packs them (:func:`pack`: JSON, zlib-compressed, about a quarter of the size, with
the ids of the events the model calls made) and sends them with its outcome. The
partition stores the packed trace as it is, with the turn's last events, in the same
transaction: it spends no time on it beyond the insert. A session keeps the traces
of its last ``trace_turns`` turns (``[host]``, 0: none are recorded).

What differs from google-adk, on purpose:

* Trace and span ids are random 53-bit integers. The shape is google-adk's (integers),
  but a browser reads them exactly: JavaScript loses precision above 2**53, and
  google-adk's 64- and 128-bit ids do not survive it.
* Traces are stored with the session. They survive a restart of the host and go when
  the session is deleted. google-adk keeps them in the server's memory.
* A request keeps only its last ``MAX_CONTENTS`` contents (``contents_omitted`` says
  how many went before). The history is in the session's events already, and a long
  session's every model call would otherwise store it again, whole.
* Long values are cut to ``MAX_CHARS`` characters. Everything recorded passes
  through the kit's secret redaction first.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import to_json

from . import telemetry
from ._secrets import redact_json
from ._types import LlmRequest, LlmResponse

__all__ = ["ASSOCIATED_EVENT_IDS", "EVENT_ID", "INVOCATION_ID", "MAX_CHARS", "MAX_CONTENTS", "PackedTrace", "TraceRecorder", "TraceSpan",
           "pack", "unpack"]

INVOCATION_ID = "gcp.vertex.agent.invocation_id"
EVENT_ID = "gcp.vertex.agent.event_id"
#: A recorded request keeps this many of its last contents.
MAX_CONTENTS = 10
#: A recorded text value (a request, a response, tool arguments) is cut to this many characters.
MAX_CHARS = 16_000
HANDLER_ID = "adk-actors-trace"
_OPERATIONS = {"agent": "invoke_agent", "llm": "generate_content", "tool": "execute_tool",
               "workflow": "invoke_workflow", "node": "invoke_node"}
#: google-adk's attribute of an ``invoke_node`` span: the ids of the events its node made
ASSOCIATED_EVENT_IDS = "gcp.vertex.agent.associated_event_ids"
#: google-adk's attributes of an ``invoke_workflow`` span (OpenTelemetry GenAI semconv 1.41)
WORKFLOW_NAME = "gen_ai.workflow.name"
WORKFLOW_NESTED = "gen_ai.workflow.nested"
_EVENTS = [("adk", kind, phase) for kind in _OPERATIONS for phase in ("start", "stop", "exception")]


@dataclass(frozen=True)
class TraceSpan:
    """One finished span. Times are nanoseconds since the epoch."""

    name: str
    start_time: int
    end_time: int
    trace_id: int
    span_id: int
    parent_span_id: int | None
    attributes: dict[str, Any] = field(default_factory=dict)

    @property
    def invocation_id(self) -> str:
        return str(self.attributes.get(INVOCATION_ID, ""))

    @property
    def event_id(self) -> str | None:
        """The id of the event this span made (a model call's), if any."""
        value = self.attributes.get(EVENT_ID)
        return value if isinstance(value, str) else None

    def web_ui(self) -> dict[str, Any]:
        """The span as google-adk's ``/debug/trace/session/{id}`` serves it."""
        return {"name": self.name, "start_time": self.start_time, "end_time": self.end_time,
                "trace_id": self.trace_id, "span_id": self.span_id, "parent_span_id": self.parent_span_id,
                "attributes": self.attributes, "logs": []}

    @classmethod
    def from_web_ui(cls, served: Any) -> TraceSpan:
        """A span as ``/debug/trace/session/{id}`` serves it (:meth:`web_ui`), read back:
        its ``logs`` dropped. A ValueError when it is not one (not an object, a field
        missing or of the wrong type)."""
        if not isinstance(served, dict):
            raise ValueError(f"a served span is an object, not {type(served).__name__}")
        try:
            name, start, end = served["name"], served["start_time"], served["end_time"]
            trace_id, span_id, parent = served["trace_id"], served["span_id"], served.get("parent_span_id")
            attributes = served.get("attributes") or {}
        except KeyError as missing:
            raise ValueError(f"a served span has no {missing}") from None
        numbers = (start, end, trace_id, span_id) + (() if parent is None else (parent,))
        if (not isinstance(name, str) or not isinstance(attributes, dict)
                or not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers)):
            raise ValueError(f"a served span has a field of the wrong type: {name!r}")
        return cls(name, start, end, trace_id, span_id, parent, attributes)

    def flat(self) -> dict[str, Any]:
        """The span's attributes with its ids, as google-adk's ``/debug/trace/{event_id}``
        serves them."""
        return {**self.attributes, "trace_id": self.trace_id, "span_id": self.span_id}


@dataclass(frozen=True)
class PackedTrace:
    """One turn's spans as they travel and are stored: compressed JSON, and the ids of
    the events its model calls made (what ``/debug/trace/{event_id}`` looks up)."""

    invocation_id: str
    data: bytes
    event_ids: tuple[str, ...] = ()


def pack(invocation_id: str, spans: list[TraceSpan]) -> PackedTrace | None:
    """``spans`` packed (None when there are none)."""
    if not spans:
        return None
    text = json.dumps([span.web_ui() for span in spans], separators=(",", ":"))
    return PackedTrace(invocation_id, zlib.compress(text.encode(), 1),
                       tuple(span.event_id for span in spans if span.event_id))


def unpack(data: bytes) -> list[TraceSpan]:
    """The spans :func:`pack` packed."""
    spans = []
    for fields in json.loads(zlib.decompress(data)):
        fields.pop("logs", None)
        spans.append(TraceSpan(**fields))
    return spans


def new_id() -> int:
    """A random, non-zero 53-bit id (exact in JavaScript). From the OS's random source,
    so processes forked from one parent do not repeat each other's ids."""
    return secrets.randbits(53) or 1


def _text(value: Any) -> str:
    """``value`` as JSON (a string stays as it is; pydantic models inside it as their
    JSON, in snake_case, without nulls), redacted, cut to MAX_CHARS. A value that has
    no JSON (nested too deep, say: the store refuses it and ends the run typed) is
    recorded as a note saying so: a trace never fails a run."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = to_json(value, by_alias=False, exclude_none=True, fallback=str).decode()
        except (ValueError, RecursionError) as exc:
            return f"(not recorded: {type(exc).__name__}: {str(exc)[:200]})"
    text = redact_json(text)
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + "…(cut)"


def _request(request: LlmRequest) -> dict[str, Any]:
    """A model request as google-adk records it (model, config with the system
    instruction and tools, contents), with only its last MAX_CONTENTS contents."""
    config: dict[str, Any] = dict(request.config)
    if request.system_instruction:
        config["system_instruction"] = request.system_instruction
    tools = ([{"function_declarations": list(request.tools)}] if request.tools else []) + [
        dict(entry) for entry in request.builtin_tools]  # Gemini's own tools, as google-adk's config lists them
    if tools:
        config["tools"] = tools
    kept = request.contents[-MAX_CONTENTS:]
    body: dict[str, Any] = {"model": request.model, "config": config, "contents": list(kept)}
    if len(kept) < len(request.contents):
        body["contents_omitted"] = len(request.contents) - len(kept)
    return body


@dataclass
class _Open:
    name: str
    start_time: int
    trace_id: int
    span_id: int
    parent_span_id: int | None
    attributes: dict[str, Any]
    turn: str  # the invocation whose turn the span is kept with (an AgentTool's child run: its caller's)
    invocation: str = ""  # the invocation the span is of


class TraceRecorder:
    """Collects the spans of the invocations run in this process (see the module).

    Thread-safe: the engine reports from the thread that runs a turn, and the
    worker takes a turn's spans from there too when it ends."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, _Open] = {}  # telemetry's span id -> the span being recorded
        self._same: dict[str, str] = {}  # a workflow's agent span id -> its workflow span's (not recorded)
        self._trace_ids: dict[str, int] = {}  # invocation id -> its trace id
        self._done: dict[str, list[TraceSpan]] = {}  # invocation id -> its finished spans

    def attach(self, handler_id: str = HANDLER_ID) -> None:
        telemetry.attach(handler_id, _EVENTS, self.handle)

    @staticmethod
    def detach(handler_id: str = HANDLER_ID) -> None:
        telemetry.detach(handler_id)

    def take(self, invocation_id: str) -> list[TraceSpan]:
        """The finished spans of ``invocation_id``, in the order they ended; forgotten here."""
        with self._lock:
            self._trace_ids.pop(invocation_id, None)
            return self._done.pop(invocation_id, [])

    def handle(self, event: tuple[str, ...], measurements: Mapping[str, Any], metadata: Mapping[str, Any]) -> None:
        """Telemetry handler: a start opens a span, a stop or an exception finishes it."""
        _, kind, phase = event
        key = metadata.get("span_id")
        invocation = str(metadata.get("invocation_id") or "")
        if not isinstance(key, str) or not invocation:
            return
        if phase == "start":
            self._start(kind, key, invocation, metadata)
            return
        with self._lock:
            if self._same.pop(key, None) is not None:
                return  # a workflow's agent span: its workflow's span ends on its own
            opened = self._open.pop(key, None)
        if opened is None:
            return
        attributes = opened.attributes
        attributes.update(_finish_attributes(kind, metadata))
        if phase == "exception":
            attributes["error.type"] = str(metadata.get("kind") or "Exception")
            attributes["error.message"] = _text(str(metadata.get("reason") or ""))[:500]
        done = TraceSpan(opened.name, opened.start_time, time.time_ns(), opened.trace_id, opened.span_id,
                         opened.parent_span_id, attributes)
        with self._lock:
            if opened.turn in self._trace_ids:  # not taken already (a turn that ended without it)
                self._done.setdefault(opened.turn, []).append(done)

    def _start(self, kind: str, key: str, invocation: str, metadata: Mapping[str, Any]) -> None:
        """Open the span ``key`` under its parent's (the turn's trace), or as the root of
        a new trace for ``invocation``; a workflow's agent span is taken as the workflow's."""
        operation = _OPERATIONS[kind]
        target = metadata.get("model") if kind == "llm" else metadata.get("tool") if kind == "tool" \
            else metadata.get("workflow") if kind == "workflow" else metadata.get("node") if kind == "node" \
            else metadata.get("agent")
        attributes: dict[str, Any] = {"gen_ai.operation.name": operation}
        if kind not in ("workflow", "node"):
            attributes["gen_ai.agent.name"] = str(metadata.get("agent") or "")
        if kind != "tool":  # google-adk's tool span names no conversation
            attributes["gen_ai.conversation.id"] = str(metadata.get("session") or "")
        attributes[INVOCATION_ID] = invocation
        if kind == "llm":
            attributes["gen_ai.request.model"] = str(metadata.get("model") or "")
        elif kind == "tool":
            attributes["gen_ai.tool.name"] = str(metadata.get("tool") or "")
            attributes["gen_ai.tool.call.id"] = str(metadata.get("function_call_id") or "")
        elif kind == "workflow":
            attributes[WORKFLOW_NAME] = str(target or "")
        with self._lock:
            parent_key = str(metadata.get("parent_span_id") or "")
            parent_key = self._same.get(parent_key, parent_key)
            parent = self._open.get(parent_key)
            if kind == "agent" and parent is not None and _is_workflow_of(parent, metadata, invocation):
                self._same[key] = parent_key
                return
            if kind == "workflow" and parent is not None:
                attributes[WORKFLOW_NESTED] = True
            if parent is not None:  # inside a span being recorded: its turn's, also from a child invocation
                turn, trace_id = parent.turn, parent.trace_id
            else:
                turn, trace_id = invocation, self._trace_ids.setdefault(invocation, new_id())
            self._open[key] = _Open(f"{operation} {target}", time.time_ns(), trace_id, new_id(),
                                    parent.span_id if parent is not None else None, attributes, turn, invocation)


def _is_workflow_of(span: _Open, metadata: Mapping[str, Any], invocation: str) -> bool:
    """Is ``span`` the workflow span of the agent span starting with ``metadata`` (the
    engine's span of that workflow's run, right inside it)?"""
    return (span.attributes.get("gen_ai.operation.name") == "invoke_workflow" and span.invocation == invocation
            and span.attributes.get(WORKFLOW_NAME) == str(metadata.get("agent") or ""))


def _context_cache_telemetry() -> bool:
    """google-adk's opt-in for its experimental context-cache span attributes:
    ``ADK_EXPERIMENTAL_TELEMETRY`` true, or ``context_cache`` among the comma-separated
    ``ADK_EXPERIMENTAL_TELEMETRY_FEATURES``."""
    if os.environ.get("ADK_EXPERIMENTAL_TELEMETRY", "false").strip().lower() in ("1", "true"):
        return True
    features = os.environ.get("ADK_EXPERIMENTAL_TELEMETRY_FEATURES", "")
    return "context_cache" in {f.strip().lower() for f in features.split(",")}


def _cache_attributes(cache: Any) -> dict[str, Any]:
    """A model call's context cache as google-adk's span attributes."""
    found: dict[str, Any] = {"adk.experimental.context_cache.hit": cache.cache_name is not None,
                             "adk.experimental.context_cache.fingerprint": cache.fingerprint,
                             "adk.experimental.context_cache.contents_count": cache.contents_count}
    if cache.invocations_used is not None:
        found["adk.experimental.context_cache.invocations_used"] = cache.invocations_used
    return found


def _finish_attributes(kind: str, metadata: Mapping[str, Any]) -> dict[str, Any]:
    """What a span learns at its end: a model call's event, request, response and
    usage; a tool call's arguments and response; a function node's events; an error."""
    found: dict[str, Any] = {}
    if kind == "llm":
        if metadata.get("event_id"):
            found[EVENT_ID] = str(metadata["event_id"])
        request = metadata.get("request")
        if isinstance(request, LlmRequest):
            found["gcp.vertex.agent.llm_request"] = _text(_request(request))
        response = metadata.get("response")
        if isinstance(response, LlmResponse):
            found["gcp.vertex.agent.llm_response"] = _text(response)
            if response.finish_reason:
                found["gen_ai.response.finish_reasons"] = [response.finish_reason.lower()]
            if response.cache_metadata is not None and _context_cache_telemetry():
                found.update(_cache_attributes(response.cache_metadata))
        usage = metadata.get("usage") or {}
        if usage.get("prompt_token_count") is not None:
            found["gen_ai.usage.input_tokens"] = int(usage["prompt_token_count"])
        if usage.get("candidates_token_count") is not None:
            found["gen_ai.usage.output_tokens"] = int(usage["candidates_token_count"])
    elif kind == "node":
        if metadata.get("event_ids"):
            found[ASSOCIATED_EVENT_IDS] = [str(i) for i in metadata["event_ids"]]
    elif kind == "tool":
        if "args" in metadata:
            found["gcp.vertex.agent.tool_call_args"] = _text(metadata["args"])
        if "response" in metadata:
            found["gcp.vertex.agent.tool_response"] = _text(metadata["response"])
    if metadata.get("error"):
        found["error.type"] = str(metadata["error"])
    return found
