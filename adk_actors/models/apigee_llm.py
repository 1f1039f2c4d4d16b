"""google-adk's import path of ``ApigeeLlm``, and of its Chat Completions client and
answer reader (``CompletionsHTTPClient``, ``ChatCompletionsResponseHandler``)."""

from ._apigee import ApigeeLlm
from ._apigee_completions import ChatCompletionsResponseHandler, CompletionsHTTPClient

__all__ = ["ApigeeLlm", "ChatCompletionsResponseHandler", "CompletionsHTTPClient"]
