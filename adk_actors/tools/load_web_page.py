"""google-adk's ``load_web_page`` tool function: fetch a URL and return the text on
the page, with httpx and the standard library's HTML parser.

A model chooses the URL, so the fetch refuses what a model must not reach from the
host (server-side request forgery), as google-adk's does, by the rule every tool here
that opens a model's URL shares (``_public_address``): names of this machine and of
internal infrastructure (``localhost``, ``metadata.goog``, ``*.internal``, ``*.local``
...), and every address that is not global (loopback, private, link-local with its
cloud metadata service, IPv6 forms that embed such an IPv4 address). A name
is resolved once and the connection made to the vetted address (no second lookup to
rebind). Through an HTTP proxy (httpx reads the environment's), which resolves names
itself, a name that resolves here to a refused address is refused and one that does
not resolve here is left to the proxy; an address literal is checked as it is.
"""

from __future__ import annotations

import codecs
import re
import time
import urllib.request
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from ._public_address import (
    Address,
    UnresolvableHost,
    address_literal,
    not_public,
    refused_name,
    resolve,
)

__all__ = ["load_web_page"]

_TIMEOUT_SECONDS = 30.0
_BODY_SECONDS = 60.0
_MAX_BYTES = 10 * 1024 * 1024
#: a ``<meta charset=...>`` or ``<meta http-equiv=... content="...; charset=...">``
_META_CHARSET = re.compile(rb"<meta[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9._:-]+)", re.IGNORECASE)
#: byte order marks, longest first
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
#: elements whose text is not the page's (code, styles, templates)
_HIDDEN = frozenset({"script", "style", "template"})


class _PageText(HTMLParser):
    """Collects the page's text nodes (each stripped, empty ones dropped), leaving out
    comments and what is inside script, style and template elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []
        self._pending: list[str] = []
        self._hidden = 0

    def _flush(self) -> None:
        text = "".join(self._pending).strip()
        self._pending.clear()
        if text:
            self.texts.append(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._flush()
        if tag in _HIDDEN:
            self._hidden += 1

    def handle_endtag(self, tag: str) -> None:
        self._flush()
        if tag in _HIDDEN and self._hidden:
            self._hidden -= 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._flush()

    def handle_comment(self, data: str) -> None:
        self._flush()

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self._pending.append(data)

    def close(self) -> None:
        super().close()
        self._flush()


def _page_text(html: str) -> str:
    """The page's text nodes, one a line, keeping only lines of more than three words."""
    parser = _PageText()
    parser.feed(html)
    parser.close()
    lines = "\n".join(parser.texts).splitlines()
    return "\n".join(line for line in lines if len(line.split()) > 3)


def _resolved(host: str, port: int) -> list[Address]:
    """``host``'s addresses (ValueError: it has none)."""
    try:
        return resolve(host, port)
    except UnresolvableHost as exc:
        raise ValueError(f"Unresolvable host: {host}") from exc


def _vetted(url: str) -> tuple[str, dict[str, str], dict[str, Any]]:
    """The URL to request, its headers and httpx extensions: ``url`` itself through a
    proxy, else ``url`` with its host replaced by a vetted address (its ``Host`` header
    and TLS server name kept). ValueError: a refused or unusable target (see the module)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").rstrip(".").lower()
    if parts.scheme not in ("http", "https") or not host:
        raise ValueError(f"Unsupported url: {url}")
    if refused_name(host):
        raise ValueError(f"Blocked host: {host}")
    literal = address_literal(host)
    if literal is not None and not_public(literal):
        raise ValueError(f"Blocked host: {host}")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if urllib.request.getproxies().get(parts.scheme) and not urllib.request.proxy_bypass(host):
        if literal is None:
            try:
                addresses = _resolved(host, port)
            except ValueError:
                addresses = []  # not resolved here: the proxy's to resolve
            if any(not_public(a) for a in addresses):
                raise ValueError(f"Blocked host: {host}")
        return url, {}, {}
    addresses = [literal] if literal is not None else _resolved(host, port)
    if any(not_public(a) for a in addresses):
        raise ValueError(f"Blocked host: {host}")
    pinned = f"[{addresses[0]}]" if addresses[0].version == 6 else str(addresses[0])
    netloc = f"{pinned}:{parts.port}" if parts.port else pinned
    headers = {"Host": parts.netloc.rsplit("@", 1)[-1]}
    return urlunsplit(parts._replace(netloc=netloc)), headers, {"sni_hostname": host}


def _fetch(url: str) -> str:
    """The body of ``url`` as text, fetched from a vetted target (``_vetted``). Raises
    ``ValueError`` on a refused target, a status other than 200 (a redirect is not
    followed) or a body over 10 MiB or slower than 60 s, and ``httpx.HTTPError`` when
    the request fails (30 s timeout)."""
    target, headers, extensions = _vetted(url)
    with httpx.Client(follow_redirects=False, timeout=_TIMEOUT_SECONDS) as client, \
            client.stream("GET", target, headers=headers, extensions=extensions) as response:
        if response.status_code != 200:
            raise ValueError(f"Unexpected response status: {response.status_code}")
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > _MAX_BYTES:
            raise ValueError(f"Response body is too large: {url}")
        deadline = time.monotonic() + _BODY_SECONDS
        body = bytearray()
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) > _MAX_BYTES:
                raise ValueError(f"Response body is too large: {url}")
            if time.monotonic() > deadline:
                raise ValueError(f"Timed out reading response body: {url}")
        return body.decode(_page_encoding(response.charset_encoding, bytes(body)), errors="replace")


def _page_encoding(declared: str | None, body: bytes) -> str:
    """The encoding a page is read in, as a browser picks it, in order: its byte order
    mark, the charset its Content-Type names, a ``<meta>`` charset in its first 1,024
    bytes, else UTF-8. A name Python does not know counts as none."""
    found = [name for mark, name in _BOMS if body.startswith(mark)][:1]
    found += [declared] if declared else []
    meta = _META_CHARSET.search(body[:1024])
    if meta is not None:
        found.append(meta.group(1).decode("ascii"))
    for name in found:
        try:
            return codecs.lookup(name).name
        except LookupError:
            continue
    return "utf-8"


def load_web_page(url: str) -> str:
    """Fetch the page at ``url`` and return the text on it.

    In order: refuse a target a model must not reach from the host (see the module);
    GET ``url`` (no redirect followed, 30 s timeout, at most 10 MiB read within 60 s);
    when it was refused, that fails or the status is not 200, return
    ``Failed to fetch url: <url>``. Otherwise parse the page as HTML and return its
    text nodes (comments, scripts, styles and templates left out), one a line, keeping
    only the lines of more than three words.

    Args:
        url: The url to browse.
    """
    try:
        html = _fetch(url)
    except (ValueError, LookupError, httpx.HTTPError, httpx.InvalidURL):
        return f"Failed to fetch url: {url}"
    return _page_text(html)
