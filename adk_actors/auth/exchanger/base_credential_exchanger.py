"""google-adk's ``BaseCredentialExchanger``, its result and its error."""

from __future__ import annotations

import abc
from typing import NamedTuple

from ...tools.openapi_tool._auth import AuthCredential
from ..auth_schemes import AuthScheme

__all__ = ["BaseCredentialExchanger", "CredentialExchangeError", "ExchangeResult"]


class CredentialExchangeError(Exception):
    """The exchange cannot be made (e.g. the OAuth2 exchanger was given no scheme)."""


class ExchangeResult(NamedTuple):
    """The credential after the exchange, and whether it was exchanged (then
    ``CredentialManager`` keeps it in the credential service)."""

    credential: AuthCredential
    was_exchanged: bool


class BaseCredentialExchanger(abc.ABC):
    """Turns a credential into a usable one; ``CredentialManager`` calls the one
    registered for the credential's type (``register_credential_exchanger``)."""

    @abc.abstractmethod
    async def exchange(self, auth_credential: AuthCredential,
                       auth_scheme: AuthScheme | None = None) -> ExchangeResult:
        """The exchanged credential and True, or the credential unchanged and False
        when no exchange was needed or possible. Raises :class:`CredentialExchangeError`
        when the exchange cannot be attempted."""
