"""google-adk's import path of ``OAuth2CredentialExchanger``."""

from ..._exchangers import OAuth2CredentialExchanger

__all__ = ["OAuth2CredentialExchanger"]
