"""google-adk's import path of ``ServiceAccountCredentialExchanger``."""

from ..._service_account import ServiceAccountCredentialExchanger

__all__ = ["ServiceAccountCredentialExchanger"]
