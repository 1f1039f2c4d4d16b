"""google-adk's ``google.adk.errors`` path: the errors its API raises that are here."""

from .._exceptions import InvocationNotFoundError

__all__ = ["InvocationNotFoundError"]
