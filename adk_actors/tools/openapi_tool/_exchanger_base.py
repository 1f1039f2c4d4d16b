"""The base of google-adk's OpenAPI credential exchangers and their error (kept apart
from ``_exchangers``, so that an exchanger in a module of its own can build on them
and ``_exchangers`` can register it)."""

from __future__ import annotations

import abc

from fastapi.openapi.models import SecurityBase

from ._auth import AuthCredential

__all__ = ["AuthCredentialMissingError", "BaseAuthCredentialExchanger"]


class AuthCredentialMissingError(Exception):
    """A credential the exchange needs is missing (or could not be made)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BaseAuthCredentialExchanger(abc.ABC):
    """Turns a (scheme, credential) pair into the credential a request carries."""

    @abc.abstractmethod
    def exchange_credential(self, auth_scheme: SecurityBase,
                            auth_credential: AuthCredential | None = None) -> AuthCredential | None:
        """The usable credential, or None when none can be made yet."""
