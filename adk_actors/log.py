"""Structured logging with structlog, in the host and in every actor process.

``configure_logging`` sets structlog to render through the standard library, which
inside actors is forwarded to Thespian's logger process (see DESIGN.md), so one
configuration, made in the host before its actors fork, applies everywhere. Lines
are JSON (production) or readable key=value (a terminal), carry the ids bound with
:func:`get_logger` (app, user, session, run, actor), and have secrets redacted:
any key that looks like a key, token, secret, password or authorization, and any
value that looks like a bearer token or an API key.
"""

from __future__ import annotations

import logging
import re
from collections.abc import MutableMapping
from typing import Any

import structlog

__all__ = ["configure_logging", "get_logger", "redact_secrets"]

_SECRET_KEY = re.compile(r"(api[_-]?key|token|secret|password|authorization|credential)", re.IGNORECASE)
_SECRET_VALUE = re.compile(r"(Bearer\s+[A-Za-z0-9._\-]+|\bsk-[A-Za-z0-9_\-]{6,}|\bAIza[0-9A-Za-z_\-]{10,})")


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return _SECRET_VALUE.sub("***", value)
    if isinstance(value, dict):
        return {k: "***" if _SECRET_KEY.search(str(k)) else _scrub(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_scrub(v) for v in value)
    return value


def redact_secrets(logger: Any, method: str, event_dict: MutableMapping[str, Any]) -> dict[str, Any]:
    """A structlog processor: blank secret-looking keys and values."""
    return {key: "***" if _SECRET_KEY.search(key) and key != "event" else _scrub(value)
            for key, value in event_dict.items()}


_level = logging.INFO  # structlog's filter level, as configured last


def configure_logging(*, json: bool = True, level: str = "INFO") -> None:
    global _level
    _level = getattr(logging, level.upper(), logging.INFO)
    renderer: Any = structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.stdlib.add_log_level,
            structlog.stdlib.add_logger_name,
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.processors.format_exc_info,
            redact_secrets,
            renderer,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.make_filtering_bound_logger(_level),
        cache_logger_on_first_use=False,
    )


def get_logger(name: str = "adk_actors", **ids: Any) -> Any:
    """A logger whose lines carry ``ids`` (app, user, session, run, actor ...).

    If nobody configured structlog, lines go through the standard library (never to
    stdout), as JSON.
    """
    if not structlog.is_configured():
        configure_logging(json=True)
    return structlog.get_logger(name).bind(**{k: v for k, v in ids.items() if v is not None})


def enabled_for(name: str, level: int) -> bool:
    """Would a line at ``level`` from logger ``name`` be written? (Both structlog's
    filter and the standard library's level say yes.) Lets a hot path skip the work of
    preparing a line nobody writes."""
    if not structlog.is_configured():
        configure_logging(json=True)
    return level >= _level and logging.getLogger(name).isEnabledFor(level)
