"""What of a session's history carries credential material, so that
:class:`~.remote_a2a_agent.RemoteA2aAgent` never relays it to its peer: the parts
google-adk 2.13's ``RemoteA2aAgent`` drops before it builds a request from the history
(``a2a/agent/_remote_a2a_agent.py``: ``_without_credential_parts``), in the same cases.

A part carries credentials, in order of the checks:

* a tool's result (``function_response``) named ``adk_request_credential`` (the
  client's answer to a credential request: the exchanged credential) or
  ``mock_function_call_for_required_user_auth`` (the answer to a peer's request for
  authentication), or whose payload is shaped as a serialized ``AuthConfig`` (a
  mapping with ``auth_scheme``, ``raw_auth_credential`` or
  ``exchanged_auth_credential``, in snake or camel case, as it is or as the only
  value under ``result``);
* a tool call (``function_call``) named ``adk_request_credential`` (its arguments hold
  the ``AuthConfig``, with the raw credential: a client secret, a key), or whose
  ``authConfig`` / ``auth_config`` argument is shaped as one (as above). A call
  with a top-level ``auth_scheme`` argument of its own is not one, nor is a peer's
  ``mock_function_call_for_required_user_auth`` call (its arguments are the peer's
  prompt).

Any other part (text, data, a call or result of another kind) is kept.
"""

from __future__ import annotations

from typing import Any

from .._types import Event, FunctionCall, FunctionResponse, Part

__all__ = ["is_credential_part", "without_credential_parts"]

#: google-adk's ``REQUEST_EUC_FUNCTION_CALL_NAME`` (also ``adk_actors.auth``'s; named
#: here because the agents layer does not import the tools)
REQUEST_CREDENTIAL = "adk_request_credential"
#: the call google-adk makes up for a peer's ``auth-required`` answer
PEER_AUTH_REQUEST = "mock_function_call_for_required_user_auth"
#: names whose *result* carries credentials
_CREDENTIAL_RESULTS = frozenset({REQUEST_CREDENTIAL, PEER_AUTH_REQUEST})
#: names whose *arguments* carry credentials
_CREDENTIAL_ARGUMENTS = frozenset({REQUEST_CREDENTIAL})
#: the top-level keys of a serialized AuthConfig, both spellings
_AUTH_CONFIG_KEYS = frozenset({"auth_scheme", "authScheme", "raw_auth_credential", "rawAuthCredential",
                               "exchanged_auth_credential", "exchangedAuthCredential"})
#: where a credential request's arguments hold the AuthConfig
_AUTH_CONFIG_ARGUMENTS = ("authConfig", "auth_config")


def _looks_like_auth_config(payload: Any) -> bool:
    """Whether ``payload`` (or its only ``result`` value) is a mapping with a key of a
    serialized AuthConfig."""
    if isinstance(payload, dict) and len(payload) == 1 and "result" in payload:
        payload = payload["result"]
    return isinstance(payload, dict) and not _AUTH_CONFIG_KEYS.isdisjoint(payload)


def _is_credential_result(result: FunctionResponse) -> bool:
    return result.name in _CREDENTIAL_RESULTS or _looks_like_auth_config(result.response)


def _is_credential_call(call: FunctionCall) -> bool:
    if call.name in _CREDENTIAL_ARGUMENTS:
        return True
    args = call.args
    return isinstance(args, dict) and any(_looks_like_auth_config(args.get(key)) for key in _AUTH_CONFIG_ARGUMENTS)


def is_credential_part(part: Part) -> bool:
    """Whether ``part`` carries credential material (see the module): its result is
    checked when it has one, else its call; a part with neither does not."""
    if part.function_response is not None:
        return _is_credential_result(part.function_response)
    if part.function_call is not None:
        return _is_credential_call(part.function_call)
    return False


def without_credential_parts(event: Event) -> Event:
    """``event`` as it may be relayed: the event itself when it has no content, no
    parts or no credential part; otherwise a copy whose content keeps only the parts
    that carry none (possibly no part at all). The event given is never changed."""
    content = event.content
    if content is None or not content.parts or not any(is_credential_part(p) for p in content.parts):
        return event
    kept = [part for part in content.parts if not is_credential_part(part)]
    copy: Event = event.model_copy(update={"content": content.model_copy(update={"parts": kept})})
    return copy
