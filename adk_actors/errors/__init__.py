"""google-adk's ``google.adk.errors`` path: the errors its API raises that are here."""

from .._exceptions import InvocationNotFoundError
from ._stale_session_error import StaleSessionError
from ._unavailable import ServiceUnavailableError
from .already_exists_error import AlreadyExistsError
from .input_validation_error import InputValidationError
from .not_found_error import NotFoundError
from .session_not_found_error import SessionNotFoundError

__all__ = ["AlreadyExistsError", "InputValidationError", "InvocationNotFoundError", "NotFoundError",
           "ServiceUnavailableError", "SessionNotFoundError", "StaleSessionError"]
