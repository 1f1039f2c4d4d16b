"""google-adk's ``google.adk.utils.streaming_utils``: a model stream's chunks gathered
into one final answer.

:class:`StreamingResponseAggregator` takes google-genai's
``GenerateContentResponse`` chunks (from a user's own google-genai client) and gives
back this project's ``LlmResponse``: each chunk as a partial response, and at
:meth:`~StreamingResponseAggregator.close` the whole answer, its parts in the order
they came (google-adk's progressive streaming, its default): a run of text pieces of
one kind (thought or answer) joined into one part, keeping the first thought
signature seen in it; a function call streamed in pieces (``partial_args`` by JSON
path, ``will_continue``) put together where it began; a function call repeated with
the same id from the model kept once. A streamed call's piece shows in its chunk's
partial response without its pieces of arguments (this project's ``FunctionCall``
has no field for them). This project's own models aggregate their
streams themselves (:mod:`adk_actors.models`); google-adk's older, non-progressive
mode is not followed.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncGenerator
from typing import Any

from .._types import LlmResponse

__all__ = ["StreamingResponseAggregator"]

#: one step of a JSON path: ``[3]``, ``['key']`` / ``["key"]``, or ``.key``
_STEP = re.compile(r"\[(\d+)\]|\[\s*'((?:[^'\\]|\\.)*)'\s*\]|\[\s*\"((?:[^\"\\]|\\.)*)\"\s*\]|\.?((?:[^.\[\]\\]|\\.)+)")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}
#: the largest list index a streamed argument may set (a guard against a huge list)
_MAX_INDEX = 10_000


def _unescape(text: str) -> str:
    return re.sub(r"\\u([0-9a-fA-F]{4})|\\(.)",
                  lambda m: chr(int(m.group(1), 16)) if m.group(1) else _ESCAPES.get(m.group(2), m.group(2)), text)


def _steps(path: str) -> list[str | int]:
    """``$.a.b[0]['c d']`` as ``["a", "b", 0, "c d"]``."""
    body = path[2:] if path.startswith("$.") else path[1:] if path.startswith("$") else path
    steps: list[str | int] = []
    for match in _STEP.finditer(body):
        index, single, double, bare = match.groups()
        steps.append(int(index) if index is not None else _unescape(single if single is not None else
                                                                     double if double is not None else bare))
    return steps


def _place(target: Any, steps: list[str | int], value: Any) -> None:
    """Set ``value`` at ``steps`` inside ``target``, making the dicts and lists on the
    way; a step that does not fit what is there (or an index over the guard) sets
    nothing."""
    for at, step in enumerate(steps):
        last = at == len(steps) - 1
        fresh: Any = value if last else [] if isinstance(steps[at + 1], int) else {}
        if isinstance(step, str):
            if not isinstance(target, dict):
                return
            if last:
                target[step] = value
                return
            target = target.setdefault(step, fresh)
        else:
            if not isinstance(target, list) or not 0 <= step <= _MAX_INDEX:
                return
            target.extend([None] * (step + 1 - len(target)))
            if last:
                target[step] = value
                return
            if target[step] is None:
                target[step] = fresh
            target = target[step]


def _dump(value: Any) -> Any:
    return value.model_dump(exclude_none=True) if hasattr(value, "model_dump") else value


def _content(content: Any) -> Any:
    """A chunk's content as this project's types take it: a function call's streamed
    pieces (``partial_args``, ``will_continue``) left out, a piece without a name
    named ``""``."""
    dumped = _dump(content)
    for part in (dumped or {}).get("parts") or []:
        call = part.get("function_call")
        if call is not None:
            call.pop("partial_args", None)
            call.pop("will_continue", None)
            call.setdefault("name", "")
    return dumped


def _enum_text(value: Any) -> str | None:
    return None if value is None else str(getattr(value, "name", None) or value)


class _Call:
    """A function call being streamed: where its part goes, and what came so far."""

    def __init__(self, slot: int, call_id: str) -> None:
        self.slot, self.id = slot, call_id
        self.name: str | None = None
        self.args: dict[str, Any] = {}
        self.pieces: dict[str, list[str]] = {}  # a string argument's pieces, by JSON path
        self.signature: bytes | None = None


class StreamingResponseAggregator:
    """Gathers one stream's chunks (see the module)."""

    def __init__(self) -> None:
        self._last: Any = None  # the last chunk given
        self._usage: Any = None
        self._grounding: Any = None
        self._finish: Any = None
        self._parts: list[dict[str, Any] | None] = []  # the answer's parts, in order (None: a call still open)
        self._text: list[str] = []
        self._thought: bool | None = None
        self._signature: bytes | None = None
        self._call: _Call | None = None

    def _end_text(self) -> None:
        if self._text:
            part: dict[str, Any] = {"text": "".join(self._text)}
            if self._thought:
                part["thought"] = True
            if self._signature:
                part["thought_signature"] = self._signature
            self._parts.append(part)
        self._text, self._thought, self._signature = [], None, None

    def _end_call(self) -> None:
        call, self._call = self._call, None
        if call is None or not call.name:
            return
        for path, pieces in call.pieces.items():
            _place(call.args, _steps(path), "".join(pieces))
        part: dict[str, Any] = {"function_call": {"name": call.name, "args": dict(call.args), "id": call.id}}
        if call.signature:
            part["thought_signature"] = call.signature
        if 0 <= call.slot < len(self._parts) and self._parts[call.slot] is None:
            self._parts[call.slot] = part
        else:
            self._parts.append(part)

    def _streamed_call(self, part: Any, call: Any) -> None:
        """One piece of a function call streamed by parts: a new name closes the call
        before it; the pieces' strings are joined at the end, other values set at once."""
        if call.name and self._call is not None and self._call.name and call.name != self._call.name:
            self._end_text()
            self._end_call()
        if self._call is None:
            self._end_text()
            self._call = _Call(len(self._parts), call.id or f"adk-{uuid.uuid4()}")
            self._parts.append(None)
        state = self._call
        if not call.id:
            call.id = state.id  # the chunk's piece names its call, as google-adk's does
        state.name = call.name or state.name
        state.signature = state.signature or getattr(part, "thought_signature", None)
        for piece in getattr(call, "partial_args", None) or []:
            path = piece.json_path
            if not path:
                continue
            if piece.string_value is not None:
                if path not in state.pieces:
                    _place(state.args, _steps(path), "")  # its place among the arguments, in order
                    state.pieces[path] = []
                state.pieces[path].append(piece.string_value)
            elif piece.number_value is not None or piece.bool_value is not None or piece.null_value is not None:
                state.pieces.pop(path, None)
                value = piece.number_value if piece.number_value is not None else piece.bool_value
                _place(state.args, _steps(path), value)
        if not getattr(call, "will_continue", None):
            self._end_text()
            self._end_call()

    def _add(self, part: Any) -> None:
        call = getattr(part, "function_call", None)
        if part.text:
            if self._text and part.thought != self._thought:
                self._end_text()
            if not self._text:
                self._thought = part.thought
            self._text.append(part.text)
            self._signature = self._signature or part.thought_signature
        elif call is not None:
            if (call.partial_args or call.will_continue is not None
                    or (self._call is not None and not call.args)):
                self._streamed_call(part, call)
                return
            self._end_text()
            self._end_call()
            if call.name:
                call.id = call.id or f"adk-{uuid.uuid4()}"  # on the chunk too, as google-adk's
                self._parts.append(_dump(part))
        else:
            self._end_text()
            self._parts.append(_dump(part))

    async def process_response(self, response: Any) -> AsyncGenerator[LlmResponse, None]:
        """Take one chunk: remember its usage, grounding and finish reason when it has
        them, add its parts to the answer, and yield it as a partial response (its
        first candidate's content; a candidate with no parts that did not stop, or no
        candidate, as the error it names)."""
        self._last = response
        candidates = response.candidates or []
        candidate = candidates[0] if candidates else None
        self._usage = response.usage_metadata or self._usage
        if candidate is not None:
            self._grounding = candidate.grounding_metadata or self._grounding
            self._finish = candidate.finish_reason or self._finish
            content = candidate.content
            for part in (content.parts if content is not None else None) or []:
                self._add(part)
        yield self._chunk(response, candidate)

    def _chunk(self, response: Any, candidate: Any) -> LlmResponse:
        fields: dict[str, Any] = {"usage_metadata": _dump(response.usage_metadata),
                                  "model_version": response.model_version, "partial": True}
        if candidate is None:
            feedback = response.prompt_feedback
            if feedback is not None:
                fields.update(error_code=_enum_text(feedback.block_reason),
                              error_message=feedback.block_reason_message)
            else:
                fields["content"] = {"role": "model", "parts": []}
        elif (candidate.content and candidate.content.parts) or _enum_text(candidate.finish_reason) == "STOP":
            fields.update(content=_content(candidate.content), grounding_metadata=_dump(candidate.grounding_metadata),
                          finish_reason=_enum_text(candidate.finish_reason))
        else:
            fields.update(error_code=_enum_text(candidate.finish_reason), error_message=candidate.finish_message,
                          finish_reason=_enum_text(candidate.finish_reason))
        return LlmResponse.model_validate(fields)

    @staticmethod
    def _once(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``parts`` without a function call whose model-given id came already (an id
        this side made, ``adk-...``, never counts as a repeat)."""
        seen: set[str] = set()
        kept = []
        for part in parts:
            call_id = (part.get("function_call") or {}).get("id")
            if call_id and not call_id.startswith("adk-"):
                if call_id in seen:
                    continue
                seen.add(call_id)
            kept.append(part)
        return kept

    def close(self) -> LlmResponse | None:
        """The whole answer, not partial (None when no chunk came): its parts (see the
        module), the last usage and grounding reported, the finish reason, and as its
        error a finish reason other than ``STOP`` (with the candidate's message), or,
        without a candidate, the prompt's block reason."""
        if self._last is None:
            return None
        candidates = self._last.candidates or []
        candidate = candidates[0] if candidates else None
        finish = self._finish or (candidate.finish_reason if candidate is not None else None)
        error_code = error_message = None
        if finish and _enum_text(finish) != "STOP":
            error_code, error_message = _enum_text(finish), candidate.finish_message if candidate else None
        elif candidate is None and self._last.prompt_feedback:
            error_code = _enum_text(self._last.prompt_feedback.block_reason)
            error_message = self._last.prompt_feedback.block_reason_message
        self._end_text()
        self._end_call()
        parts = self._once([part for part in self._parts if part is not None])
        return LlmResponse.model_validate({
            "content": {"role": "model", "parts": parts} if parts else None, "partial": False,
            "grounding_metadata": _dump(self._grounding), "usage_metadata": _dump(self._usage),
            "finish_reason": _enum_text(finish), "error_code": error_code, "error_message": error_message,
            "model_version": self._last.model_version})
