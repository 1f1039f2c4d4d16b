"""A sequential pipeline: writer -> reviewer -> summarizer, passing state by ``output_key``.

Each step reads what the previous one wrote through ``{placeholders}`` in its
instruction; the scripted models answer from the instruction they were given, so
the example shows the state really flowing (offline, no API key needed).
"""

from __future__ import annotations

import re

from adk_actors import LlmAgent, LlmRequest, SequentialAgent
from adk_actors.models import ScriptedModel


def _writer(request: LlmRequest) -> str:
    topic = request.contents[-1].text or "nothing"
    return f"def {re.sub(r'[^a-z]+', '_', topic.lower()).strip('_') or 'f'}(x): return x"


def _reviewer(request: LlmRequest) -> str:
    code = request.system_instruction.split("Review this code:", 1)[-1].split("\n\n")[0].strip()
    return f"Reviewed `{code}`: fine, but name the argument better."


def _summarizer(request: LlmRequest) -> str:
    review = request.system_instruction.split("Summarize:", 1)[-1].split("\n\n")[0].strip()
    return f"Summary: {review.split(':', 1)[0]} -- 1 suggestion."


root_agent = SequentialAgent(name="pipeline", description="write, review, summarize", sub_agents=[
    LlmAgent(name="writer", model=ScriptedModel(fallback=_writer), instruction="Write code for the request.",
             output_key="code"),
    LlmAgent(name="reviewer", model=ScriptedModel(fallback=_reviewer), instruction="Review this code: {code}",
             output_key="review"),
    LlmAgent(name="summarizer", model=ScriptedModel(fallback=_summarizer), instruction="Summarize: {review}",
             output_key="summary"),
])
