"""google-adk's OAuth2 metadata discovery: an authorization server's metadata (RFC 8414,
or OpenID Connect Discovery 1.0) from its issuer URL, and a protected resource's
metadata (RFC 9728) from the resource URL. ``CredentialManager`` uses the first to fill
the empty endpoints of an ``ExtendedOAuth2`` scheme.

:meth:`OAuth2DiscoveryManager.discover_auth_server_metadata`, in order: for an issuer
``https://host/path`` the documents tried are
``/.well-known/oauth-authorization-server/path``, ``/.well-known/openid-configuration/path``
and ``/path/.well-known/openid-configuration`` (without a path: the first two, at the
root); each is fetched with ``GET`` (httpx, 5 s, no redirect followed); the first that
answers 2xx with a JSON object having ``issuer``, ``authorization_endpoint`` and
``token_endpoint`` strings, and whose ``issuer`` equals the issuer URL (a trailing
``/`` aside: the RFC's defence against mix-up attacks), is returned as
:class:`AuthorizationServerMetadata`. A document that cannot be fetched, is not 2xx,
not JSON, misses a field, or names another issuer is passed over (logged at debug;
the mismatch as a warning); when none fits, None. What went wrong with each is kept,
so that ``CredentialManager`` raises an :class:`OAuth2DiscoveryError` naming it.

:meth:`OAuth2DiscoveryManager.discover_resource_metadata`: ``/.well-known/oauth-protected-resource``
(with the resource URL's path appended), returned as :class:`ProtectedResourceMetadata`
when its ``resource`` equals the resource URL (a trailing ``/`` aside), else None.

Metadata documents hold no secret; nothing here sends one.
"""

from __future__ import annotations

import json
import logging
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, ValidationError

__all__ = ["AuthorizationServerMetadata", "OAuth2DiscoveryError", "OAuth2DiscoveryManager",
           "ProtectedResourceMetadata"]

_log = logging.getLogger("adk_actors.auth")
_TIMEOUT = 5.0


class AuthorizationServerMetadata(BaseModel):
    """An authorization server's metadata (RFC 8414), the fields google-adk reads."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    scopes_supported: list[str] | None = None
    registration_endpoint: str | None = None


class ProtectedResourceMetadata(BaseModel):
    """A protected resource's metadata (RFC 9728), the fields google-adk reads."""

    resource: str
    authorization_servers: list[str] = []


class OAuth2DiscoveryError(ValueError):
    """An OAuth2 scheme's missing endpoints could not be discovered. A ``ValueError``
    with google-adk's words first (so code catching google-adk's ``ValueError`` catches
    it), then the issuer URL and what each metadata document tried did wrong
    (``reasons``)."""

    def __init__(self, message: str, *, issuer_url: str | None = None, reasons: list[str] | None = None) -> None:
        self.issuer_url = issuer_url
        self.reasons = list(reasons or [])
        detail = f" Issuer {issuer_url!r}: " + "; ".join(self.reasons) if self.reasons else ""
        super().__init__(message + detail)


def _split(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        raise ValueError(f"not an absolute URL: {url!r}")
    return f"{parts.scheme}://{parts.netloc}", parts.path


def _why(exc: ValidationError) -> str:
    """A validation error's fields and messages (never the values)."""
    return ", ".join(f"{'.'.join(str(s) for s in e['loc']) or 'document'}: {e['msg']}" for e in exc.errors())


class OAuth2DiscoveryManager:
    """OAuth2 metadata discovery (see the module)."""

    async def discover_auth_server_metadata(self, issuer_url: str) -> AuthorizationServerMetadata | None:
        """The issuer's metadata, or None (see the module)."""
        metadata, _ = await self._discover_auth_server(issuer_url)
        return metadata

    async def _discover_auth_server(self, issuer_url: str) -> tuple[AuthorizationServerMetadata | None, list[str]]:
        """The issuer's metadata, or None and why each document was passed over."""
        try:
            base, path = _split(issuer_url)
        except ValueError as exc:
            _log.warning("Failed to parse issuer_url %s: %s", issuer_url, exc)
            return None, [str(exc)]
        if path and path != "/":
            endpoints = [f"{base}/.well-known/oauth-authorization-server{path}",
                         f"{base}/.well-known/openid-configuration{path}",
                         f"{base}{path}/.well-known/openid-configuration"]
        else:
            endpoints = [f"{base}/.well-known/oauth-authorization-server", f"{base}/.well-known/openid-configuration"]
        reasons: list[str] = []
        async with httpx.AsyncClient(timeout=_TIMEOUT) as client:
            for endpoint in endpoints:
                try:
                    response = await client.get(endpoint)
                    response.raise_for_status()
                    metadata = AuthorizationServerMetadata.model_validate(response.json())
                except httpx.HTTPStatusError as exc:
                    reasons.append(f"{endpoint}: HTTP {exc.response.status_code}")
                    _log.debug("Failed to fetch metadata from %s: HTTP %d", endpoint, exc.response.status_code)
                    continue
                except httpx.HTTPError as exc:
                    reasons.append(f"{endpoint}: {type(exc).__name__}")
                    _log.debug("Failed to fetch metadata from %s: %s", endpoint, type(exc).__name__)
                    continue
                except json.JSONDecodeError:
                    reasons.append(f"{endpoint}: not JSON")
                    _log.debug("Failed to parse metadata from %s: not JSON", endpoint)
                    continue
                except ValidationError as exc:
                    reasons.append(f"{endpoint}: not authorization server metadata ({_why(exc)})")
                    _log.debug("Failed to parse metadata from %s: %s", endpoint, _why(exc))
                    continue
                if metadata.issuer.rstrip("/") == issuer_url.rstrip("/"):
                    return metadata, reasons
                reasons.append(f"{endpoint}: its issuer {metadata.issuer!r} is not {issuer_url!r}")
                _log.warning("Issuer in metadata %s does not match issuer_url %s", metadata.issuer, issuer_url)
        return None, reasons

    async def discover_resource_metadata(self, resource_url: str) -> ProtectedResourceMetadata | None:
        """The resource's metadata, or None (see the module)."""
        try:
            base, path = _split(resource_url)
        except ValueError as exc:
            _log.warning("Failed to parse resource_url %s: %s", resource_url, exc)
            return None
        endpoint = f"{base}/.well-known/oauth-protected-resource" + (path if path and path != "/" else "")
        async with httpx.AsyncClient(timeout=_TIMEOUT) as client:
            try:
                response = await client.get(endpoint)
                response.raise_for_status()
                metadata = ProtectedResourceMetadata.model_validate(response.json())
            except httpx.HTTPError as exc:
                _log.debug("Failed to fetch metadata from %s: %s", endpoint, type(exc).__name__)
                return None
            except (json.JSONDecodeError, ValidationError) as exc:
                _log.debug("Failed to parse metadata from %s: %s", endpoint, type(exc).__name__)
                return None
        if metadata.resource.rstrip("/") == resource_url.rstrip("/"):
            return metadata
        _log.warning("Resource in metadata %s does not match resource_url %s", metadata.resource, resource_url)
        return None
