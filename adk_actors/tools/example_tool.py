"""google-adk's ``ExampleTool``: few-shot examples for the agent's instruction.

Not a call the model makes: an agent given one in ``tools`` has it taken out of its
tools and its ``examples`` set (see :mod:`adk_actors.examples`).
"""

from __future__ import annotations

from ..examples import BaseExampleProvider, Example
from ._classes import BaseTool
from ._example_tool_config import ExampleToolConfig

__all__ = ["ExampleTool", "ExampleToolConfig"]


class ExampleTool(BaseTool):
    """Few-shot examples (a list of :class:`Example`, or a provider that picks them
    per query) for the agent whose ``tools`` it is in. Lists are validated here, so a
    bad example fails where it is written."""

    def __init__(self, examples: list[Example] | BaseExampleProvider) -> None:
        super().__init__(name="example_tool", description="example tool")
        self.few_shot_examples: list[Example] | BaseExampleProvider = (
            examples if isinstance(examples, BaseExampleProvider)
            else [e if isinstance(e, Example) else Example.model_validate(e) for e in examples])
