"""google-adk's ``example_util``: few-shot examples as the text of a system
instruction. The text is :func:`adk_actors.examples.examples_text`'s, the one the
agent's own ``examples`` are shown with."""

from __future__ import annotations

from ._example import BaseExampleProvider, Example, examples_for, examples_text

__all__ = ["build_example_si", "convert_examples_to_text"]


def convert_examples_to_text(examples: list[Example], model: str | None) -> str:
    """``examples`` as the model is shown them, for ``model`` (a name; None counts as
    Gemini): see :func:`adk_actors.examples.examples_text`."""
    return examples_text(examples, model or "")


def build_example_si(examples: list[Example] | BaseExampleProvider, query: str, model: str | None) -> str:
    """The instruction text for ``examples``: a list is shown as it is; a provider is
    first asked for its examples for ``query``. Anything else raises ``ValueError``."""
    if not isinstance(examples, (list, BaseExampleProvider)):
        raise ValueError("Invalid example configuration")
    return convert_examples_to_text(examples_for(examples, query), model)
