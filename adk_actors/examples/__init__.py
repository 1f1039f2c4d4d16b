"""Few-shot examples for an agent's instruction (google-adk's ``google.adk.examples``).

An :class:`Example` is one user query and the model's answer to it (texts, tool
calls, tool results). An agent's ``examples`` (a list, or a
:class:`BaseExampleProvider` that picks them per query) are rendered by
:func:`examples_text` at the end of its system instruction, in google-adk's
words, whenever the turn's user message has text. google-adk's ``ExampleTool``
(``adk_actors.tools.example_tool``) sets them.
"""

from ._example import BaseExampleProvider, Example, examples_for, examples_text

__all__ = ["BaseExampleProvider", "Example", "examples_for", "examples_text"]
