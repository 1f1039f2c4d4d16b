"""The ``pipeline`` example written with the fluent builder (adk_actors.fluent).

Same three steps, same scripted models, same state: writer -> reviewer ->
summarizer, each answer written to a state key the next one reads. ``>>`` makes the
sequence; ``build()`` checks that every ``{key}`` a step reads is written by a step
before it, then gives the plain SequentialAgent the host runs.
"""

from __future__ import annotations

from adk_actors.fluent import Agent
from adk_actors.models import ScriptedModel
from examples.pipeline.agent import _reviewer, _summarizer, _writer

root_agent = (
    Agent("writer", ScriptedModel(fallback=_writer)).instruct("Write code for the request.").writes("code")
    >> Agent("reviewer", ScriptedModel(fallback=_reviewer)).instruct("Review this code: {code}").writes("review")
    >> Agent("summarizer", ScriptedModel(fallback=_summarizer)).instruct("Summarize: {review}").writes("summary")
).build()
