"""google-adk's ``CredentialRefresherRegistry``: refreshers by credential type."""

from __future__ import annotations

from ...tools.openapi_tool._auth import AuthCredentialTypes
from .base_credential_refresher import BaseCredentialRefresher

__all__ = ["CredentialRefresherRegistry"]


class CredentialRefresherRegistry:
    """One refresher per credential type."""

    def __init__(self) -> None:
        self._refreshers: dict[AuthCredentialTypes, BaseCredentialRefresher] = {}

    def register(self, credential_type: AuthCredentialTypes, refresher_instance: BaseCredentialRefresher) -> None:
        """``refresher_instance`` refreshes ``credential_type`` credentials from now on
        (replacing the one registered before)."""
        self._refreshers[credential_type] = refresher_instance

    def get_refresher(self, credential_type: AuthCredentialTypes) -> BaseCredentialRefresher | None:
        """The refresher registered for ``credential_type``, or None."""
        return self._refreshers.get(credential_type)
