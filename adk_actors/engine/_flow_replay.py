"""The replay step of a flow: in a resumed run, a step taken from the committed events.

:class:`ReplayStep`, in order: the next committed step of this agent on this branch
is taken (``Replay.step``; none in a live run, or when the agent's committed events
ran out: the outcome is ``LIVE``); its model calls count toward ``max_llm_calls``;
its events are given again (the caller neither commits nor yields them twice); then
its :class:`ReplayVerdict` decides:

* ``END``: the flow ends (outcome ``END``);
* ``NEXT``: the loop goes on (``NEXT``);
* ``LIVE``: nothing of the step's model call is on record: the model step runs now;
* ``ANSWER``: ``set_model_response`` accepted an answer whose event is not on
  record: that event is made, and the flow ends;
* ``PENDING``: the model event's calls have no committed response: those whose
  approval never came, or whose tools are idempotent, run again, the others are
  answered by the decisions given (``_resume.decided_results``; none given raises
  ``NeedsDecision``); their events follow as in a live tool step (``AnswerStep``),
  whose outcome is this step's.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from .._types import Event
from ._context import InvocationContext
from ._flow_request import resolve_tools
from ._flow_step import StepOutcome
from ._flow_tool_step import AnswerStep, structured_answer
from ._flow_tools import never_approved, run_tool, tool_context
from ._resume import ReplayedStep, ReplayVerdict, decided_results

__all__ = ["ReplayStep"]


class ReplayStep:
    """One committed step of ``agent``'s flow given again (see the module's docstring);
    ``outcome`` is read once its events are relayed."""

    def __init__(self, agent: Any, ctx: InvocationContext) -> None:
        self.agent, self.ctx = agent, ctx
        self.outcome = StepOutcome.LIVE

    async def events(self) -> AsyncGenerator[Event, None]:
        ctx = self.ctx
        replayed = ctx.replay.step(self.agent.name, ctx.branch) if ctx.replay is not None else None
        if replayed is None:
            return
        ctx.counters["llm_calls"] += replayed.model_calls
        for event in replayed.events:
            yield event
        match replayed.verdict:
            case ReplayVerdict.END:
                self.outcome = StepOutcome.END
            case ReplayVerdict.NEXT:
                self.outcome = StepOutcome.NEXT
            case ReplayVerdict.LIVE:
                self.outcome = StepOutcome.LIVE
            case ReplayVerdict.ANSWER:  # set_model_response's answer, its event not committed
                answer = structured_answer(ctx, replayed.events[-1])
                if answer is not None:
                    yield answer
                self.outcome = StepOutcome.END
            case ReplayVerdict.PENDING:
                async with aclosing(self._pending(replayed)) as answered:
                    async for event in answered:
                        yield event

    async def _pending(self, replayed: ReplayedStep) -> AsyncGenerator[Event, None]:
        """The pending calls run again or decided, and their events."""
        agent, ctx = self.agent, self.ctx
        tools, _, _ = await resolve_tools(agent, ctx)
        unapproved = await never_approved(agent, ctx, replayed.calls, tools)
        results = await decided_results(run_tool, agent, ctx, replayed.calls, tools, tool_context, unapproved)
        answer = AnswerStep(ctx, replayed.calls, results)
        async with aclosing(answer.events()) as events:
            async for event in events:
                yield event
        self.outcome = answer.outcome
