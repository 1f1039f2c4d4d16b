"""google-adk's ``google.adk.auth.refresher``: what renews an expired credential,
chosen by credential type from a
:class:`~.credential_refresher_registry.CredentialRefresherRegistry`."""

from .base_credential_refresher import BaseCredentialRefresher

__all__ = ["BaseCredentialRefresher"]
