"""google-adk's ``google.adk.auth.exchanger``: what turns a credential into a usable
one (an authorization code or a client into an access token), chosen by credential
type from a :class:`~.credential_exchanger_registry.CredentialExchangerRegistry`."""

from .base_credential_exchanger import BaseCredentialExchanger

__all__ = ["BaseCredentialExchanger"]
