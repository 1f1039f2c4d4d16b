"""google-adk's ``CredentialExchangerRegistry``: exchangers by credential type (an
async :class:`BaseCredentialExchanger`, or a synchronous OpenAPI one such as
``ServiceAccountCredentialExchanger``, which google-adk registers here too)."""

from __future__ import annotations

from ...tools.openapi_tool._auth import AuthCredentialTypes
from ...tools.openapi_tool._exchanger_base import BaseAuthCredentialExchanger
from .base_credential_exchanger import BaseCredentialExchanger

__all__ = ["CredentialExchangerRegistry"]


class CredentialExchangerRegistry:
    """One exchanger per credential type."""

    def __init__(self) -> None:
        self._exchangers: dict[AuthCredentialTypes, BaseCredentialExchanger | BaseAuthCredentialExchanger] = {}

    def register(self, credential_type: AuthCredentialTypes,
                 exchanger_instance: BaseCredentialExchanger | BaseAuthCredentialExchanger) -> None:
        """``exchanger_instance`` exchanges ``credential_type`` credentials from now on
        (replacing the one registered before)."""
        self._exchangers[credential_type] = exchanger_instance

    def get_exchanger(self, credential_type: AuthCredentialTypes,
                      ) -> BaseCredentialExchanger | BaseAuthCredentialExchanger | None:
        """The exchanger registered for ``credential_type``, or None."""
        return self._exchangers.get(credential_type)
