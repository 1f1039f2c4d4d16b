"""google-adk's import path of ``load_artifacts``."""

from ._builtins import load_artifacts

__all__ = ["load_artifacts"]
