"""Credentials per (app, user, key): API keys and OAuth2 tokens, never shown.

* ``Credential`` keeps secrets in ``SecretStr``: they appear in no repr, log line,
  event or exception.
* :class:`CredentialStore`: SQLite, the file created with mode 0600; with
  ``ADK_ACTORS_CREDENTIAL_KEY`` set (a Fernet key; the optional ``crypto`` extra),
  secrets are encrypted at rest.
* :class:`CredentialActor`: the store behind ``PutCredential`` / ``GetCredential`` /
  ``DeleteCredential``; data on disk, so a restart (kill -9 included) loses nothing.
* :func:`fresh_token`: an OAuth2 token that expires within ``REFRESH_MARGIN`` seconds
  is refreshed (httpx, ``grant_type=refresh_token``) before use; a failed refresh is
  :class:`AuthRequired`. The actor refreshes before it answers ``GetCredential``
  and answers None when it cannot, which the tool turns into a new auth request.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr

from supervision import BadRequest, CallerRef, GenServer

from .._exceptions import AdkError
from .._validate import check_message
from ..store import private_file
from ._service_calls import AuthRequired, Credential, DeleteCredential, GetCredential, PutCredential

__all__ = ["CredentialActor", "CredentialStore", "fresh_token"]

REFRESH_MARGIN = 60.0
KEY_VARIABLE = "ADK_ACTORS_CREDENTIAL_KEY"


class CredentialStore:
    def __init__(self, path: str | Path, *, key: str | None = None) -> None:
        path = Path(path)
        private_file(path)
        self._fernet: Any = None
        key = key if key is not None else os.environ.get(KEY_VARIABLE)
        if key:
            try:
                from cryptography.fernet import Fernet
            except ImportError as exc:  # pragma: no cover - depends on the install
                raise AdkError(f"{KEY_VARIABLE} is set but `cryptography` is not installed "
                               "(pip install 'adk-actors[crypto]')") from exc
            self._fernet = Fernet(key.encode())
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), timeout=30.0, isolation_level=None, check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS credentials (app TEXT, user TEXT, key TEXT, data BLOB, "
                         "updated REAL, PRIMARY KEY (app, user, key))")

    def put(self, app: str, user: str, key: str, credential: Credential) -> None:
        data = credential.secrets_json().encode()
        if self._fernet is not None:
            data = self._fernet.encrypt(data)
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO credentials VALUES (?, ?, ?, ?, ?)",
                             (app, user, key, data, time.time()))

    def get(self, app: str, user: str, key: str) -> Credential | None:
        with self._lock:
            row = self._db.execute("SELECT data FROM credentials WHERE app=? AND user=? AND key=?",
                                   (app, user, key)).fetchone()
        if row is None:
            return None
        data = bytes(row[0])
        if self._fernet is not None:
            data = self._fernet.decrypt(data)
        return Credential.model_validate_json(data)

    def delete(self, app: str, user: str, key: str) -> bool:
        with self._lock:
            return self._db.execute("DELETE FROM credentials WHERE app=? AND user=? AND key=?",
                                    (app, user, key)).rowcount > 0


class CredentialActor(GenServer):
    """The credential service. ``GetCredential`` answers a credential ready to use: an
    OAuth2 token about to expire is refreshed here, and the refreshed one stored, so
    every run and tool gets the same fresh token; one that cannot be refreshed is
    answered as None (the tool then asks the user again)."""

    check_request = staticmethod(check_message)  # malformed requests: invalid_request, never a crash

    def init(self, args: dict[str, Any]) -> None:
        self.store = CredentialStore(args["path"])

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
