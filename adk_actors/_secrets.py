"""Known secrets never leave a process in anything stored or sent to a caller.

A provider that echoes the API key in an error body (a 401 does), or a tool that
returns a credential, would otherwise put the key into an event, so into the session
store, the caller's stream and the CLI's output. This module holds the secrets this
process knows and blanks them out of text and events:

* at first use, every environment variable whose name ends in ``API_KEY``,
  ``TOKEN``, ``SECRET`` or ``PASSWORD`` (the provider keys: ``OPENAI_API_KEY``,
  ``GEMINI_API_KEY`` ...);
* every key a model connector is given (:func:`register_secret`), and every stored
  credential a run fetches for a tool.

Values shorter than ``MIN_LENGTH`` are not treated as secrets (they would blank
ordinary words). The events are redacted where they are made (the engine's
``InvocationContext.event``) and the provider errors where they are made
(``models._http``), so the store, the stream and the CLI only ever see "***".
"""

from __future__ import annotations

import json
import os
import re
import threading
from typing import Any

from ._types import Event

__all__ = ["MIN_LENGTH", "REDACTED", "known_secrets", "redact", "redact_event", "redact_json", "register_secret"]

MIN_LENGTH = 8
REDACTED = "***"
_SECRET_ENV = re.compile(r"(API_KEY|TOKEN|SECRET|PASSWORD)$", re.IGNORECASE)

_lock = threading.Lock()
_secrets: set[str] = set()
_seeded_pid: int | None = None  # the process that read its environment (a fork reads its own again)


def _seed() -> None:
    global _seeded_pid
    if _seeded_pid == os.getpid():
        return
    with _lock:
        if _seeded_pid != os.getpid():
            for name, value in os.environ.items():
                if _SECRET_ENV.search(name) and len(value) >= MIN_LENGTH:
                    _secrets.add(value)
            _seeded_pid = os.getpid()


def register_secret(value: str | None) -> None:
    """Treat ``value`` as a secret in this process from now on (None or short: ignored)."""
    if value and len(value) >= MIN_LENGTH:
        with _lock:
            _secrets.add(value)


def known_secrets() -> frozenset[str]:
    _seed()
    return frozenset(_secrets)


def redact(text: str) -> str:
    """``text`` with every known secret replaced by ``***`` (longest first)."""
    for secret in sorted(known_secrets(), key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact_json(text: str) -> str:
    """``text``, JSON made by ``json.dumps``, with every known secret replaced by
    ``***``, as it appears raw or escaped inside a JSON string."""
    secrets = known_secrets()
    if not secrets:
        return text
    for secret in sorted(secrets, key=len, reverse=True):
        for form in (secret, json.dumps(secret)[1:-1]):
            if form in text:
                text = text.replace(form, REDACTED)
    return text


def redact_event(event: Event) -> Event:
    """``event`` itself when it holds no known secret; else a copy with every string
    that holds one (texts, error message, tool arguments and results, state) redacted.
    An event that has no JSON (a value nested too deep) is returned as it is: no store,
    wire or log can take it either, and the store's refusal ends its run typed
    (``Unstorable``) instead of this check ending it with a ValueError."""
    secrets = known_secrets()
    if not secrets:
        return event
    try:
        data = event.model_dump(mode="json", by_alias=True, exclude_none=True)
    except (ValueError, RecursionError):
        return event
    dumped = json.dumps(data)
    if not any(secret in dumped or json.dumps(secret)[1:-1] in dumped for secret in secrets):
        return event
    return Event.model_validate(_redact_value(data))


def _redact_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: _redact_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_redact_value(item) for item in value]
    return value
