"""google-adk-shaped custom agents a host imports by path
(tests/test_google_adk_custom_agents.py): ``BaseAgent`` subclasses overriding
``_run_async_impl``, their sub-agents on scripted models."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from pydantic import ConfigDict

from adk_actors.agents import BaseAgent, LlmAgent
from adk_actors.agents.invocation_context import InvocationContext
from adk_actors.events import Event, EventActions
from adk_actors.models import ScriptedModel
from adk_actors.types import Content, Part


class ReviewFlow(BaseAgent):
    """Counts its turns in state with its own event, has the writer write and the
    critic judge, and the reviser rewrite only when the critic says so."""

    writer: LlmAgent
    critic: LlmAgent
    reviser: LlmAgent

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def __init__(self, name: str, writer: LlmAgent, critic: LlmAgent, reviser: LlmAgent, **kwargs: Any) -> None:
        super().__init__(name=name, writer=writer, critic=critic, reviser=reviser,
                         sub_agents=[writer, critic, reviser], **kwargs)

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        turns = int(ctx.session.state.get("turns", 0)) + 1
        yield Event(author=self.name, invocation_id=ctx.invocation_id,
                    content=Content(role="model", parts=[Part(text=f"Turn {turns}.")]),
                    actions=EventActions(state_delta={"turns": turns}))
        async for event in self.writer.run_async(ctx):
            yield event
        async for event in self.critic.run_async(ctx):
            yield event
        if str(ctx.session.state.get("verdict", "")).startswith("rewrite"):
            async for event in self.reviser.run_async(ctx):
                yield event


def _critic(request: Any) -> str:
    """A rewrite when the user's own latest words ask for one."""
    said = [c.text for c in request.contents if c.role == "user" and c.text and not c.text.startswith("For context")]
    return "rewrite: longer" if said and "rewrite" in said[-1] else "ok"


review_flow = ReviewFlow(
    name="review_flow",
    writer=LlmAgent(name="writer", model=ScriptedModel(fallback="A short draft."), output_key="draft"),
    critic=LlmAgent(name="critic", model=ScriptedModel(fallback=_critic), output_key="verdict"),
    reviser=LlmAgent(name="reviser", model=ScriptedModel(fallback="A longer, better draft."), output_key="draft"),
)

APPS = {"review": "custom_agent_defs:review_flow"}
