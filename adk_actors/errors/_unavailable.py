"""The error of a google-adk service that needs a Google Cloud backend."""

from __future__ import annotations

from .._exceptions import AdkError

__all__ = ["ServiceUnavailableError", "unavailable"]


class ServiceUnavailableError(AdkError, NotImplementedError):
    """A google-adk service that needs a Google Cloud backend this project has no
    client for; the message names the backend and what to use here instead."""


def unavailable(service: str, backend: str, instead: str) -> str:
    """The message of ``service``'s error: it needs ``backend``; ``instead`` is what to use here."""
    return f"{service} needs {backend}, which adk_actors has no client for: use {instead}"
