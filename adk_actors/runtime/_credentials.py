"""Credentials per (app, user, key): API keys and OAuth2 tokens, never shown.

* ``Credential`` keeps secrets in ``SecretStr``: they appear in no repr, log line,
  event or exception.
* :class:`CredentialStore`: a SQLite file created with mode 0600, or, with
  ``[store] url`` set, the sessions' PostgreSQL database (every host of a cluster
  finds a user's credentials); with ``ADK_ACTORS_CREDENTIAL_KEY`` set (a Fernet key;
  the optional ``crypto`` extra), secrets are encrypted at rest, and a host on a
  shared database says at start when it is not set.
* :class:`CredentialActor`: the store behind ``PutCredential`` / ``GetCredential`` /
  ``DeleteCredential``; data on disk, so a restart (kill -9 included) loses nothing.
* :func:`fresh_token`: an OAuth2 token that expires within ``REFRESH_MARGIN`` seconds
  is refreshed (httpx, ``grant_type=refresh_token``) before use; a failed refresh is
  :class:`AuthRequired`. The actor refreshes before it answers ``GetCredential``
  and answers None when it cannot, which the tool turns into a new auth request.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr

from supervision import BadRequest, CallerRef, GenServer

from .._exceptions import AdkError
from .._validate import check_message
from ..store import Database, connection_name
from ._service_calls import AuthRequired, Credential, DeleteCredential, GetCredential, PutCredential

__all__ = ["CredentialActor", "CredentialStore", "fresh_token"]

REFRESH_MARGIN = 60.0
KEY_VARIABLE = "ADK_ACTORS_CREDENTIAL_KEY"


_MIGRATIONS = [
    (1, """CREATE TABLE IF NOT EXISTS credentials (app TEXT, "user" TEXT, key TEXT, data BLOB, updated REAL,
            PRIMARY KEY (app, "user", key))"""),
]


class CredentialStore:
    def __init__(self, location: str | Path, *, key: str | None = None, application_name: str = "") -> None:
        """Open the credentials at ``location`` (a SQLite file, or a ``postgresql://``
        URL whose connections are called ``application_name``), encrypting with ``key``
        (default: ``ADK_ACTORS_CREDENTIAL_KEY``)."""
        self._fernet: Any = None
        key = key if key is not None else os.environ.get(KEY_VARIABLE)
        if key:
            try:
                from cryptography.fernet import Fernet
            except ImportError as exc:  # pragma: no cover - depends on the install
                raise AdkError(f"{KEY_VARIABLE} is set but `cryptography` is not installed "
                               "(pip install 'adk-actors[crypto]')") from exc
            self._fernet = Fernet(key.encode())
        self._db = Database(str(location), application_name=application_name)
        self._db.migrate("credentials", _MIGRATIONS)

    @property
    def encrypted(self) -> bool:
        return self._fernet is not None

    @property
    def shared(self) -> bool:
        """Are the rows in a database other hosts share (PostgreSQL)?"""
        return self._db.postgres

    def close(self) -> None:
        self._db.close()

    def put(self, app: str, user: str, key: str, credential: Credential) -> None:
        data = credential.secrets_json().encode()
        if self._fernet is not None:
            data = self._fernet.encrypt(data)
        self._db.run('INSERT INTO credentials VALUES (?, ?, ?, ?, ?) ON CONFLICT (app, "user", key) '
                     "DO UPDATE SET data=excluded.data, updated=excluded.updated", (app, user, key, data, time.time()))

    def get(self, app: str, user: str, key: str) -> Credential | None:
        rows = self._db.run('SELECT data FROM credentials WHERE app=? AND "user"=? AND key=?', (app, user, key)).rows
        if not rows:
            return None
        data = bytes(rows[0][0])
        if self._fernet is not None:
            data = self._fernet.decrypt(data)
        return Credential.model_validate_json(data)

    def delete(self, app: str, user: str, key: str) -> bool:
        return self._db.run('DELETE FROM credentials WHERE app=? AND "user"=? AND key=?', (app, user, key)).rowcount > 0


class CredentialActor(GenServer):
    """The credential service. ``GetCredential`` answers a credential ready to use: an
    OAuth2 token about to expire is refreshed here, and the refreshed one stored, so
    every run and tool gets the same fresh token; one that cannot be refreshed is
    answered as None (the tool then asks the user again)."""

    check_request = staticmethod(check_message)  # malformed requests: invalid_request, never a crash

    def init(self, args: dict[str, Any]) -> None:
        self.store = CredentialStore(args["path"], application_name=connection_name(args.get("host", ""), "credentials"))
        if self.store.shared and not self.store.encrypted:
            self.log.warning("credentials are kept in the shared PostgreSQL database without encryption: set %s "
                             "(a Fernet key) on every host", KEY_VARIABLE)

    def terminate(self, reason: Any) -> None:
        self.store.close()

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if isinstance(request, PutCredential):
            if not isinstance(request.credential, Credential):
                raise BadRequest("PutCredential needs a Credential")
            self.store.put(request.app_name, request.user_id, request.key, request.credential)
            return "stored"
        if isinstance(request, GetCredential):
            return self.usable(request.app_name, request.user_id, request.key)
        if isinstance(request, DeleteCredential):
            return self.store.delete(request.app_name, request.user_id, request.key)
        return super().handle_call(request, caller)

    def usable(self, app: str, user: str, key: str) -> Credential | None:
        """The stored credential, refreshed first when it is about to expire (see
        :func:`fresh_token`); None when there is none or it cannot be refreshed."""
        credential = self.store.get(app, user, key)
        if credential is None:
            return None
        try:
            fresh = fresh_token(credential)
        except AuthRequired:
            return None
        if fresh is not credential:
            self.store.put(app, user, key, fresh)
        return fresh


def fresh_token(credential: Credential, *, now: float | None = None,
                transport: httpx.BaseTransport | None = None) -> Credential:
    """The credential itself, or (for an OAuth2 token about to expire) a refreshed one.

    Raises :class:`AuthRequired` when it cannot be refreshed (no refresh token, or the
    token endpoint refuses).
    """
    now = time.time() if now is None else now
    if credential.kind != "oauth2" or credential.expires_at is None or credential.expires_at - now > REFRESH_MARGIN:
        return credential
    if credential.refresh_token is None or not credential.token_url:
        raise AuthRequired("the access token expired and there is no refresh token")
    form = {"grant_type": "refresh_token", "refresh_token": credential.refresh_token.get_secret_value()}
    if credential.client_id:
        form["client_id"] = credential.client_id
    if credential.client_secret is not None:
        form["client_secret"] = credential.client_secret.get_secret_value()
    try:
        with httpx.Client(timeout=10.0, transport=transport) as client:
            response = client.post(credential.token_url, data=form)
    except httpx.HTTPError as exc:
        raise AuthRequired(f"the token endpoint could not be reached: {type(exc).__name__}") from None
    if response.status_code != 200:
        raise AuthRequired(f"the token endpoint refused the refresh (HTTP {response.status_code})")
    body = response.json()
    return credential.model_copy(update={
        "access_token": SecretStr(body["access_token"]),
        "refresh_token": SecretStr(body["refresh_token"]) if body.get("refresh_token") else credential.refresh_token,
        "expires_at": now + float(body.get("expires_in", 3600)),
    })
