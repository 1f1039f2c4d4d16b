"""google-adk's ``BaseAuthProvider``: a custom source of credentials for the auth
schemes it supports (typically ``CustomAuthScheme`` subclasses), registered once with
``CredentialManager.register_auth_provider(provider)``."""

from __future__ import annotations

import abc
from typing import Any

from ..tools.openapi_tool._auth import AuthCredential
from ..tools.openapi_tool._auth_config import AuthConfig
from .auth_schemes import AuthScheme

__all__ = ["BaseAuthProvider"]


class BaseAuthProvider(abc.ABC):
    """A custom credential source (see the module)."""

    @property
    def supported_auth_schemes(self) -> tuple[type[AuthScheme], ...]:
        """The scheme classes this provider serves; ``register_auth_provider`` registers
        it for each. Empty by default (then registering it does nothing)."""
        return ()

    @abc.abstractmethod
    async def get_auth_credential(self, auth_config: AuthConfig, context: Any) -> AuthCredential | None:
        """The credential for ``auth_config`` in ``context`` (the tool's context), or
        None when there is none (``CredentialManager`` then raises ``ValueError``).
        An OAuth2 credential with an ``auth_uri`` and no access token means the user
        must consent first: ``CredentialManager`` keeps it as the config's exchanged
        credential and returns None."""
