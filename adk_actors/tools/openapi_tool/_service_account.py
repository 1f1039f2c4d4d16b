"""google-adk's ``ServiceAccountCredentialExchanger``: a Google service account turned
into the bearer token a request carries, by google-auth (the ``vertexai`` extra).

:meth:`ServiceAccountCredentialExchanger.exchange_credential`, in order:

1. no credential, or one without ``service_account``, is an
   :class:`~._exchanger_base.AuthCredentialMissingError`; google-auth not installed is
   a ``ModuleNotFoundError`` naming the extra (``pip install 'adk-actors[vertexai]'``);
2. a token this process already got for the same account (key id, e-mail, token URL,
   key, scopes, ID token or not, audience: the process-wide cache, as google-adk's)
   is given again while the exchanger's clock is more than ``REFRESH_MARGIN`` (300 s,
   google-adk's) before its expiry; else a new one is fetched (one fetch at a time per
   account; a second caller waiting gets the first one's token);
3. an access token (the default): with a key, its ``scopes`` are needed (none is an
   ``AuthCredentialMissingError``, google-adk's rule); google-auth signs a JWT
   assertion with the key and posts it to the key's ``token_uri`` (the JWT-bearer
   grant); with ``use_default_credential``, the application default credentials
   (``google.auth.default``, scopes default to cloud-platform) are refreshed, and their
   quota project (else their project) goes in ``x-goog-user-project`` among the
   credential's additional headers;
4. an ID token (``use_id_token``) for ``audience``: the same assertion asking for an ID
   token (the key's ``IDTokenCredentials``), or ``google.oauth2.id_token.fetch_id_token``
   with the default credentials; its expiry is the token's ``exp``;
5. the token comes back as an HTTP bearer credential (its secrets registered with
   :mod:`adk_actors._secrets`) and is cached with its expiry (one hour when google-auth
   gives none).

A refusal by the token endpoint, a key google-auth cannot read or an endpoint it
cannot reach (google-auth's ``GoogleAuthError`` or ``ValueError``) is an
``AuthCredentialMissingError`` saying which token could not be had and google-auth's
reason, with every known secret (the private key, its id, tokens) blanked out; the
original exception is not chained, so no traceback carries more. The requests are
google-auth's (blocking: callers on an event loop run this in a thread).
"""

from __future__ import annotations

import calendar
import hashlib
import threading
import time
from collections.abc import Callable
from typing import Any

from fastapi.openapi.models import SecurityBase

from ..._secrets import redact
from ._auth import (
    AuthCredential,
    AuthCredentialTypes,
    HttpAuth,
    HttpCredentials,
    ServiceAccount,
    as_credential,
)
from ._exchanger_base import AuthCredentialMissingError, BaseAuthCredentialExchanger

try:  # google-auth is optional: the ``vertexai`` extra
    import google.auth
    import google.auth.exceptions
    import google.auth.jwt
    import google.auth.transport.requests
    import google.oauth2.id_token
    import google.oauth2.service_account
except ImportError:
    HAS_GOOGLE_AUTH = False
else:
    HAS_GOOGLE_AUTH = True

__all__ = ["EXTRA", "REFRESH_MARGIN", "ServiceAccountCredentialExchanger"]

#: how to install what a service-account exchange needs
EXTRA = "pip install 'adk-actors[vertexai]'"
#: a cached token is fetched again this many seconds before it expires (google-adk's)
REFRESH_MARGIN = 300
_DEFAULT_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]
_FALLBACK_LIFETIME = 3600

_Key = tuple[Any, ...]
_cache: dict[_Key, tuple[AuthCredential, float]] = {}
_fetching: dict[_Key, threading.Lock] = {}
_lock = threading.Lock()


def _reset_cache() -> None:
    """Forget every cached token (google-adk's test hook)."""
    with _lock:
        _cache.clear()


def _cache_key(config: ServiceAccount) -> _Key:
    """The account and what is asked of it; the key itself only as a digest."""
    asked = (tuple(config.scopes or ()), bool(config.use_id_token), config.audience)
    if config.use_default_credential:
        return (True, *asked)
    key = config.service_account_credential
    private_key = getattr(key, "private_key", None) or ""
    return (False, getattr(key, "private_key_id", None), getattr(key, "client_email", None),
            getattr(key, "token_uri", None), hashlib.sha256(private_key.encode()).hexdigest(), *asked)


def _expiry(credentials: Any, now: float) -> float:
    """google-auth's expiry (a naive UTC datetime) as epoch seconds; an hour from now
    when it has none."""
    expiry = getattr(credentials, "expiry", None)
    try:
        return float(calendar.timegm(expiry.utctimetuple())) if expiry is not None else now + _FALLBACK_LIFETIME
    except (AttributeError, TypeError, ValueError):
        return now + _FALLBACK_LIFETIME


def _bearer(token: str, quota_project: str | None = None) -> AuthCredential:
    headers = {"x-goog-user-project": quota_project} if quota_project else None
    credential = as_credential(AuthCredential(auth_type=AuthCredentialTypes.HTTP, http=HttpAuth(
        scheme="bearer", credentials=HttpCredentials(token=token), additional_headers=headers)))
    assert credential is not None
    return credential


class ServiceAccountCredentialExchanger(BaseAuthCredentialExchanger):
    """A service account as an HTTP bearer credential (see the module). ``clock``
    decides when a cached token is too close to its expiry; ``request`` is the
    google-auth transport (default: a new ``google.auth.transport.requests.Request``
    per fetch)."""

    def __init__(self, *, clock: Callable[[], float] = time.time, request: Any = None) -> None:
        self.clock = clock
        self.request = request

    def exchange_credential(self, auth_scheme: SecurityBase,
                            auth_credential: AuthCredential | None = None) -> AuthCredential:
        """The bearer credential for ``auth_credential``'s service account (see the module)."""
        if auth_credential is None or auth_credential.service_account is None:
            raise AuthCredentialMissingError(
                "A service-account credential needs its service_account: the account's key, or "
                "use_default_credential=True for the application default credentials (as on Cloud Run).")
        if not HAS_GOOGLE_AUTH:
            raise ModuleNotFoundError(f"A service-account credential needs google-auth (the vertexai extra): {EXTRA}",
                                      name="google.auth")
        config = auth_credential.service_account
        if not config.use_id_token and not config.use_default_credential and not config.scopes:
            raise AuthCredentialMissingError(
                "A service account's key needs scopes to get an access token (or use_id_token with an audience).")
        key = _cache_key(config)
        cached = self._cached(key)
        if cached is not None:
            return cached
        with _lock:
            fetching = _fetching.setdefault(key, threading.Lock())
        with fetching:
            cached = self._cached(key)  # another caller may have fetched it meanwhile
            if cached is not None:
                return cached
            credential, expires_at = self._fetch(config)
            with _lock:
                _cache[key] = (credential, expires_at)
            return credential.model_copy(deep=True)

    def _cached(self, key: _Key) -> AuthCredential | None:
        with _lock:
            found = _cache.get(key)
        if found is None or self.clock() >= found[1] - REFRESH_MARGIN:
            return None
        return found[0].model_copy(deep=True)

    def _transport(self) -> Any:
        return self.request if self.request is not None else google.auth.transport.requests.Request()

    def _fetch(self, config: ServiceAccount) -> tuple[AuthCredential, float]:
        """A new token and its expiry (epoch seconds); google-auth's failures as an
        :class:`AuthCredentialMissingError` (see the module)."""
        what = "an ID token" if config.use_id_token else "an access token"
        try:
            if config.use_id_token:
                return self._id_token(config)
            return self._access_token(config)
        except (google.auth.exceptions.GoogleAuthError, ValueError) as exc:
            reason = redact(f"{type(exc).__name__}: {exc}")
        raise AuthCredentialMissingError(f"Could not exchange the service account for {what}: {reason}")

    def _info(self, config: ServiceAccount) -> dict[str, Any]:
        key = config.service_account_credential
        assert key is not None  # ServiceAccount's validator: a key unless the default credentials
        return key.model_dump(exclude_none=True)

    def _access_token(self, config: ServiceAccount) -> tuple[AuthCredential, float]:
        quota: str | None = None
        credentials: Any
        if config.use_default_credential:
            credentials, project = google.auth.default(scopes=config.scopes or _DEFAULT_SCOPES)
            quota = getattr(credentials, "quota_project_id", None) or project
        else:
            credentials = google.oauth2.service_account.Credentials.from_service_account_info(
                self._info(config), scopes=config.scopes)  # type: ignore[no-untyped-call]
        credentials.refresh(self._transport())
        return _bearer(str(credentials.token), quota), _expiry(credentials, self.clock())

    def _id_token(self, config: ServiceAccount) -> tuple[AuthCredential, float]:
        assert config.audience  # ServiceAccount's validator
        if config.use_default_credential:
            token = str(google.oauth2.id_token.fetch_id_token(  # type: ignore[no-untyped-call]
                self._transport(), config.audience))
            try:
                exp = google.auth.jwt.decode(token, verify=False).get("exp")  # type: ignore[no-untyped-call]
            except ValueError:
                exp = None
            return _bearer(token), float(exp) if exp else self.clock() + _FALLBACK_LIFETIME
        credentials = google.oauth2.service_account.IDTokenCredentials.from_service_account_info(
            self._info(config), target_audience=config.audience)  # type: ignore[no-untyped-call]
        credentials.refresh(self._transport())
        return _bearer(str(credentials.token)), _expiry(credentials, self.clock())
