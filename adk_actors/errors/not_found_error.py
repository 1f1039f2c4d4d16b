"""google-adk's ``google.adk.errors.not_found_error`` path: our
:class:`~adk_actors._exceptions.NotFoundError` (a ``LookupError`` too)."""

from .._exceptions import NotFoundError

__all__ = ["NotFoundError"]
