"""google-adk's ``AuthProviderRegistry``: which ``BaseAuthProvider`` serves which auth
scheme class (``CredentialManager`` keeps one for the process)."""

from __future__ import annotations

from .auth_schemes import AuthScheme
from .base_auth_provider import BaseAuthProvider

__all__ = ["AuthProviderRegistry"]


class AuthProviderRegistry:
    """Providers by the exact scheme class they serve."""

    def __init__(self) -> None:
        self._providers: dict[type[AuthScheme], BaseAuthProvider] = {}

    def register(self, auth_scheme_type: type[AuthScheme], provider_instance: BaseAuthProvider) -> None:
        """``provider_instance`` serves ``auth_scheme_type`` from now on (one registered
        before for that class is replaced)."""
        self._providers[auth_scheme_type] = provider_instance

    def get_provider(self, auth_scheme: AuthScheme | type[AuthScheme]) -> BaseAuthProvider | None:
        """The provider registered for ``auth_scheme``'s exact class (or for the class
        itself when a class is given); None when none is (a subclass does not inherit
        its parent's provider)."""
        scheme_type = auth_scheme if isinstance(auth_scheme, type) else type(auth_scheme)
        return self._providers.get(scheme_type)
