"""google-adk's ``CredentialManager``: what a custom tool calls to get a ready credential
for an ``AuthConfig`` (``await CredentialManager(auth_config).get_auth_credential(tool_context)``),
and to ask the client for one (``request_credential``), with google-adk's extension
points: custom auth providers (``register_auth_provider``, for the process), and
per-manager credential exchangers and refreshers by credential type
(``register_credential_exchanger``; ``register_credential_refresher``, which google-adk's
own docstring shows, or ``_refresher_registry.register`` as on google-adk).

A new manager registers google-adk's defaults: :class:`OAuth2CredentialExchanger` and
:class:`OAuth2CredentialRefresher` for OAuth2 and OpenID Connect credentials, and
``ServiceAccountCredentialExchanger`` for service accounts (a Google access or ID token
as an HTTP bearer credential; see ``tools.openapi_tool._service_account``).

:meth:`CredentialManager.get_auth_credential`, in order (google-adk's):

0. a :class:`CustomAuthScheme` goes to its provider: a generic ``CustomAuthScheme`` is
   first made into the direct subclass whose ``type_`` default is its type (none:
   ``ValueError``); no provider registered for its class is google-adk's
   ``ValueError``; the provider's credential is returned, None from it is a
   ``ValueError``, and an OAuth2 one with an ``auth_uri`` but no access token is kept
   as the config's exchanged credential and None returned (the user must consent).
   A credential from a provider, an exchanger or a refresher has its secrets
   registered at once (``adk_actors._secrets``: shown as ``***`` in this process's
   events, errors and logs).
   Nothing of the steps below applies (no lock, no credential service);
1. (one call at a time per app, user and credential key on an event loop) the config
   is checked: an OAuth2 or OpenID Connect scheme without a ``raw_auth_credential``, or
   an OAuth2 / OpenID Connect credential without its ``oauth2`` part, is a
   ``ValueError``; an OAuth2 scheme with an empty flow URL has it filled from its
   issuer's metadata (``oauth2_discovery``; the issuer is an ``ExtendedOAuth2``'s
   ``issuer_url``, or an ``issuer_url`` extra field of a plain OAuth2 scheme, as one
   reads back from JSON): no issuer, or no usable metadata, is an
   :class:`OAuth2DiscoveryError` (a ``ValueError`` with google-adk's words, then what
   each document tried did wrong);
2. an API key or HTTP credential is ready: a copy is returned;
3. the credential the run's credential service keeps for this user under the config's
   ``credential_key`` (none without a service, as google-adk's without one; never for
   a service-account credential); one still holding an unredeemed authorization code
   is passed over;
4. else the client's answer (``tool_context.get_auth_response``: an authorization code
   is exchanged at the token endpoint with the config's own client);
5. else, under a client-credentials flow, a copy of the config's credential; else None
   (then call :meth:`request_credential` and end the call);
6. the exchanger registered for the credential's type exchanges it (an OAuth2 one
   first gets the config's client id and secret when it lacks them); a synchronous
   OpenAPI exchanger (``exchange_credential``, as the service-account one) runs in a
   thread and its result counts as exchanged, its errors raised (a service account's
   ``AuthCredentialMissingError``); no exchanger, nothing done;
7. when not exchanged, the refresher registered for its type is asked whether a
   refresh is needed, and if so refreshes it;
8. a credential still holding only an unredeemed code is dropped (None, with
   google-adk's warning: the user is asked again);
9. a credential that came from the answer, or was exchanged or refreshed, is kept in
   the credential service (when the run has one; never a service account's), never
   in the session state.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from typing import Any, ClassVar

from fastapi.openapi.models import OAuth2, SecuritySchemeType

from ..tools.openapi_tool._auth import AuthCredential, AuthCredentialTypes, as_credential
from ..tools.openapi_tool._auth_config import AuthConfig
from ..tools.openapi_tool._exchanger_base import BaseAuthCredentialExchanger
from ..tools.openapi_tool._oauth2 import CLIENT_CREDENTIALS, grant_of
from ..tools.openapi_tool._service_account import ServiceAccountCredentialExchanger
from ..tools.openapi_tool._tool_auth_handler import ToolContextCredentialStore
from .auth_provider_registry import AuthProviderRegistry
from .auth_schemes import CustomAuthScheme
from .base_auth_provider import BaseAuthProvider
from .exchanger.base_credential_exchanger import BaseCredentialExchanger
from .exchanger.credential_exchanger_registry import CredentialExchangerRegistry
from .exchanger.oauth2_credential_exchanger import OAuth2CredentialExchanger
from .oauth2_discovery import OAuth2DiscoveryError, OAuth2DiscoveryManager
from .refresher.base_credential_refresher import BaseCredentialRefresher
from .refresher.credential_refresher_registry import CredentialRefresherRegistry
from .refresher.oauth2_credential_refresher import OAuth2CredentialRefresher

__all__ = ["CredentialManager"]

_log = logging.getLogger("adk_actors.auth")

_OAUTH_TYPES = (AuthCredentialTypes.OAUTH2, AuthCredentialTypes.OPEN_ID_CONNECT)
_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str, str | None], asyncio.Lock]] = \
    weakref.WeakKeyDictionary()


def _unredeemed(credential: AuthCredential) -> bool:
    oauth2 = credential.oauth2
    return (credential.auth_type in _OAUTH_TYPES and oauth2 is not None and not oauth2.access_token
            and bool(oauth2.auth_code or oauth2.auth_response_uri))


def _rehydrate_custom_scheme(scheme: CustomAuthScheme,
                             supported_schemes: list[type[CustomAuthScheme]]) -> CustomAuthScheme:
    """``scheme`` as the first of ``supported_schemes`` whose ``type_`` default is its
    type (its extra fields too); ``ValueError`` when none is."""
    for scheme_class in supported_schemes:
        field = scheme_class.model_fields.get("type_")
        if field is not None and field.default == scheme.type_:
            data = scheme.model_dump(by_alias=True)
            data.update(scheme.model_extra or {})
            return scheme_class.model_validate(data)
    raise ValueError(f"Cannot rehydrate: no registered scheme matches type '{scheme.type_}'")


def _issuer_url(scheme: Any) -> str | None:
    value = getattr(scheme, "issuer_url", None) or (getattr(scheme, "model_extra", None) or {}).get("issuer_url")
    return value if isinstance(value, str) and value else None


class CredentialManager:
    """google-adk's credential manager of one ``auth_config`` (see the module)."""

    _auth_provider_registry: ClassVar[AuthProviderRegistry] = AuthProviderRegistry()
    _registry_lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def register_auth_provider(cls, provider: BaseAuthProvider) -> None:
        """Register ``provider`` for each scheme class in its ``supported_auth_schemes``,
        for the whole process; a class that already has another provider keeps it (a
        warning is logged), as google-adk's."""
        with cls._registry_lock:
            for scheme_type in provider.supported_auth_schemes:
                existing = cls._auth_provider_registry.get_provider(scheme_type)
                if existing is not None and existing is not provider:
                    _log.warning("An auth provider is already registered for scheme %s. Ignoring the new provider.",
                                 scheme_type)
                    continue
                cls._auth_provider_registry.register(scheme_type, provider)

    def __init__(self, auth_config: AuthConfig) -> None:
        self._auth_config = auth_config
        self._exchanger_registry = CredentialExchangerRegistry()
        self._refresher_registry = CredentialRefresherRegistry()
        self._discovery_manager = OAuth2DiscoveryManager()
        exchanger, refresher = OAuth2CredentialExchanger(), OAuth2CredentialRefresher()
        for kind in _OAUTH_TYPES:
            self._exchanger_registry.register(kind, exchanger)
            self._refresher_registry.register(kind, refresher)
        self._exchanger_registry.register(AuthCredentialTypes.SERVICE_ACCOUNT, ServiceAccountCredentialExchanger())

    def register_credential_exchanger(self, credential_type: AuthCredentialTypes,
                                      exchanger_instance: BaseCredentialExchanger | BaseAuthCredentialExchanger,
                                      ) -> None:
        """This manager exchanges ``credential_type`` credentials with ``exchanger_instance``."""
        self._exchanger_registry.register(credential_type, exchanger_instance)

    def register_credential_refresher(self, credential_type: AuthCredentialTypes,
                                      refresher_instance: BaseCredentialRefresher) -> None:
        """This manager refreshes ``credential_type`` credentials with ``refresher_instance``."""
        self._refresher_registry.register(credential_type, refresher_instance)

    async def request_credential(self, context: Any) -> None:
        """Ask the client for the config's credential (``context.request_credential``);
        google-adk's ``TypeError`` for a context that cannot ask."""
        if not hasattr(context, "request_credential"):
            raise TypeError("request_credential requires a ToolContext with request_credential method, not a plain "
                            "CallbackContext")
        context.request_credential(self._auth_config)

    def _store(self, context: Any) -> ToolContextCredentialStore:
        raw = self._auth_config.raw_auth_credential
        return ToolContextCredentialStore(context, self._auth_config.credential_key,
                                          auth_scheme=self._auth_config.auth_scheme,
                                          client=raw.oauth2 if raw is not None else None, memory=False)

    def _lock(self, context: Any) -> asyncio.Lock:
        session = context.invocation.session
        where = (session.app_name, session.user_id, self._auth_config.credential_key)
        per_loop = _locks.setdefault(asyncio.get_running_loop(), {})
        return per_loop.setdefault(where, asyncio.Lock())

    async def _from_provider(self, context: Any) -> AuthCredential | None:
        """Step 0 (see the module)."""
        config = self._auth_config
        scheme = config.auth_scheme
        assert isinstance(scheme, CustomAuthScheme)
        if type(scheme) is CustomAuthScheme:
            scheme = config.auth_scheme = _rehydrate_custom_scheme(scheme, CustomAuthScheme.__subclasses__())
        provider = self._auth_provider_registry.get_provider(scheme)
        if provider is None:
            raise ValueError(f"No auth provider registered for custom auth scheme {scheme.type_!r}. Register it "
                             "using `CredentialManager.register_auth_provider(<YourAuthProviderInstance>)`.")
        credential = as_credential(await provider.get_auth_credential(config, context))
        if not credential:
            raise ValueError("AuthProvider did not return a credential.")
        if credential.oauth2 and not credential.oauth2.access_token and credential.oauth2.auth_uri:
            config.exchanged_auth_credential = credential
            return None
        return credential

    async def get_auth_credential(self, context: Any) -> AuthCredential | None:
        """The ready credential, or None when the client must be asked (see the module)."""
        if isinstance(self._auth_config.auth_scheme, CustomAuthScheme):
            return await self._from_provider(context)
        async with self._lock(context):
            await self._validate_credential()
            raw = self._auth_config.raw_auth_credential
            if raw is not None and raw.auth_type in (AuthCredentialTypes.API_KEY, AuthCredentialTypes.HTTP):
                return raw.model_copy(deep=True)
            store = self._store(context)
            key = self._auth_config.credential_key or ""
            service_account = raw is not None and raw.auth_type == AuthCredentialTypes.SERVICE_ACCOUNT
            credential = None
            if not service_account:
                credential = store.get_credential(self._auth_config.auth_scheme, raw)
                if credential is not None and _unredeemed(credential):
                    credential = None
            answered = False
            if credential is None:
                credential = context.get_auth_response(self._auth_config)
                answered = True
            if credential is None:
                if raw is None or grant_of(self._auth_config.auth_scheme) != CLIENT_CREDENTIALS:
                    return None
                credential = raw.model_copy(deep=True)
            credential, exchanged = await self._exchange_credential(credential)
            refreshed = False
            if not exchanged:
                credential, refreshed = await self._refresh_credential(credential)
            if _unredeemed(credential):
                _log.warning("Discarding the credential for auth scheme %s: its authorization code was never "
                             "exchanged for an access token. The user will be asked to authorize again.",
                             type(self._auth_config.auth_scheme).__name__)
                return None
            if (answered or exchanged or refreshed) and not service_account:
                store.store_credential(key, credential)
            return credential

    def _with_client(self, credential: AuthCredential) -> AuthCredential:
        """A copy of an OAuth2 ``credential`` with the config's client id and secret where
        it has none (the client's answer comes back without the secret)."""
        raw = self._auth_config.raw_auth_credential
        if credential.oauth2 is None or raw is None or raw.oauth2 is None:
            return credential
        copy = credential.model_copy(deep=True)
        assert copy.oauth2 is not None
        copy.oauth2.client_id = copy.oauth2.client_id or raw.oauth2.client_id
        copy.oauth2.client_secret = copy.oauth2.client_secret or raw.oauth2.client_secret
        return copy

    async def _exchange_credential(self, credential: AuthCredential) -> tuple[AuthCredential, bool]:
        """Step 6: the registered exchanger's result (the credential given back when it
        did not exchange)."""
        exchanger = self._exchanger_registry.get_exchanger(credential.auth_type)
        if exchanger is None:
            return credential, False
        if isinstance(exchanger, BaseAuthCredentialExchanger):  # synchronous (google-auth blocks): a thread
            exchanged = await asyncio.to_thread(exchanger.exchange_credential, self._auth_config.auth_scheme,
                                                credential)
            return (as_credential(exchanged) or credential), exchanged is not None
        working = self._with_client(credential) if credential.auth_type in _OAUTH_TYPES else credential
        result = await exchanger.exchange(working, self._auth_config.auth_scheme)
        if result.was_exchanged:
            return as_credential(result.credential) or result.credential, True
        return (credential if result.credential is working else result.credential), False

    async def _refresh_credential(self, credential: AuthCredential) -> tuple[AuthCredential, bool]:
        """Step 7: the registered refresher's result when it says a refresh is needed."""
        refresher = self._refresher_registry.get_refresher(credential.auth_type)
        if refresher is None:
            return credential, False
        scheme = self._auth_config.auth_scheme
        if not await refresher.is_refresh_needed(credential, scheme):
            return credential, False
        working = self._with_client(credential) if credential.auth_type in _OAUTH_TYPES else credential
        refreshed = await refresher.refresh(working, scheme)
        return as_credential(refreshed) or refreshed, True

    async def _validate_credential(self) -> None:
        """Step 1 (see the module)."""
        config = self._auth_config
        raw = config.raw_auth_credential
        if raw is None and config.auth_scheme.type_ in (SecuritySchemeType.oauth2, SecuritySchemeType.openIdConnect):
            raise ValueError(f"raw_auth_credential is required for auth_scheme type {config.auth_scheme.type_}")
        if raw is not None and raw.auth_type in _OAUTH_TYPES and raw.oauth2 is None:
            raise ValueError(f"auth_config.raw_credential.oauth2 required for credential type {raw.auth_type}")
        if self._missing_oauth_info():
            await self._populate_auth_scheme()

    def _missing_oauth_info(self) -> bool:
        """Whether the OAuth2 scheme has a flow with an empty URL it needs."""
        scheme = self._auth_config.auth_scheme
        if not isinstance(scheme, OAuth2):
            return False
        flows = scheme.flows
        return bool((flows.implicit and not flows.implicit.authorizationUrl)
                    or (flows.password and not flows.password.tokenUrl)
                    or (flows.clientCredentials and not flows.clientCredentials.tokenUrl)
                    or (flows.authorizationCode and not (flows.authorizationCode.authorizationUrl
                                                         and flows.authorizationCode.tokenUrl)))

    async def _populate_auth_scheme(self) -> None:
        """Fill the scheme's empty flow URLs from its issuer's metadata; raises
        :class:`OAuth2DiscoveryError` when there is no issuer or no usable metadata."""
        message = "OAuth scheme info is missing, and auto-discovery has failed to fill them in."
        scheme = self._auth_config.auth_scheme
        issuer_url = _issuer_url(scheme)
        if not isinstance(scheme, OAuth2) or issuer_url is None:
            _log.warning("No issuer_url was provided for auto-discovery.")
            raise OAuth2DiscoveryError(message, reasons=["the scheme has no issuer_url"])
        metadata, reasons = await self._discovery_manager._discover_auth_server(issuer_url)
        if metadata is None:
            _log.warning("Auto-discovery has failed to populate OAuth scheme info.")
            raise OAuth2DiscoveryError(message, issuer_url=issuer_url, reasons=reasons or ["no metadata found"])
        flows = scheme.flows
        if flows.implicit and not flows.implicit.authorizationUrl:
            flows.implicit.authorizationUrl = metadata.authorization_endpoint
        if flows.password and not flows.password.tokenUrl:
            flows.password.tokenUrl = metadata.token_endpoint
        if flows.clientCredentials and not flows.clientCredentials.tokenUrl:
            flows.clientCredentials.tokenUrl = metadata.token_endpoint
        if flows.authorizationCode and not flows.authorizationCode.authorizationUrl:
            flows.authorizationCode.authorizationUrl = metadata.authorization_endpoint
        if flows.authorizationCode and not flows.authorizationCode.tokenUrl:
            flows.authorizationCode.tokenUrl = metadata.token_endpoint
