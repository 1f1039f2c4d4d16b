"""google-adk's ``ToolAuthHandler``: how a :class:`~._rest_api_tool.RestApiTool` gets a
user's credential through the ``adk_request_credential`` round trip, keeps it, refreshes
it and recovers from a 401 (google-adk 2.13's rules and state keys).

:meth:`ToolAuthHandler.prepare_auth_credentials`, in order:

1. no scheme: nothing to do (``done``);
2. the credential kept for this user (:class:`ToolContextCredentialStore`); an OAuth2
   one whose ``expires_at`` is within 60 s (authlib's leeway, as google-adk's) is
   refreshed first with its refresh token and the tool's own client, and the new
   tokens kept (a refresh that fails keeps the old ones);
3. else the tool's own credential; when there is none, or it is an OAuth2 / OpenID
   Connect one without an access token, the client's answer is read
   (``tool_context.get_auth_response(auth_config)``: its code exchanged at the token
   endpoint) and kept; with no answer the client is asked
   (``tool_context.request_credential(auth_config)``: the run ends with an
   ``adk_request_credential`` call) and the result is ``pending``. An OAuth2 scheme
   whose tool credential has no ``oauth2`` part is google-adk's ``ValueError``, one
   without a ``client_id`` its ``AuthCredentialMissingError``;
4. the credential is made ready to send (:class:`~._exchangers.AutoAuthCredentialExchanger`:
   an OAuth2 token becomes an HTTP bearer credential; a failure is logged and the call
   goes out without auth, as google-adk's). A service account is exchanged for a
   Google token in a thread (google-auth blocks), and its failure is raised (its
   ``AuthCredentialMissingError``: the call sends nothing and the run gets the error,
   where google-adk's sends the request without auth).

The ``auth_config`` is google-adk's: the scheme, the tool's credential, and the tool's
``credential_key`` (else google-adk's default key).

Where the credential is kept (unlike google-adk, which writes it with the client secret
into the session state under ``<scheme>_<digest>_<type>_<digest>_existing_exchanged_credential``):
the run's credential service when it has one (across turns and host restarts; with a
refresh token, the scheme's token URL and the tool's client are kept with it, so that
the service refreshes a token about to expire itself), else this process's memory
(across turns of an in-process runner; lost when the process ends, and the user is
asked again), under the tool's ``credential_key``, else google-adk's key. No token,
code or client secret is written to the session state, an event or a log line by this
module.

:meth:`ToolAuthHandler.handle_unauthorized_error` (the API rejected the token), in
order: a kept credential with a refresh token is refreshed (at most once until a call
succeeds: ``_adk_recovery_refreshes:<key>`` in the session state) and the call is made
again (``refreshed``); once that budget is spent, ``failed``; else, under an OAuth2 or
OpenID Connect scheme, the user is asked again (at most once until a call succeeds:
``_adk_reauth_requests:<key>``) and the kept credential dropped (``reauth_requested``),
or ``reauth_limit_reached`` past the budget; any other scheme is ``failed``.
:meth:`~ToolAuthHandler.claim_recovery` makes one call chain at a time recover a
credential (``temp:_adk_reauth_attempted_<key>``), and
:meth:`~ToolAuthHandler.note_successful_call` refills both budgets. ``<key>`` is
google-adk's store key, so the state keys are google-adk's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any, Literal, NamedTuple

from fastapi.openapi.models import SecurityBase, SecuritySchemeType
from pydantic import BaseModel, ConfigDict

from ..._secrets import register_secret
from ._auth import AuthCredential, AuthCredentialTypes, HttpAuth, HttpCredentials, OAuth2Auth
from ._auth_config import AuthConfig, credential_digest, scheme_digest
from ._exchangers import (
    AuthCredentialMissingError,
    AutoAuthCredentialExchanger,
    BaseAuthCredentialExchanger,
)
from ._network import HttpxClientFactory
from ._oauth2 import OAuth2TokenError, OAuth2Tokens, token_url_of

__all__ = ["AuthPreparationResult", "AuthPreparationState", "ToolAuthHandler", "ToolContextCredentialStore",
           "UnauthorizedRecoveryState"]

_log = logging.getLogger("adk_actors.tools.openapi")

AuthPreparationState = Literal["pending", "done"]
UnauthorizedRecoveryState = Literal["refreshed", "reauth_requested", "reauth_limit_reached", "failed"]

#: google-adk's budgets: how often one credential may ask the user / be refreshed after a 401
_MAX_REAUTH_REQUESTS = 1
_MAX_RECOVERY_REFRESHES = 1
#: authlib's: a token expiring within this many seconds is refreshed before use
_EXPIRY_LEEWAY = 60
_OAUTH = (SecuritySchemeType.oauth2, SecuritySchemeType.openIdConnect)
#: the OAuth2 fields of one sign-in, left out of google-adk's store key
_TRANSIENT = ("auth_uri", "state", "auth_response_uri", "auth_code", "access_token", "refresh_token", "expires_at",
              "expires_in", "redirect_uri")


class AuthPreparationResult(BaseModel):
    """What :meth:`ToolAuthHandler.prepare_auth_credentials` found (google-adk's)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    state: AuthPreparationState
    auth_scheme: SecurityBase | None = None
    auth_credential: AuthCredential | None = None


class _Memory:
    """This process's credentials (no credential service): (app, user, key) -> the
    credential's JSON, the oldest dropped past ``LIMIT``."""

    LIMIT = 10_000

    def __init__(self) -> None:
        self._items: OrderedDict[tuple[str, str, str], str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, where: tuple[str, str, str]) -> str | None:
        with self._lock:
            return self._items.get(where)

    def put(self, where: tuple[str, str, str], value: str) -> None:
        with self._lock:
            self._items[where] = value
            self._items.move_to_end(where)
            while len(self._items) > self.LIMIT:
                self._items.popitem(last=False)

    def delete(self, where: tuple[str, str, str]) -> None:
        with self._lock:
            self._items.pop(where, None)


_memory = _Memory()


class ToolContextCredentialStore:
    """Where a tool's user credential is kept (see the module): the run's credential
    service, else this process's memory (unless ``memory`` is False: then nothing is
    kept without a service); ``credential_key`` (the tool's, or the one its scheme or
    credential carries) names it there, else google-adk's key (:meth:`get_credential_key`)."""

    def __init__(self, tool_context: Any, credential_key: str | None = None, *,
                 auth_scheme: SecurityBase | None = None, client: OAuth2Auth | None = None,
                 memory: bool = True) -> None:
        self.tool_context = tool_context
        self.credential_key = credential_key
        #: without a credential service: keep in this process's memory (else keep nothing)
        self.memory = memory
        #: what the credential service needs to refresh a token itself (its token URL
        #: and the tool's client): kept in the service with the tokens, never in the state
        self._token_url = token_url_of(auth_scheme)
        self._client = client

    def get_credential_key(self, auth_scheme: SecurityBase | None, auth_credential: AuthCredential | None) -> str:
        """google-adk's key: ``<scheme type>_<digest>_<credential type>_<digest>_existing_exchanged_credential``
        (digests of the scheme and of the credential without one sign-in's fields)."""
        scheme = ""
        if auth_scheme is not None:
            kind = getattr(auth_scheme.type_, "name", str(auth_scheme.type_))
            scheme = f"{kind}_{scheme_digest(auth_scheme)}"
        credential = ""
        if auth_credential is not None:
            if auth_credential.oauth2 is not None:
                auth_credential = auth_credential.model_copy(update={"oauth2": auth_credential.oauth2.model_copy(
                    update=dict.fromkeys(_TRANSIENT))})
            credential = f"{auth_credential.auth_type.value}_{credential_digest(auth_credential)}"
        return f"{scheme}_{credential}_existing_exchanged_credential"

    def _where(self) -> tuple[Any, str, str]:
        invocation = self.tool_context.invocation
        session = invocation.session
        return invocation.credentials, session.app_name, session.user_id

    def _name(self, key: str) -> str:
        return self.credential_key or key

    def get_credential(self, auth_scheme: SecurityBase | None,
                       auth_credential: AuthCredential | None) -> AuthCredential | None:
        """The kept credential, or None."""
        if self.tool_context is None:
            return None
        key = self._name(self.get_credential_key(auth_scheme, auth_credential))
        service, app, user = self._where()
        if service is None and not self.memory:
            return None
        if service is None:
            text = _memory.get((app, user, key))
            return None if text is None else AuthCredential.model_validate_json(text)
        stored = service.get(app, user, key)
        return None if stored is None else _from_service(stored, auth_scheme)

    def store_credential(self, key: str, auth_credential: AuthCredential | None) -> None:
        """Keep ``auth_credential`` (its client secret left out) under ``key`` (or the
        tool's ``credential_key``)."""
        if self.tool_context is None or auth_credential is None:
            return
        kept = auth_credential.model_copy(deep=True)
        if kept.oauth2 is not None:
            kept.oauth2.client_secret = None
            for name in ("access_token", "refresh_token", "id_token"):
                register_secret(getattr(kept.oauth2, name))
        service, app, user = self._where()
        if service is None and not self.memory:
            return
        if service is None:
            _memory.put((app, user, self._name(key)), kept.model_dump_json(exclude_none=True))
        else:
            record = _to_service(kept)
            if record.get("refresh_token") and self._token_url and self._client is not None:
                record.update(token_url=self._token_url, client_id=self._client.client_id,
                              client_secret=self._client.client_secret)
            service.put(app, user, self._name(key), record)

    def remove_credential(self, key: str) -> None:
        """Drop the credential kept under ``key`` (or the tool's ``credential_key``)."""
        if self.tool_context is None:
            return
        service, app, user = self._where()
        if service is None:
            _memory.delete((app, user, self._name(key)))
        else:
            delete = getattr(service, "delete", None)
            if callable(delete):
                delete(app, user, self._name(key))


def _secret(value: Any) -> str | None:
    plain = value.get_secret_value() if hasattr(value, "get_secret_value") else value
    return plain if isinstance(plain, str) else None


def _from_service(stored: Any, scheme: SecurityBase | None) -> AuthCredential | None:
    """The credential service's record as google-adk's credential."""
    if getattr(stored, "api_key", None) is not None:
        return AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key=_secret(stored.api_key))
    token = _secret(getattr(stored, "access_token", None))
    if not token:
        return None
    if scheme is not None and scheme.type_ == SecuritySchemeType.http:
        return AuthCredential(auth_type=AuthCredentialTypes.HTTP, http=HttpAuth(
            scheme=str(getattr(scheme, "scheme", "bearer")), credentials=HttpCredentials(token=token)))
    expires_at = getattr(stored, "expires_at", None)
    return AuthCredential(auth_type=AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth(
        access_token=token, refresh_token=_secret(getattr(stored, "refresh_token", None)),
        expires_at=int(expires_at) if expires_at is not None else None, client_id=getattr(stored, "client_id", None)))


def _to_service(credential: AuthCredential) -> dict[str, Any]:
    """google-adk's credential as the credential service's record (a token and its
    expiry; the store adds the token URL and client when there is a refresh token)."""
    if credential.api_key:
        return {"kind": "api_key", "api_key": credential.api_key}
    if credential.http is not None and credential.http.credentials.token:
        return {"kind": "oauth2", "access_token": credential.http.credentials.token}
    oauth2 = credential.oauth2 or OAuth2Auth()
    return {"kind": "oauth2", "access_token": oauth2.access_token, "refresh_token": oauth2.refresh_token,
            "expires_at": float(oauth2.expires_at) if oauth2.expires_at is not None else None,
            "client_id": oauth2.client_id}


class _RefreshOutcome(NamedTuple):
    credential: AuthCredential
    new_access_token: bool
    rotated_refresh_token: bool


class ToolAuthHandler:
    """google-adk's handler of one tool call's auth (see the module). ``verify``,
    ``client_factory`` and ``allow_private_network_access`` are the tool's, for its
    refresh requests."""

    def __init__(self, tool_context: Any, auth_scheme: SecurityBase | None, auth_credential: AuthCredential | None,
                 credential_exchanger: BaseAuthCredentialExchanger | None = None,
                 credential_store: ToolContextCredentialStore | None = None, *, credential_key: str | None = None,
                 verify: Any = None, client_factory: HttpxClientFactory | None = None,
                 allow_private_network_access: bool = False) -> None:
        self.tool_context = tool_context
        self.auth_scheme = auth_scheme.model_copy(deep=True) if auth_scheme is not None else None
        self.auth_credential = auth_credential.model_copy(deep=True) if auth_credential is not None else None
        self._credential_key = credential_key
        self.credential_exchanger = credential_exchanger or AutoAuthCredentialExchanger()
        self.credential_store = credential_store
        self._verify, self._client_factory = verify, client_factory
        self._allow_private_network_access = allow_private_network_access

    @classmethod
    def from_tool_context(cls, tool_context: Any, auth_scheme: SecurityBase | None,
                          auth_credential: AuthCredential | None,
                          credential_exchanger: BaseAuthCredentialExchanger | None = None, *,
                          credential_key: str | None = None, **transport: Any) -> ToolAuthHandler:
        """The handler for a call in ``tool_context`` (None: no store, no asking)."""
        handler = cls(tool_context, auth_scheme, auth_credential, credential_exchanger, None,
                      credential_key=credential_key, **transport)
        if tool_context is not None:
            client = auth_credential.oauth2 if auth_credential is not None else None
            handler.credential_store = ToolContextCredentialStore(
                tool_context, handler._credential_key_override(), auth_scheme=auth_scheme, client=client)
        return handler

    # -- the auth config ---------------------------------------------------------------

    def _credential_key_override(self) -> str | None:
        if self._credential_key:
            return self._credential_key
        for model in (self.auth_credential, self.auth_scheme):
            extra = getattr(model, "model_extra", None) or {}
            for name in ("credential_key", "credentialKey"):
                if isinstance(extra.get(name), str) and extra[name]:
                    return str(extra[name])
        return None

    def _build_auth_config(self) -> AuthConfig:
        return AuthConfig(auth_scheme=self.auth_scheme, raw_auth_credential=self.auth_credential,
                          credential_key=self._credential_key_override())

    def _store_key(self) -> str:
        if self.credential_store is None:
            return ""
        return self.credential_store.get_credential_key(self.auth_scheme, self.auth_credential)

    # -- preparing ----------------------------------------------------------------------

    async def prepare_auth_credentials(self) -> AuthPreparationResult:
        """The credential for this call, or ``pending`` after asking (see the module)."""
        if self.auth_scheme is None:
            return AuthPreparationResult(state="done")
        credential = await self._get_existing_credential() or self.auth_credential
        if credential is None or self._external_exchange_required(credential):
            credential = self.tool_context.get_auth_response(self._build_auth_config()) \
                if self.tool_context is not None else None
            if credential is None:
                self._request_credential()
                return AuthPreparationResult(state="pending", auth_scheme=self.auth_scheme,
                                             auth_credential=self.auth_credential)
            self._store_credential(credential)
        if credential.auth_type == AuthCredentialTypes.SERVICE_ACCOUNT:
            assert self.auth_scheme is not None
            exchanged = await asyncio.to_thread(self.credential_exchanger.exchange_credential, self.auth_scheme,
                                                credential)
        else:
            exchanged = self._exchange_credential(credential)
        return AuthPreparationResult(state="done", auth_scheme=self.auth_scheme, auth_credential=exchanged)

    async def _get_existing_credential(self) -> AuthCredential | None:
        if self.credential_store is None:
            return None
        existing = self.credential_store.get_credential(self.auth_scheme, self.auth_credential)
        if existing is not None and existing.oauth2 is not None:
            existing = (await self._refresh_and_store(existing)).credential
        return existing

    @staticmethod
    def _external_exchange_required(credential: AuthCredential) -> bool:
        return (credential.auth_type in (AuthCredentialTypes.OAUTH2, AuthCredentialTypes.OPEN_ID_CONNECT)
                and not (credential.oauth2 is not None and credential.oauth2.access_token))

    def _exchange_credential(self, credential: AuthCredential) -> AuthCredential | None:
        assert self.auth_scheme is not None
        try:
            return self.credential_exchanger.exchange_credential(self.auth_scheme, credential)
        except Exception as exc:  # google-adk's: logged, and the call goes out without auth
            _log.error("Failed to exchange credential: %s", type(exc).__name__)
            return None

    def _store_credential(self, credential: AuthCredential) -> None:
        if self.credential_store is not None:
            self.credential_store.store_credential(self._store_key(), credential)

    def _request_credential(self) -> None:
        """Ask the client (google-adk's checks first)."""
        assert self.auth_scheme is not None
        if self.auth_scheme.type_ in _OAUTH:
            if self.auth_credential is None or self.auth_credential.oauth2 is None:
                raise ValueError(f"auth_credential is empty for scheme {self.auth_scheme.type_}.Please create "
                                 "AuthCredential using OAuth2Auth.")
            if not self.auth_credential.oauth2.client_id:
                raise AuthCredentialMissingError("OAuth2 credentials client_id is missing.")
        if self.tool_context is None:
            return
        self.tool_context.request_credential(self._build_auth_config())

    # -- refreshing ---------------------------------------------------------------------

    @staticmethod
    def _expired(oauth2: OAuth2Auth) -> bool:
        return isinstance(oauth2.expires_at, int) and oauth2.expires_at - _EXPIRY_LEEWAY < time.time()

    def _with_client(self, credential: AuthCredential) -> AuthCredential:
        """A copy of ``credential`` with the tool's own client (id, secret, method)."""
        copy = credential.model_copy(deep=True)
        own = self.auth_credential.oauth2 if self.auth_credential is not None else None
        if copy.oauth2 is not None and own is not None:
            copy.oauth2.client_id = own.client_id or copy.oauth2.client_id
            copy.oauth2.client_secret = own.client_secret
            copy.oauth2.token_endpoint_auth_method = own.token_endpoint_auth_method
        return copy

    async def _refresh_and_store(self, credential: AuthCredential, *, force_expiry: bool = False) -> _RefreshOutcome:
        """Refresh ``credential`` when it has expired (or ``force_expiry``) and keep the
        new tokens; the outcome says whether the access token and the refresh token moved."""
        unchanged = _RefreshOutcome(credential, False, False)
        oauth2 = credential.oauth2
        if oauth2 is None or self.auth_scheme is None or not (force_expiry or self._expired(oauth2)):
            return unchanged
        if not oauth2.refresh_token:
            return unchanged
        working = self._with_client(credential)
        assert working.oauth2 is not None
        working.oauth2.access_token = working.oauth2.expires_at = None
        try:
            await OAuth2Tokens(leeway=0).token(self.auth_scheme, working, verify=self._verify,
                                               client_factory=self._client_factory,
                                               allow_private_network_access=self._allow_private_network_access)
        except OAuth2TokenError as exc:
            _log.warning("OAuth2 token refresh failed: %s", exc)
            return unchanged
        refreshed = working.oauth2
        if not refreshed.refresh_token:
            refreshed.refresh_token = oauth2.refresh_token  # RFC 6749 s6: the old one stays valid
        if not refreshed.access_token:
            return unchanged
        new_access = refreshed.access_token != oauth2.access_token
        rotated = bool(refreshed.refresh_token and refreshed.refresh_token != oauth2.refresh_token)
        if not new_access and not rotated:
            return unchanged
        self._store_credential(working)
        return _RefreshOutcome(working, new_access, rotated)

    # -- a 401 --------------------------------------------------------------------------

    def _recovery_lock_key(self) -> str:
        return f"temp:_adk_reauth_attempted_{self._store_key()}"

    def _reauth_budget_key(self) -> str:
        return f"_adk_reauth_requests:{self._store_key()}"

    def _refresh_budget_key(self) -> str:
        return f"_adk_recovery_refreshes:{self._store_key()}"

    @contextlib.contextmanager
    def claim_recovery(self) -> Iterator[bool]:
        """Whether this call chain may recover the credential (one at a time; released on exit)."""
        acquired = False
        if self.tool_context is not None and self.credential_store is not None:
            state = self.tool_context.state
            if not state.get(self._recovery_lock_key(), False):
                state[self._recovery_lock_key()] = acquired = True
        try:
            yield acquired
        finally:
            if acquired:
                self.tool_context.state[self._recovery_lock_key()] = False

    def note_successful_call(self) -> None:
        """A call got past the API's authentication: both budgets are refilled."""
        if self.tool_context is None or self.credential_store is None:
            return
        for key in (self._reauth_budget_key(), self._refresh_budget_key()):
            if self.tool_context.state.get(key):
                self.tool_context.state[key] = 0

    async def handle_unauthorized_error(self) -> UnauthorizedRecoveryState:
        """Recover from a 401 that rejected the token (see the module)."""
        can_budget = self.tool_context is not None and self.credential_store is not None
        state = self.tool_context.state if can_budget else {}
        refreshes = state.get(self._refresh_budget_key(), 0) if can_budget else 0
        if self.credential_store is not None:
            existing = self.credential_store.get_credential(self.auth_scheme, self.auth_credential)
            if existing is not None and existing.oauth2 is not None and existing.oauth2.refresh_token:
                if refreshes >= _MAX_RECOVERY_REFRESHES:
                    _log.warning("Reactive refresh budget exhausted after a 401; reporting the API error until a "
                                 "call with this credential succeeds.")
                    return "failed"
                outcome = await self._refresh_and_store(existing, force_expiry=True)
                if (outcome.new_access_token or outcome.rotated_refresh_token) and can_budget:
                    state[self._refresh_budget_key()] = refreshes + 1
                if outcome.new_access_token:
                    return "refreshed"
        if self.auth_scheme is None or self.auth_scheme.type_ not in _OAUTH:
            return "failed"
        asked = state.get(self._reauth_budget_key(), 0) if can_budget else 0
        if asked >= _MAX_REAUTH_REQUESTS:
            _log.warning("Re-authorization budget exhausted after a 401; not asking again until a call with this "
                         "credential succeeds.")
            return "reauth_limit_reached"
        try:
            self._request_credential()
        except Exception as exc:
            _log.warning("Failed to request credential after 401: %s", type(exc).__name__)
            return "failed"
        if can_budget:
            state[self._reauth_budget_key()] = asked + 1
        if self.credential_store is not None:
            self.credential_store.remove_credential(self._store_key())
        return "reauth_requested"
