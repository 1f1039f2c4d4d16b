"""google-adk's import path of the exchangers' base and its error."""

from ..._exchangers import AuthCredentialMissingError, BaseAuthCredentialExchanger

__all__ = ["AuthCredentialMissingError", "BaseAuthCredentialExchanger"]
