"""What the stores know of PostgreSQL without loading its driver.

psycopg and its pool take about 0.1 s to import (more on a loaded machine), and every
host imports the stores at its start, while only a host with ``[store] url =
"postgresql://..."`` ever uses them. So the driver is imported by ``_postgres`` only,
and ``_postgres`` only by code that opens a PostgreSQL location (``open_session_store``,
``Database``, ``store.PostgresSessionStore``): a SQLite host never loads it. A
PostgreSQL host loads it in its own process before its tree (``Host.start`` opens the
session store first), so its actors are forked with it, as before. This module holds
what the others need before that: which locations are PostgreSQL's, how a URL is
shown and named, and which errors are the driver's.
"""

from __future__ import annotations

import sys
from urllib.parse import urlsplit, urlunsplit

__all__ = ["connection_name", "driver_errors", "is_postgres_url", "reason_without_password", "redacted_url"]

#: PostgreSQL keeps this many bytes of a connection's ``application_name``.
_NAME_BYTES = 63


def is_postgres_url(location: str) -> bool:
    return location.startswith(("postgresql://", "postgres://"))


def redacted_url(url: str) -> str:
    """``url`` with its password (if any) replaced by ``***``: how a store URL is shown."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<a PostgreSQL URL that cannot be parsed>"
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc}"))


def connection_name(host: str, role: str) -> str:
    """What a connection is called in PostgreSQL (``application_name``, seen in
    ``pg_stat_activity``): ``adk-actors <host> <role>``, the host being its name among
    the hosts sharing the store (``<address>:<port>``, the lease holder) and the role the
    opener's (``partition-0``, ``memory`` ...); cut to the 63 bytes PostgreSQL keeps, on
    a character boundary. An empty ``host`` is left out."""
    name = " ".join(part for part in ("adk-actors", host, role) if part)
    return name.encode()[:_NAME_BYTES].decode(errors="ignore")


def reason_without_password(exc: BaseException, url: str) -> str:
    """An error's message, first line, with the URL's password taken out wherever it appears."""
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    password = urlsplit(url).password if is_postgres_url(url) else None
    return text.replace(password, "***") if password else text


def driver_errors(*others: type[BaseException]) -> tuple[type[BaseException], ...]:
    """``others`` and the errors of psycopg and of its pool (``psycopg.Error``,
    ``PoolTimeout``), for an ``except`` clause; not the driver's while it is not loaded
    (nothing can have raised them)."""
    psycopg, pool = sys.modules.get("psycopg"), sys.modules.get("psycopg_pool")
    errors: list[type[BaseException]] = list(others)
    if psycopg is not None and hasattr(psycopg, "Error"):
        errors.append(psycopg.Error)
    if pool is not None and hasattr(pool, "PoolTimeout"):
        errors.append(pool.PoolTimeout)
    return tuple(errors)
