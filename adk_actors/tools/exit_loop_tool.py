"""google-adk's import path of ``exit_loop``."""

from ._builtins import exit_loop

__all__ = ["exit_loop"]
