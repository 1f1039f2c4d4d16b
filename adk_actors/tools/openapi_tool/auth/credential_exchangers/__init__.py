"""google-adk's ``openapi_tool.auth.credential_exchangers`` path."""

from ..._exchangers import (
    AuthCredentialMissingError,
    AutoAuthCredentialExchanger,
    BaseAuthCredentialExchanger,
    OAuth2CredentialExchanger,
    ServiceAccountCredentialExchanger,
)

__all__ = ["AuthCredentialMissingError", "AutoAuthCredentialExchanger", "BaseAuthCredentialExchanger",
           "OAuth2CredentialExchanger", "ServiceAccountCredentialExchanger"]
