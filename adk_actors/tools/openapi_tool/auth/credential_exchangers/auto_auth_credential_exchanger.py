"""google-adk's import path of ``AutoAuthCredentialExchanger``."""

from ..._exchangers import AutoAuthCredentialExchanger

__all__ = ["AutoAuthCredentialExchanger"]
