"""google-adk's import path of ``Example``."""

from ._example import Example

__all__ = ["Example"]
