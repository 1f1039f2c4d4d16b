"""google-adk's ``ReflectAndRetryModelPlugin`` (``google.adk.plugins``; its private
module ``_reflect_retry_model_plugin``): a model answer that failed in one of the
listed ways (by default a malformed function call) is replaced by a call of the
reserved tool ``adk_handle_model_error``, whose result asks the model to reflect and
try again; after ``max_retries`` consecutive failures of one model the error stands.

In order, after each model answer (``after_model_callback``):

1. an answer that calls ``adk_handle_model_error`` itself (the tool is the
   framework's) counts as a failure of type ``RESERVED_TOOL_CALL`` (finish reason
   ``OTHER``); beyond the limit it becomes an error response of that code;
2. an error answer whose finish reason is listed in ``on_model_errors`` counts as a
   failure; beyond the limit the answer stands, as an error response (or, with
   ``throw_exception_if_retry_exceeded``, the default, a ``RuntimeError`` ends the
   run);
3. any other answer resets that model's count.

A failure within the limit becomes a model answer with one function call of
``adk_handle_model_error`` (id ``adk_handle_model_error_<uuid>``; arguments
``response_type`` ``ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN``, ``error_type``,
``error_details``, ``finish_reason``, ``retry_count``; a thought signature that tells
Gemini to skip its check), which the agent's flow runs as a tool call: its result is
``{"reflection_guidance": ...}`` (this project's wording, saying what google-adk's
says: the attempt out of the limit, not to repeat the same call, to try another way).

Failures are counted per model name under the scope's key (the invocation's id by
default; ``TrackingScope.GLOBAL``: one count for the plugin's life). An answer is an
error answer as google-adk's model layer makes one: its ``error_code`` is set, or it
has no content and finished for a reason other than ``STOP`` (our Gemini connector
keeps the finish reason there without setting ``error_code``).

Where the flow runs the reserved call: google-adk's ``before_model_callback`` puts
the tool into the request's ``tools_dict`` (not declared to the model); the engine
here finds tools by the agent's own list, so the call reaches the before-tool hooks
as a call of a tool the agent does not have, and this plugin's
``before_tool_callback`` answers it with the tool's result (the agent's own
before-tool callbacks and earlier plugins' see it first, as in google-adk; no
after-tool hook runs for it).
"""

from __future__ import annotations

import uuid
from typing import Any

from .._types import Content, FunctionCall, LlmResponse, Part
from ..types import FinishReason
from ._reflect_retry_utils import (
    REFLECT_AND_RETRY_RESPONSE_TYPE,
    ScopedFailureTracker,
    TrackingScope,
    resolve_scope_key,
)
from .base_plugin import BasePlugin

__all__ = ["RESERVED_TOOL_CALL_ERROR_TYPE", "ReflectAndRetryModelPlugin"]

#: the ``error_type`` of a failure that is the model calling the reserved tool itself
RESERVED_TOOL_CALL_ERROR_TYPE = "RESERVED_TOOL_CALL"
_RESERVED_TOOL = "adk_handle_model_error"
#: the thought signature Gemini takes as "no signature to check" (a call the model did not make)
_SKIP_THOUGHT_SIGNATURE = b"skip_thought_signature_validator"


def _error_code(llm_response: Any) -> Any:
    """The answer's error code as google-adk's model layer sets it (see the module)."""
    if llm_response.error_code:
        return llm_response.error_code
    content = llm_response.content
    finish = llm_response.finish_reason
    if finish and finish != FinishReason.STOP and (content is None or not content.parts):
        return finish
    return None


def _finish_reason(value: Any) -> Any:
    """A finish reason as a :class:`FinishReason` when it names one, else as it is."""
    try:
        return FinishReason(value)
    except ValueError:
        return value


class ReflectAndRetryModelPlugin(BasePlugin):
    """Turns model failures into reflection calls, retried up to ``max_retries``
    consecutive failures per model in the scope (see the module).

    ``max_retries``: a negative number is a ``ValueError``. ``on_model_errors``: the
    finish reasons that are failures (:class:`adk_actors.types.FinishReason` members;
    anything else is a ``ValueError``), ``[MALFORMED_FUNCTION_CALL]`` by default."""

    def __init__(self, name: str = "reflect_retry_model_plugin", max_retries: int = 3,
                 throw_exception_if_retry_exceeded: bool = True,
                 tracking_scope: TrackingScope = TrackingScope.INVOCATION,
                 on_model_errors: list[Any] | None = None) -> None:
        super().__init__(name=name)
        if max_retries < 0:
            raise ValueError("max_retries must be a non-negative integer.")
        self.max_retries = max_retries
        self.throw_exception_if_retry_exceeded = throw_exception_if_retry_exceeded
        self.scope = tracking_scope
        errors = [FinishReason.MALFORMED_FUNCTION_CALL] if on_model_errors is None else on_model_errors
        for error in errors:
            if not isinstance(error, FinishReason) and type(error).__name__ != "FinishReason":
                raise ValueError(f"model_error must be a FinishReason, got {error}")
        self.on_model_errors = errors
        self._tracker = ScopedFailureTracker()

    def adk_handle_model_error(self, *, response_type: str, error_type: str | None, error_details: str | None,
                               finish_reason: str | None, retry_count: int) -> dict[str, str]:
        """The reserved tool's result: guidance for the model's next try. Called by the
        framework only."""
        return {"reflection_guidance": "\n".join([
            "",
            f"The model's last answer failed ({error_type or finish_reason or 'an error'}) and was not used.",
            "",
            f"This is retry {retry_count} of at most {self.max_retries}.",
            "Work out what went wrong in that answer; do not give the same answer or make the same call again.",
            "Then answer again, corrected, or take another way to the goal.",
            "",
        ])}

    # -- google-adk's hooks -------------------------------------------------------------

    async def after_model_callback(self, *, callback_context: Any, llm_response: LlmResponse) -> LlmResponse | None:
        """Steps 1-3 of the module."""
        if any(call.name == _RESERVED_TOOL for call in llm_response.get_function_calls()):
            retry = await self._handle_model_retry(
                callback_context, RESERVED_TOOL_CALL_ERROR_TYPE,
                f"Model attempted to call reserved tool {_RESERVED_TOOL} directly. This tool is reserved for "
                "framework use only. Do not call it.", FinishReason.OTHER)
            if retry is not None:
                return retry
            return LlmResponse(error_code=RESERVED_TOOL_CALL_ERROR_TYPE,
                               error_message="Model attempted to call reserved tool and retry limit was exceeded.")
        code = _error_code(llm_response)
        if code and llm_response.finish_reason in self.on_model_errors:
            retry = await self._handle_model_retry(callback_context, code, llm_response.error_message,
                                                   _finish_reason(llm_response.finish_reason))
            if retry is not None:
                return retry
            if llm_response.error_code:
                return llm_response
            # the answer stands, as google-adk's model layer makes it: an error response
            return llm_response.model_copy(update={"error_code": str(code), "content": None})
        await self._tracker.reset(self._scope_key(callback_context), self._model_name(callback_context))
        return None

    async def before_tool_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any) -> Any:
        """The reserved tool's call, answered with its result (see the module); None for
        any other tool."""
        if getattr(tool, "name", None) != _RESERVED_TOOL:
            return None
        return self.adk_handle_model_error(**tool_args)

    async def after_run_callback(self, *, invocation_context: Any) -> None:
        """The invocation ended: its per-invocation counts are dropped."""
        self._forget(invocation_context)

    async def on_run_error_callback(self, *, invocation_context: Any, error: Exception) -> None:
        self._forget(invocation_context)

    # -- steps -----------------------------------------------------------------------------

    async def _handle_model_retry(self, callback_context: Any, error_type: Any, error_details: Any,
                                  finish_reason: Any) -> LlmResponse | None:
        """One more failure: the reflection call within the limit; beyond it None, or the
        RuntimeError with ``throw_exception_if_retry_exceeded``."""
        count = await self._tracker.increment(self._scope_key(callback_context), self._model_name(callback_context))
        if count <= self.max_retries:
            call = FunctionCall(id=f"{_RESERVED_TOOL}_{uuid.uuid4()}", name=_RESERVED_TOOL, args={
                "response_type": REFLECT_AND_RETRY_RESPONSE_TYPE, "error_type": error_type,
                "error_details": error_details, "finish_reason": finish_reason, "retry_count": count})
            return LlmResponse(content=Content(role="model", parts=[
                Part(function_call=call, thought_signature=_SKIP_THOUGHT_SIGNATURE)]))
        if self.throw_exception_if_retry_exceeded:
            raise RuntimeError(f"The model has failed consecutively {self.max_retries} times and the retry limit "
                               "has been exceeded.")
        return None

    def _scope_key(self, callback_context: Any) -> str:
        return resolve_scope_key(self.scope, callback_context.invocation_id)

    @staticmethod
    def _model_name(callback_context: Any) -> str:
        """The model the agent calls, by name; a ``ValueError`` when it has none."""
        agent = getattr(callback_context._invocation_context, "agent", None)
        canonical = getattr(agent, "canonical_model", None)
        for model in (getattr(canonical, "model", None), getattr(agent, "model", None)):
            if isinstance(model, str) and model:
                return model
            name = getattr(model, "model", None) or getattr(model, "name", None)
            if isinstance(name, str) and name:
                return name
        raise ValueError("Agent model not found.")

    def _forget(self, invocation_context: Any) -> None:
        if self.scope is not TrackingScope.INVOCATION:
            return
        with self._tracker._lock:
            self._tracker._scoped_failure_counters.pop(str(getattr(invocation_context, "invocation_id", "")), None)
