"""google-adk's import path of ``ApigeeLlm``."""

from ._apigee import ApigeeLlm

__all__ = ["ApigeeLlm"]
