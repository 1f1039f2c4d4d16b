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

import json
import logging
import re
import time
from collections.abc import MutableMapping
from typing import Any

import structlog

__all__ = ["JsonLineFormatter", "configure_logging", "get_logger", "redact_secrets"]

#: What a host gives its actor system's logger process: every line of host.log is JSON.
JSON_LINES = "adk_actors.log.JsonLineFormatter"

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


class JsonLineFormatter(logging.Formatter):
    """One JSON object per line, whatever wrote the record: a line structlog rendered
    as JSON already passes as it is; any other record (supervision's, Thespian's, a
    library's, a traceback) becomes ``{"timestamp", "level", "logger", "pid",
    "event"[, "exception"]}`` with its secrets redacted."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if message.startswith("{") and message.endswith("}") and not record.exc_info:
            try:
                if isinstance(json.loads(message), dict):
                    return message
            except ValueError:
                pass
        line: dict[str, Any] = {
            "timestamp": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(), "logger": record.name, "pid": record.process,
            "event": _scrub(message),
        }
        if record.exc_info:
            line["exception"] = _scrub(self.formatException(record.exc_info))
        elif record.exc_text:
            line["exception"] = _scrub(record.exc_text)
        return json.dumps(line, default=str)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return time.strftime(datefmt or "%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))


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
