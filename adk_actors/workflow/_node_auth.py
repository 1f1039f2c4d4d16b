"""A function node's credential gate (google-adk 2.x's ``FunctionNode.auth_config``):
the node waits for a credential the client collects, as it waits for input (see
``_input``: the same rule, a second kind of question).

The question: one ``model`` content with one function call named
``adk_request_credential`` whose id is ``wf_auth:<node path>`` (the node run's
``nodeInfo.path``), named in ``long_running_tool_ids``; its arguments are
``functionCallId`` (that id again), ``authConfig`` (the auth request:
``AuthHandler.generate_auth_request`` of the node's config, camelCase, no secret the
node configured, an OAuth2 sign-in URL and its ``state`` made) and ``message`` (what a
client shows, in our words: for an API key, which key (its name); for OAuth2 and
OpenID Connect, to sign in; else, that credentials are needed). The OAuth ``state`` made for it
is written to the session state under ``adk_oauth_state:<id>``; a PKCE verifier made
for it goes under ``adk_oauth_credential:<id>`` (``authType``, ``oauth2.codeVerifier``,
``oauth2.codeChallengeMethod``) and is left out of the event (its method stays). Both go out with the
question's event, so a host that restarts still has them.

The answer: a function response with that id (any name; google-adk's client names it
``adk_request_credential``) carrying the ``AuthConfig`` of the question with the
credential filled in (``exchangedAuthCredential``), or the credential alone, or a bare
API key. It answers the node as any answer does (see ``_input``); the node runs again
(``rerun_on_resume`` is required) and :func:`take_answer` keeps the credential.
"""

from __future__ import annotations

from typing import Any

from .._types import Content, Event, FunctionCall, Part
from ._errors import WorkflowDataError
from ._input import REQUEST_CREDENTIAL_FUNCTION_CALL_NAME

__all__ = ["AUTH_INTERRUPT_PREFIX", "OAUTH_CREDENTIAL_PREFIX", "OAUTH_STATE_PREFIX", "auth_interrupt_id", "credential_request",
           "has_credential", "take_answer"]

#: the prefix of a node's credential question's id (google-adk's)
AUTH_INTERRUPT_PREFIX = "wf_auth:"
#: where the OAuth ``state`` made for a question is kept, by interrupt id (google-adk's key)
OAUTH_STATE_PREFIX = "adk_oauth_state:"
#: where the PKCE verifier made for a question is kept, by interrupt id (google-adk's key)
OAUTH_CREDENTIAL_PREFIX = "adk_oauth_credential:"


def auth_interrupt_id(node_path: str) -> str:
    """The id of the credential question a node run at ``node_path`` asks."""
    return AUTH_INTERRUPT_PREFIX + node_path


def _message(auth_config: Any) -> str:
    """What a client shows with the question (see the module)."""
    from ..auth.auth_credential import AuthCredentialTypes

    raw = auth_config.raw_auth_credential
    kind = raw.auth_type if raw is not None else None
    if kind == AuthCredentialTypes.API_KEY:
        return f"This step needs the API key {getattr(auth_config.auth_scheme, 'name', None) or 'it uses'}."
    if kind in (AuthCredentialTypes.OAUTH2, AuthCredentialTypes.OPEN_ID_CONNECT):
        return "This step needs you to sign in: follow the link, then send back where it took you."
    return "This step needs credentials: send them to go on."


def has_credential(auth_config: Any, state: Any) -> bool:
    """Whether ``state`` holds a credential for ``auth_config`` (under
    ``temp:<credential key>`` or ``<credential key>``), nothing exchanged."""
    from ..auth.auth_handler import AuthHandler

    return AuthHandler(auth_config).has_auth_response(state)


def credential_request(auth_config: Any, interrupt_id: str, state: Any) -> Event:
    """The question's event (see the module), in order: the auth request made (a
    ``ValueError`` of ``generate_auth_request`` for a config it cannot ask for, e.g. an
    OAuth2 scheme without a client id, fails the node); its OAuth state, then its PKCE
    verifier, written to ``state``; the verifier taken out of the request."""
    from ..auth.auth_handler import AuthHandler
    from ..auth.auth_tool import AuthToolArguments
    from ..tools.openapi_tool._auth_config import wire
    from ..tools.openapi_tool._auth_requests import extra

    request = AuthHandler(auth_config).generate_auth_request()
    made = request.exchanged_auth_credential
    if made is not None and made.oauth2 is not None:
        if made.oauth2.state:
            state[OAUTH_STATE_PREFIX + interrupt_id] = made.oauth2.state
        verifier = extra(made.oauth2, "code_verifier")
        if verifier:
            state[OAUTH_CREDENTIAL_PREFIX + interrupt_id] = {
                "authType": made.auth_type.value,
                "oauth2": {"codeVerifier": verifier, "codeChallengeMethod": extra(made.oauth2, "code_challenge_method")}}
            oauth2 = made.oauth2.model_copy(deep=True)
            (oauth2.model_extra or {}).pop("code_verifier", None)
            (oauth2.model_extra or {}).pop("codeVerifier", None)
            request.exchanged_auth_credential = made.model_copy(update={"oauth2": oauth2})
    args = wire(AuthToolArguments(function_call_id=interrupt_id, auth_config=request))
    args["message"] = _message(auth_config)
    call = FunctionCall(id=interrupt_id, name=REQUEST_CREDENTIAL_FUNCTION_CALL_NAME, args=args)
    return Event(content=Content(role="model", parts=(Part(function_call=call),)),
                 long_running_tool_ids=(interrupt_id,))


def _asked(auth_config: Any, state: Any, interrupt_id: str) -> Any:
    """The node's config as it was asked: its exchanged credential carrying the OAuth
    state and the PKCE verifier made for the question (when any was)."""
    from ..auth.auth_credential import AuthCredential, AuthCredentialTypes, OAuth2Auth

    made_state = state.get(OAUTH_STATE_PREFIX + interrupt_id)
    pkce = state.get(OAUTH_CREDENTIAL_PREFIX + interrupt_id)
    pkce_oauth2 = pkce.get("oauth2") if isinstance(pkce, dict) else None
    if made_state is None and not isinstance(pkce_oauth2, dict):
        return auth_config
    base = auth_config.exchanged_auth_credential or auth_config.raw_auth_credential
    if base is None:
        base = AuthCredential(auth_type=AuthCredentialTypes.OAUTH2)
    oauth2 = base.oauth2.model_copy(deep=True) if base.oauth2 is not None else OAuth2Auth()
    update: dict[str, Any] = {"state": made_state}
    if isinstance(pkce_oauth2, dict):
        update["code_verifier"] = pkce_oauth2.get("codeVerifier")
        update["code_challenge_method"] = pkce_oauth2.get("codeChallengeMethod")
    credential = base.model_copy(update={"oauth2": oauth2.model_copy(update=update)})
    return auth_config.model_copy(update={"exchanged_auth_credential": credential}, deep=True)


def take_answer(answer: Any, auth_config: Any, state: Any, interrupt_id: str) -> None:
    """Keep the client's ``answer`` to question ``interrupt_id`` (see the module), in
    order: it is pinned to the node's own config (the client never picks the scheme,
    client or key), its OAuth state checked against the one made for the question, the
    PKCE verifier kept for it put back (and its key set to None), and the credential
    stored under ``temp:<credential key>`` (this invocation only; the function reads it
    through ``AuthHandler(auth_config).get_auth_response(ctx.state)``). An answer that
    is malformed, carries no credential, or another OAuth state:
    :class:`WorkflowDataError`, nothing stored."""
    from ..auth._requests import store_answer

    asked = _asked(auth_config, state, interrupt_id)
    if store_answer(asked, answer, state, interrupt_id) is None:
        raise WorkflowDataError(
            f"the answer to credential request {interrupt_id!r} cannot be used: it carries no credential, or not "
            f"the OAuth state the request was made with; answer with the request's authConfig, its "
            f"exchangedAuthCredential filled in")
    if state.get(OAUTH_CREDENTIAL_PREFIX + interrupt_id) is not None:
        state[OAUTH_CREDENTIAL_PREFIX + interrupt_id] = None
