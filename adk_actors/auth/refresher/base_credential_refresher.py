"""google-adk's ``BaseCredentialRefresher`` and its error."""

from __future__ import annotations

import abc

from ...tools.openapi_tool._auth import AuthCredential
from ..auth_schemes import AuthScheme

__all__ = ["BaseCredentialRefresher", "CredentialRefresherError"]


class CredentialRefresherError(Exception):
    """The refresh cannot be made."""


class BaseCredentialRefresher(abc.ABC):
    """Renews a credential; ``CredentialManager`` asks the one registered for the
    credential's type (when the credential was not just exchanged) whether a refresh is
    needed, and if so calls :meth:`refresh` and keeps its result in the credential
    service."""

    @abc.abstractmethod
    async def is_refresh_needed(self, auth_credential: AuthCredential,
                                auth_scheme: AuthScheme | None = None) -> bool:
        """Whether ``auth_credential`` must be renewed before use."""

    @abc.abstractmethod
    async def refresh(self, auth_credential: AuthCredential,
                      auth_scheme: AuthScheme | None = None) -> AuthCredential:
        """The renewed credential. Raises :class:`CredentialRefresherError` when the
        refresh cannot be attempted."""
