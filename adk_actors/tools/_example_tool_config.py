"""google-adk's ``ExampleToolConfig`` (``google.adk.tools.example_tool``): an agent
file's ``ExampleTool`` args. ``examples`` is a list of :class:`Example` (each
validated: ``input`` a Content, ``output`` a list of them) or a string, the
fully-qualified name of a ``BaseExampleProvider`` in code; an unknown key, or
anything else there, is pydantic's ValidationError."""

from __future__ import annotations

from ..agents._tool_configs import BaseToolConfig
from ..examples import Example

__all__ = ["ExampleToolConfig"]


class ExampleToolConfig(BaseToolConfig):
    """The args of an agent file's ``ExampleTool`` (see the module)."""

    #: the examples, or the fully-qualified name of a BaseExampleProvider in code
    examples: list[Example] | str
