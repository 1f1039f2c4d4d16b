"""A parallel fan-out: three researchers work concurrently on isolated branches, then a
sequential step merges their findings (written to state by ``output_key``)."""

from __future__ import annotations

import time
from typing import Any

from adk_actors import LlmAgent, LlmRequest, ParallelAgent, SequentialAgent
from adk_actors.models import ScriptedModel, call


def research(topic: str, angle: str) -> dict[str, Any]:
    """Look a topic up from one angle (takes a moment).

    Args:
        topic: What to research.
        angle: The point of view.
    """
    time.sleep(0.2)
    return {"finding": f"{angle} view of {topic}: looks promising"}


def _researcher(angle: str) -> Any:
    def answer(request: LlmRequest) -> Any:
        last = request.contents[-1]
        if last.function_responses:
            return last.function_responses[0].response["finding"]
        return call("research", topic=last.text or "it", angle=angle)

    return answer


def _merge(request: LlmRequest) -> str:
    text = request.system_instruction
    found = [line for line in text.splitlines() if "view of" in line]
    return f"Merged {len(found)} findings."


researchers = ParallelAgent(name="researchers", sub_agents=[
    LlmAgent(name=f"{angle}_researcher", model=ScriptedModel(fallback=_researcher(angle)), tools=[research],
             output_key=f"{angle}_finding")
    for angle in ("market", "technical", "legal")
])

root_agent = SequentialAgent(name="fanout", sub_agents=[
    researchers,
    LlmAgent(name="merger", model=ScriptedModel(fallback=_merge),
             instruction="Findings:\n{market_finding}\n{technical_finding}\n{legal_finding}"),
])
