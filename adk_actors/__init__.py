"""adk-actors: an Agent Development Kit on an OTP-style actor runtime."""

__version__ = "0.1.0"

__all__ = ["__version__"]
