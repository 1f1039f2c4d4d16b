"""The name of the function call that asks the client for a credential
(google-adk's ``REQUEST_EUC_FUNCTION_CALL_NAME``), apart from the auth types that use it:
the engine reads it on every flow, and those types bring FastAPI's OpenAPI models."""

from __future__ import annotations

__all__ = ["REQUEST_EUC_FUNCTION_CALL_NAME"]

#: the name of the function call that asks the client for a credential (google-adk's)
REQUEST_EUC_FUNCTION_CALL_NAME = "adk_request_credential"
