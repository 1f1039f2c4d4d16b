"""What every request passes before a route sees it (an ASGI middleware).

In order, for HTTP and WebSocket requests:

1. **Host guard** (DNS rebinding, as google-adk's on a loopback bind): bound to
   loopback, a request is refused, 403 ``Forbidden: host not allowed``, unless it has
   exactly one ``Host`` header naming this server: ``localhost``, a loopback IP literal
   (``127.0.0.1``, the address the server is bound to such as ``127.77.1.2`` when
   several hosts share a machine, ``[::1]``), with the port the server listens on or
   none; or a name the host is configured with (the host of ``[http] public_url`` or
   of an ``allow_origins`` entry, with any port: a proxy in front of it). A page whose
   DNS name was rebound to the loopback address sends its own name and is refused;
   ``127.0.0.1:80@evil.example``, ``[::1].evil.example`` or a bare ``::1`` never pass.
2. **Origin guard** (google-adk's): a request with an ``Origin`` that is neither the
   server's own origin nor one of ``allow_origins`` is refused, 403
   ``Forbidden: origin not allowed``; an ``allow_origins`` holding ``"*"`` lets every
   origin through (as google-adk's). Requests without ``Origin`` (curl, SDKs) pass.
3. **Authentication**, when tokens are configured: ``Authorization: Bearer <token>``
   is compared in constant time with every configured token; none or a wrong one is
   401. The token's user (``"*"``: an operator) becomes ``scope["state"]["principal"]``;
   without tokens everyone is an operator, but on a front door that does not listen
   on loopback (``get_fast_api_app``'s) only a caller on this machine is: any other
   acts for any user (``ANY_USER``) and is refused what only an operator may do. ``/health`` and the
   console's page and files need no token (the page asks for one).
4. **Body limit**: a declared ``Content-Length`` over ``max_body_bytes`` is 413 at
   once; otherwise the body is read here, and one that grows past the limit is 413
   before any route sees a byte of it (the route then reads the buffered body).
5. **Storable input**: every body is parsed as JSON once here, whatever its
   ``Content-Type`` says (none, ``application/JSON``, ``text/plain``: FastAPI or
   a2a-sdk read some of those as JSON too); one that is not JSON passes (its route
   says so). Text that cannot be encoded
   (a lone surrogate such as ``"\ud800"``, a valid JSON escape) or nesting deeper
   than the host's ``[limits] max_json_depth`` (counted from each top-level field:
   ``state``, ``stateDelta``, ``newMessage``, ``customMetadata`` ...) is a 422
   ``{"detail": ...}`` naming where, before any route sees it
   (``_validate.value_problem``, the rule the session partitions apply too), and so
   is a name field (``appName``, ``userId``, ``sessionId``, ``filename``) outside
   the name grammar (``_names``). A body too deeply nested for the JSON parser
   itself is refused the same way, and so are numbers that are not JSON (``NaN``,
   ``Infinity``: they would be kept as ``null``) and integers of more than
   ``MAX_INT_DIGITS`` digits (Python's limit: a route would answer 400).
6. **Limits of one request**: a top-level ``state`` or ``stateDelta`` over
   ``_validate.MAX_STATE_BYTES`` of JSON, or a ``newMessage`` of more than
   ``_validate.MAX_MESSAGE_PARTS`` parts, is a 413 ``{"detail": ...}`` naming the
   limit (``_validate.limit_problem``, which the partitions apply too).

A WebSocket refused by a guard is closed with code 1008 before it is accepted.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import urllib.parse
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi import HTTPException

from .._names import escaped, name_problem
from .._validate import limit_problem, value_problem
from ..config import HttpSection

__all__ = ["ANY_USER", "OPERATOR", "Guard", "acts_for_anyone", "require_operator"]

OPERATOR = "*"
#: The principal of a request without a token from another machine, to a front door on
#: a non-loopback address that has no tokens (google-adk's app served by its caller:
#: ``cli.fast_api.get_fast_api_app``): it acts for any user, as google-adk's API lets
#: anyone, but is no operator (google-adk's routes that write agent files or run code
#: take loopback callers only).
ANY_USER = "*any"
_LOOPBACK_NAMES = frozenset({"localhost"})
#: Paths served without a token: a liveness probe, and the console's own files (no
#: data in them; the page then sends the token the user gives it with every call).
_OPEN_PATHS = {"/health", "/", "/console/app.js", "/console/app.css"}
#: Top-level body fields that are names (``_names``), and what each is called.
_BODY_NAMES = {"appName": "app name", "userId": "user id", "sessionId": "session id", "filename": "artifact name"}
#: Top-level body fields a limit of one request applies to (``limit_problem``), by the
#: request field they become (both spellings: the routes take either).
_LIMITED = {"state": "state", "stateDelta": "state_delta", "state_delta": "state_delta",
            "newMessage": "new_message", "new_message": "new_message"}

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def _split_host(host_header: str) -> tuple[str, int | None] | None:
    """(name, port) of a ``Host`` header (port None when it names none), the name in
    lower case without a root dot; None when it is no ``name[:port]``: an IPv6 literal
    must be bracketed, and a port is digits only."""
    if host_header.startswith("["):
        inside, bracket, rest = host_header[1:].partition("]")
        if not bracket or not inside or (rest and not rest.startswith(":")):
            return None
        name, colon, port_text = f"[{inside}]", rest[:1], rest[1:]
    else:
        name, colon, port_text = host_header.partition(":")
    if colon and not port_text:
        return None
    if port_text and not (port_text.isascii() and port_text.isdigit()):
        return None
    name = name.lower().removesuffix(".")
    if not name or (":" in name and not name.startswith("[")):
        return None
    return name, int(port_text) if port_text else None


def _loopback_literal(name: str) -> bool:
    """Whether ``name`` (a ``Host`` name: IPv6 in brackets) is a loopback IP address."""
    try:
        return ipaddress.ip_address(name[1:-1] if name.startswith("[") else name).is_loopback
    except ValueError:
        return False


def _configured_names(section: HttpSection) -> frozenset[str]:
    """The names the host is configured with besides loopback ones: the host part of
    ``public_url`` and of each literal ``allow_origins`` entry (google-adk vouches for an
    allowed origin's host the same way), lower case, IPv6 in brackets."""
    names: set[str] = set()
    for url in (section.public_url or "", *section.allow_origins):
        try:
            host = urllib.parse.urlsplit(url).hostname
        except ValueError:  # a malformed URL vouches for no name
            continue
        if host:
            names.add(f"[{host}]" if ":" in host else host.lower())
    return frozenset(names)


class Guard:
    def __init__(self, app: Any, section: HttpSection, max_json_depth: int) -> None:
        self.app = app
        self.section = section
        self.max_json_depth = max_json_depth
        self.tokens = [(token.encode(), user) for token, user in section.tokens.items()]
        self.configured_names = _configured_names(section)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]}
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            status, text, extra = refusal
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008, "reason": text})
                return
            await _plain(send, status, text, extra)
            return
        if scope["type"] == "http":
            declared = headers.get("content-length")
            if declared is not None and declared.isdigit() and int(declared) > self.section.max_body_bytes:
                await _detail(send, 413, f"the request body is over {self.section.max_body_bytes} bytes")
                return
            buffered = await self._read_body(receive)
            if buffered is None:
                await _detail(send, 413, f"the request body is over {self.section.max_body_bytes} bytes")
                return
            refused = self._body_problem(buffered) if buffered else None
            if refused is not None:
                await _detail(send, *refused)
                return
            await self.app(scope, _replay(buffered, receive), send)
            return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str, dict[str, str]] | None:
        host = headers.get("host", "")
        if self.section.loopback and not self._host_allowed(scope):
            return 403, "Forbidden: host not allowed", {}
        origin = headers.get("origin")
        if origin is not None:
            own = {f"http://{host}", f"https://{host}"}
            allowed = self.section.allow_origins
            if origin not in own and "*" not in allowed and origin not in allowed:
                return 403, "Forbidden: origin not allowed", {}
        principal = self._principal(headers, scope)
        if principal is None and scope["path"] not in _OPEN_PATHS:
            return 401, "Unauthorized: a bearer token is required", {"www-authenticate": "Bearer"}
        scope.setdefault("state", {})["principal"] = principal
        return None

    def _host_allowed(self, scope: Scope) -> bool:
        """The host guard (module, 1): one ``Host`` header naming this server."""
        given = [value for key, value in scope["headers"] if key.lower() == b"host"]
        if len(given) != 1:  # none (no browser sends none), or a list of them: smuggling
            return False
        split = _split_host(given[0].decode("latin-1").strip())
        if split is None:
            return False
        name, port = split
        if name in self.configured_names:
            return True
        server = scope.get("server")
        own_port = server[1] if server else None
        return (name in _LOOPBACK_NAMES or _loopback_literal(name)) and port in (None, own_port)

    def _body_problem(self, body: bytes) -> tuple[int, str] | None:
        """(422, why) when a body breaks the input rules (module, 5), (413, why) when it
        is over a limit of one request (module, 6), or None (also when it is not JSON
        at all: the route says so)."""
        try:
            value = json.loads(body, parse_constant=_not_json_number, parse_int=_bounded_int)
        except RecursionError:
            return 422, f"the body is nested deeper than {self.max_json_depth} levels (the host's [limits] max_json_depth)"
        except _NotJson as refused:
            return 422, str(refused)
        except ValueError:
            return None
        if not isinstance(value, dict):
            problem = value_problem(value, self.max_json_depth + 1, "body")
            return (422, problem) if problem is not None else None
        for key, field_value in value.items():
            if key in _BODY_NAMES and isinstance(field_value, str):
                problem = name_problem(field_value, _BODY_NAMES[key])
            else:
                problem = value_problem(key, 1, "body") or value_problem(field_value, self.max_json_depth, escaped(key))
            if problem is not None:
                return 422, problem
        for key, field in _LIMITED.items():
            problem = limit_problem(field, value.get(key))
            if problem is not None:
                return 413, key + problem.removeprefix(field)
        return None

    def _principal(self, headers: dict[str, str], scope: Scope) -> str | None:
        """The user a request's token maps to, or None; without tokens, OPERATOR (on a
        front door not on loopback: for a caller on this machine only, ANY_USER for
        any other)."""
        if not self.tokens:
            client = scope.get("client")
            return OPERATOR if self.section.loopback or (client and _loopback_literal(str(client[0]))) else ANY_USER
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not given:
            return None
        found = None
        for token, user in self.tokens:  # every token compared, in constant time
            if hmac.compare_digest(token, given.strip().encode()):
                found = user
        return found

    async def _read_body(self, receive: Receive) -> bytes | None:
        """The whole request body, or None once it is over the limit (or the client left)."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.section.max_body_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


#: The most digits of an integer in a body: Python's own limit on turning text into an
#: int (``sys.get_int_max_str_digits``), which JSON parsers past this door apply too.
MAX_INT_DIGITS = 4300


class _NotJson(ValueError):
    """A body that Python's JSON parser reads, but that is not JSON a host can keep."""


def _not_json_number(name: str) -> Any:
    """``NaN``, ``Infinity`` and ``-Infinity`` are not JSON (RFC 8259): kept, they would
    come back as ``null``; refused instead."""
    raise _NotJson(f"the body holds {name}, which is not a JSON number (RFC 8259)")


def _bounded_int(text: str) -> int:
    """An integer of the body, or :class:`_NotJson` past ``MAX_INT_DIGITS`` digits."""
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _NotJson(f"the body holds an integer of {len(text.lstrip('-'))} digits; the limit is {MAX_INT_DIGITS}")
    return int(text)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that gives ``body`` first, then whatever the client sends next (its
    disconnect, which streaming routes watch for)."""
    given = False

    async def replayed() -> MutableMapping[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


async def _plain(send: Send, status: int, text: str, extra: dict[str, str]) -> None:
    body = text.encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    headers += [(key.encode(), value.encode()) for key, value in extra.items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _detail(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def acts_for_anyone(principal: str | None) -> bool:
    """Whether ``principal`` may act for every user (the operator, or ANY_USER)."""
    return principal in (OPERATOR, ANY_USER)


def require_operator(request: Any, what: str) -> None:
    """A 403 unless the request came with the operator's token (on loopback without
    tokens, every request does): ``what`` says what only an operator may do."""
    if request.state.principal != OPERATOR:
        raise HTTPException(403, f"only an operator token may {what}")
