"""The model of a flow step: which model answers, and one call of it.

In order: :func:`model_of` resolves the agent's model (a name through the
invocation's resolver; a google-adk ``BaseLlm`` through its HTTP connector) and puts
it behind its circuit breaker (the host's shared breakers guard network models only;
an embedded run keeps its own per model name), then its fallbacks after it.
:func:`call_model` asks it: partial responses first (when the RunConfig streams),
then exactly one final response. On a model error the error hooks decide, agent's
first, then plugins': ``Retry`` asks again (up to its attempts), ``Fallback`` answers
with its value, ``Reraise`` (or no decision) raises :class:`ModelStepError`; a
cancelled run is never retried. The model step then commits an error event and ends
the run with :class:`ModelRaised`.

The helpers that shape the model's answer into events live here too: a streamed
piece (:func:`partial_event`), ids given to calls that have none
(:func:`with_call_ids`), and grounding propagated from an AgentTool
(:func:`propagated_grounding`).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

from .._tree import inherited_model
from .._types import Content, Event, GroundingMetadata, LlmResponse, StreamingMode
from ..models._base import ModelError
from ..models._breaker import BreakerModel, CircuitBreaker, FallbackModel
from ..models._http import HttpModel
from ..models._llm_registry import BaseLlm
from ..tools._agent_tool import GROUNDING_KEY
from ._callbacks import Fallback, Reraise, Retry, call_chain, check_decision
from ._context import CallbackContext, InvocationContext, RunCancelled

__all__ = [
    "ModelRaised",
    "ModelStepError",
    "call_model",
    "error_type",
    "model_of",
    "one_model",
    "partial_event",
    "propagated_grounding",
    "with_call_ids",
]


class ModelStepError(Exception):
    """A model call failed and its error hooks let it fail; ``error`` is the model's."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class ModelRaised(Exception):
    """A model call raised and no ``on_model_error`` hook replaced its answer: the step
    committed its error event (``errorCode`` the error's type), then the run ends with
    this, as google-adk's run raises (its SSE stream then ends with an error line, its
    ``/run`` with a 500). ``error_type`` and ``message`` are the model error's."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(f"{error_type}: {message}")
        self.error_type = error_type
        self.message = message


def error_type(error: BaseException) -> str:
    """The error's own ``error_type`` (a ``ModelError``'s), else its class name."""
    return getattr(error, "error_type", None) or type(error).__name__


def one_model(model: Any, agent: Any, ctx: InvocationContext) -> Any:
    """``model`` (an object, or a name the invocation's resolver turns into one) ready
    to be asked: a google-adk model class through its connector, behind a breaker.
    Raises ``ModelError`` (``no_model``) for a name with no resolver."""
    if not hasattr(model, "generate"):
        if ctx.resolve_model is None:
            raise ModelError(f"agent {agent.name!r} has no model object for {model!r} and no model resolver is set",
                             error_type="no_model")
        model = ctx.resolve_model(model)
    if isinstance(model, BaseLlm):  # google-adk's model classes: Gemini / Claude give their HTTP connector
        model = model.connector()
    if ctx.breaker_client is not None:
        # The host's shared breakers guard providers reached over the network; an
        # offline model (ScriptedModel) has no outage to guard against.
        return BreakerModel(model, ctx.breaker_client) if isinstance(model, HttpModel) else model
    if ctx.breakers is not None:
        name = getattr(model, "name", str(model))
        breaker = ctx.breakers.setdefault(name, CircuitBreaker(name))
        model = BreakerModel(model, breaker)
    return model


def model_of(agent: Any, ctx: InvocationContext) -> Any:
    """The agent's model (resolved by name, behind its breaker), with its fallbacks."""
    primary = one_model(inherited_model(agent, ctx.root_agent), agent, ctx)
    fallbacks = getattr(agent, "fallback_models", None) or []
    if not fallbacks:
        return primary
    return FallbackModel([primary, *(one_model(m, agent, ctx) for m in fallbacks)])


async def _error_decision(agent: Any, ctx: InvocationContext, cb: CallbackContext, request: Any,
                          error: Exception) -> Any:
    """The decision on a model error: the agent's hooks', else the plugins', else
    ``Reraise``; a hook's answer that is no decision raises ``CallbackError``."""
    decision: Any = await call_chain(agent.on_model_error_callback, "on_model_error", cb, request, error)
    if decision is None and ctx.plugins is not None:
        decision = await ctx.plugins.first("on_model_error", cb, request, error)
    return Reraise() if decision is None else check_decision(decision, "on_model_error")


async def call_model(agent: Any, ctx: InvocationContext, request: Any, cb: CallbackContext) -> AsyncIterator[LlmResponse]:
    """Partial responses, then exactly one final response; error hooks decide on failure."""
    attempts = 0
    stream = ctx.run_config.streaming_mode is StreamingMode.SSE
    while True:
        attempts += 1
        ctx.check_cancelled()
        try:
            model = model_of(agent, ctx)
            final: LlmResponse | None = None
            async for response in model.generate(request, stream=stream):
                if response.partial:
                    yield response
                else:
                    final = response
            if final is None:
                raise ModelError("the model stream ended without a final response", error_type="malformed_response")
            yield final
            return
        except (RunCancelled, asyncio.CancelledError):
            raise
        except Exception as error:
            decision = await _error_decision(agent, ctx, cb, request, error)
            if isinstance(decision, Retry) and attempts < decision.max_attempts:
                continue
            if isinstance(decision, Fallback):
                yield decision.value
                return
            raise ModelStepError(error) from error


def with_call_ids(content: Content | None) -> Content | None:
    """``content`` with an id given to each function call that has none (the rest of
    its part, e.g. a thought signature, kept)."""
    if content is None or all(c.id for c in content.function_calls):
        return content
    parts = tuple(
        p.model_copy(update={"function_call": p.function_call.model_copy(update={"id": f"adk-{uuid.uuid4()}"})})
        if p.function_call is not None and not p.function_call.id else p
        for p in content.parts
    )
    return Content(role=content.role or "model", parts=parts)


def partial_event(ctx: InvocationContext, event_id: str, response: LlmResponse) -> Event:
    """A streamed piece of the model's answer, as google-adk relays it: its content (text
    or a function call, whose call is made only from the final event), and what the
    chunk said of itself (finish reason, usage, model version)."""
    calls = response.content is not None and bool(response.content.function_calls)
    return ctx.event(id=event_id, content=with_call_ids(response.content), partial=True,
                     finish_reason=response.finish_reason, usage_metadata=response.usage_metadata,
                     model_version=response.model_version, long_running_tool_ids=() if calls else None,
                     grounding_metadata=response.grounding_metadata)


def propagated_grounding(response: LlmResponse, tools: dict[str, Any], ctx: InvocationContext) -> LlmResponse:
    """``response`` with the grounding an AgentTool with ``propagate_grounding_metadata``
    (``GoogleSearchAgentTool``) left in state this invocation, as google-adk gives it to
    the caller's answers; ``response`` as it is without either."""
    found = ctx.session.state.get(GROUNDING_KEY)
    if not found or not any(getattr(t, "propagate_grounding_metadata", False) for t in tools.values()):
        return response
    return response.model_copy(update={"grounding_metadata": GroundingMetadata.model_validate(found)})

