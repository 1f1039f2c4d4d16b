"""google-adk's import path of the exchangers' base and its error."""

from ..._exchanger_base import AuthCredentialMissingError, BaseAuthCredentialExchanger

__all__ = ["AuthCredentialMissingError", "BaseAuthCredentialExchanger"]
