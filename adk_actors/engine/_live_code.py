"""An agent's ``code_executor`` in a live conversation, as google-adk 2.13's live flow
treats it (its code-execution request and response processors, run on each response
of the live connection).

* :func:`code_setup`: before the conversation opens, a ``BuiltInCodeExecutor`` adds
  Gemini's code-execution tool to the setup; with any executor, the history's code
  parts are sent as text, as in a turn (``engine._code_execution.code_request``).
* :func:`step_event`: with a ``BuiltInCodeExecutor``, each committed answer of the
  model with content (its text as a whole, its tool calls, the code it ran and its
  result) is preceded by the executor's step event: an agent's event with no content
  (``artifact_delta`` naming the images of the answer saved as artifacts, by
  ``engine._model_code``). None otherwise.
* :func:`ran_code`: with an executor the conversation's process runs
  (``UnsafeLocalCodeExecutor`` and the like), a text answer, when it is committed
  whole, is searched for code as in a turn (``engine._code_execution.code_step``); when
  it holds some, the code runs (the receiving loop waits for it) and its events (the
  answer cut after its code, then the result) stand in for the answer's. The model is
  not told the result: it hears only function responses (google-adk's live flow). None
  when the answer stands.
* :func:`has_code`: whether the model's content carries code or its result (parts the
  model sends when it ran code itself): they are committed as they come, not streamed
  (:func:`code_events`). (google-adk's own Gemini connection leaves code that comes in
  the same message as text a streamed piece, never stored; ours commits it too.)
* :func:`answer_events`: the events that commit a whole text answer, by the above.
"""

from __future__ import annotations

from typing import Any

from .._types import Content, Event, LlmRequest, LlmResponse
from ._code_execution import code_request, code_step
from ._context import InvocationContext
from ._model_code import model_code_step

__all__ = ["answer_events", "code_events", "code_setup", "has_code", "history_as_text", "ran_code", "runs_in_model",
           "step_event"]


def runs_in_model(agent: Any) -> bool:
    """The agent's executor is the model's own (``BuiltInCodeExecutor``)."""
    executor = getattr(agent, "code_executor", None)
    return executor is not None and bool(getattr(executor, "runs_in_model", False))


def code_setup(agent: Any, request: LlmRequest) -> None:
    """The built-in executor's hook on the setup request (its ValueError for a model
    that is not Gemini is raised), in place."""
    if runs_in_model(agent):
        agent.code_executor.process_llm_request(request)


def history_as_text(agent: Any, request: LlmRequest) -> None:
    """The history's code parts as text (``code_request``), in place."""
    code_request(agent, request)


def has_code(content: Content | None) -> bool:
    return content is not None and any(
        p.executable_code is not None or p.code_execution_result is not None for p in content.parts)


async def step_event(agent: Any, ctx: InvocationContext, content: Content) -> tuple[Event | None, Content]:
    """The built-in executor's step event before the committed ``content`` (None
    without that executor), and ``content`` with its images saved."""
    if not runs_in_model(agent):
        return None, content
    step, response = await model_code_step(ctx, LlmResponse(content=content))
    return step, response.content if response.content is not None else content


async def ran_code(agent: Any, ctx: InvocationContext, answer: Content) -> list[Event] | None:
    """The events of the code in a committed text answer, run (see the module)."""
    executor = getattr(agent, "code_executor", None)
    if executor is None or runs_in_model(agent):
        return None
    events = [event async for event in code_step(agent, ctx, LlmResponse(content=answer), {})]
    return events or None


async def answer_events(agent: Any, ctx: InvocationContext, answer: Event) -> list[Event]:
    """The events that commit a whole text ``answer``: its code's events
    (:func:`ran_code`) in its place; else the step event (:func:`step_event`), if any,
    then the answer."""
    if answer.content is None:
        return [answer]
    ran = await ran_code(agent, ctx, answer.content)
    if ran is not None:
        return ran
    step, _ = await step_event(agent, ctx, answer.content)
    return [answer] if step is None else [step, answer]


async def code_events(agent: Any, ctx: InvocationContext, code: Content, model_version: str | None) -> list[Event]:
    """The events that commit the code the model ran, or its result (``code``): the
    step event (:func:`step_event`), if any, then an event of the agent with it."""
    step, code = await step_event(agent, ctx, code)
    event = ctx.event(content=code, model_version=model_version)
    return [event] if step is None else [step, event]
