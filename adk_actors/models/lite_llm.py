"""google-adk's import path of ``LiteLlm`` (it needs the ``litellm`` extra)."""

from ._providers import LiteLlm

__all__ = ["LiteLlm"]
