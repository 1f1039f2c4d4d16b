"""A Runner for a host reached over its HTTP API (google-adk's routes), not its actor system.

``HttpRunner(url, app, token=...)`` has the Runner's session calls, ``run`` and
``resume``: it is what ``adk-actors run``, ``chat`` and ``resume`` use with ``--url``, for a host on another
machine (whose actor-system port stays private) or behind its bearer tokens.

``run`` posts the turn to ``/run_sse`` and yields each event as it arrives, in
order; the stream's error line raises :class:`RunFailedError`. Each HTTP error is
the kit's typed error: 401/403 :class:`HostError` (the token), 404
:class:`SessionNotFoundError` or :class:`UnknownAppError`, 409
:class:`SessionExistsError` or :class:`SessionBusyError`, 413 :class:`LimitExceededError`, 400/422
:class:`InvalidRequestError`; a host that does not answer, :class:`HostError`.
Every request has a deadline: ``call_timeout`` seconds for a session call,
``timeout`` seconds between two bytes of a turn's stream.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import quote

import httpx

from ._decisions import CallDecision
from ._exceptions import (
    AdkError,
    HostError,
    InvalidRequestError,
    LimitExceededError,
    RunFailedError,
    SessionBusyError,
    SessionExistsError,
    SessionNotFoundError,
    UnknownAppError,
)
from ._types import Content, Event
from .tracing import TraceSpan

__all__ = ["HttpRunner"]


class HttpRunner:
    def __init__(self, url: str, app_name: str, *, token: str | None = None, timeout: float = 660.0,
                 call_timeout: float = 30.0) -> None:
        self.app_name = app_name
        self.call_timeout = call_timeout
        headers = {"authorization": f"Bearer {token}"} if token else {}
        # TLS settings only where TLS is spoken: httpx builds its default context (loading
        # certifi's bundle, ~35 ms of a CLI turn: bench/startup.py) unless told not to,
        # and a plain-http URL never uses it (redirects are not followed).
        tls = url.startswith("https://")
        self._http = httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=timeout, verify=tls)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> HttpRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _sessions(self, user_id: str) -> str:
        return f"/apps/{quote(self.app_name, safe='')}/users/{quote(user_id, safe='')}/sessions"

    def _send(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self._http.request(method, path, timeout=self.call_timeout, **kwargs)
        except httpx.HTTPError as exc:
            raise HostError(f"the host at {self._http.base_url} did not answer: {exc}") from None
        _check(response, self.app_name)
        return response.json()

    def get_session(self, user_id: str, session_id: str) -> dict[str, Any]:
        """The session as google-adk's JSON (``id``, ``state``, ``events`` ...)."""
        found: dict[str, Any] = self._send("GET", f"{self._sessions(user_id)}/{quote(session_id, safe='')}")
        return found

    def session_trace(self, session_id: str, user_id: str) -> list[TraceSpan]:
        """The session's trace as the host keeps it (google-adk's ``GET
        /dev/apps/{app}/debug/trace/session/{session_id}``, the runner's token's user: the
        route names none, so ``user_id`` is not sent), through this runner's requests
        (its token, deadline and typed errors; an empty list while the host's
        ``trace_turns`` is 0). ValueError when the answer is no list of spans."""
        del user_id
        served = self._send("GET", f"/dev/apps/{quote(self.app_name, safe='')}/debug/trace/session/"
                                   f"{quote(session_id, safe='')}")
        if not isinstance(served, list):
            raise ValueError(f"a session trace is a list of spans, not {type(served).__name__}")
        return [TraceSpan.from_web_ui(span) for span in served]

    def create_session(self, user_id: str, session_id: str | None = None,
                       state: dict[str, Any] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"state": dict(state or {})}
        if session_id:
            body["sessionId"] = session_id
        created: dict[str, Any] = self._send("POST", self._sessions(user_id), json=body)
        return created

    def run(self, user_id: str, session_id: str, message: str | Content, *,
            state_delta: dict[str, Any] | None = None) -> Iterator[Event]:
        """One turn: its events as they arrive (the user's first, with ``state_delta``;
        model text streamed as partial events); raises RunFailedError on the stream's
        error line."""
        content = Content.user(message) if isinstance(message, str) else message
        body: dict[str, Any] = {"appName": self.app_name, "userId": user_id, "sessionId": session_id,
                                "streaming": True,
                                "newMessage": content.model_dump(mode="json", by_alias=True, exclude_none=True)}
        if state_delta:
            body["stateDelta"] = state_delta
        yield from self._stream("/run_sse", body)

    def resume(self, user_id: str, session_id: str, run_id: str, *,
               decisions: Mapping[str, CallDecision] | None = None) -> Iterator[Event]:
        """Durable runs: continue run ``run_id`` from its committed steps (the host's
        ``.../runs/{run_id}/resume``); its new events as they arrive. A run that stops
        before calls that may have run raises RunFailedError ``needs_decision`` (its
        ``run_id`` the run to resume with the decisions, its ``pending_calls`` the calls)."""
        body = {"streaming": True, "decisions": {call_id: {"action": d.action, "result": d.result}
                                                 for call_id, d in (decisions or {}).items()}}
        path = f"{self._sessions(user_id)}/{quote(session_id, safe='')}/runs/{quote(run_id, safe='')}/resume"
        yield from self._stream(path, body)

    def _stream(self, path: str, body: dict[str, Any]) -> Iterator[Event]:
        """POST ``body`` to ``path`` and yield the SSE stream's events; its error line
        raises RunFailedError."""
        try:
            with self._http.stream("POST", path, json=body) as response:
                if response.status_code >= 400:
                    response.read()
                    _check(response, self.app_name)
                for line in response.iter_lines():
                    if not line.startswith("data: "):
                        continue
                    data = json.loads(line[len("data: "):])
                    if "error" in data and "id" not in data:
                        raise _failure(data)
                    yield Event.model_validate(data)
        except httpx.HTTPError as exc:
            raise HostError(f"the host at {self._http.base_url} did not answer: {exc}") from None


def _failure(line: dict[str, Any]) -> RunFailedError:
    """The stream's error line as the kit's error (``needs_decision`` when it lists
    pending calls)."""
    details = line.get("error_details") or {}
    kind, text = details.get("error_type", "error"), details.get("error_message", str(line["error"]))
    if details.get("pending_calls"):
        return RunFailedError(str(details.get("run_id", "")), "needs_decision", kind,
                              json.dumps({"pending_calls": details["pending_calls"]}))
    return RunFailedError("", "error", kind, text)


def _check(response: httpx.Response, app_name: str) -> None:
    """Raise the kit's typed error for an HTTP error answer."""
    if response.status_code < 400:
        return
    try:
        detail = str(response.json().get("detail", response.text))
    except ValueError:
        detail = response.text
    status = response.status_code
    error: type[AdkError]
    if status in (401, 403):
        raise HostError(f"the host refused the request ({status}): {detail} (check --token)")
    if status == 404:
        error = UnknownAppError if "app" in detail.lower() and app_name in detail else SessionNotFoundError
    elif status == 409:
        error = SessionExistsError if "exists" in detail else SessionBusyError
    elif status == 413:
        error = LimitExceededError
    elif status in (400, 422):
        error = InvalidRequestError
    else:
        raise HostError(f"the host answered {status}: {detail}")
    raise error(detail)
