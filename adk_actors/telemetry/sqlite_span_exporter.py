"""google-adk's SQLite span exporter (``google.adk.telemetry.sqlite_span_exporter``).

:class:`SqliteSpanExporter` keeps finished spans in a SQLite file, one row a span in
a ``spans`` table with google-adk's columns (so a file either one wrote, the other
reads), and gives back a session's spans (every trace one of its spans is in) as
OpenTelemetry ``ReadableSpan`` objects. For local development: a restarted process
can show an older session's traces. Needs the OpenTelemetry SDK.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import SpanContext, TraceFlags, TraceState

__all__ = ["SqliteSpanExporter"]

_log = logging.getLogger("adk_actors.telemetry")
_COLUMNS = ("span_id", "trace_id", "parent_span_id", "name", "start_time_unix_nano", "end_time_unix_nano",
            "session_id", "invocation_id", "attributes_json")
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS spans (span_id TEXT PRIMARY KEY, trace_id TEXT NOT NULL, parent_span_id TEXT,"
    " name TEXT NOT NULL, start_time_unix_nano INTEGER, end_time_unix_nano INTEGER, session_id TEXT,"
    " invocation_id TEXT, attributes_json TEXT)",
    "CREATE INDEX IF NOT EXISTS spans_session_id_idx ON spans(session_id)",
    "CREATE INDEX IF NOT EXISTS spans_trace_id_idx ON spans(trace_id)",
)
_UPSERT = f"INSERT OR REPLACE INTO spans ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' for _ in _COLUMNS)})"


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class SqliteSpanExporter(SpanExporter):
    """Spans into the SQLite file ``db_path`` (its table made when missing, at
    construction); one connection, shared by threads under a lock."""

    def __init__(self, *, db_path: str) -> None:
        self._db_path = db_path
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        with self._lock:
            conn = self._connection()
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.commit()

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = sqlite3.connect(self._db_path, timeout=30.0, check_same_thread=False)
            self._conn.row_factory = sqlite3.Row
        return self._conn

    @staticmethod
    def _row(span: ReadableSpan) -> tuple[Any, ...]:
        """A span as its row: hex ids, its session (``gcp.vertex.agent.session_id``,
        else ``gen_ai.conversation.id``) and invocation, its attributes as JSON (a value
        JSON cannot hold as ``<not serializable>``; ``{}`` when that fails too)."""
        attributes = dict(span.attributes or {})
        session = _text_or_none(attributes.get("gcp.vertex.agent.session_id") or
                                attributes.get("gen_ai.conversation.id"))
        try:
            encoded = json.dumps(attributes, ensure_ascii=False, default=lambda _: "<not serializable>")
        except (TypeError, ValueError):
            encoded = "{}"
        context = span.context
        assert context is not None  # a finished SDK span always has one
        return (format(context.span_id, "016x"), format(context.trace_id, "032x"),
                format(span.parent.span_id, "016x") if span.parent is not None else None, span.name,
                span.start_time, span.end_time, session,
                _text_or_none(attributes.get("gcp.vertex.agent.invocation_id")), encoded)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Write ``spans`` (a span already there is replaced) and commit; on any error a
        warning is logged and FAILURE returned."""
        try:
            with self._lock:
                conn = self._connection()
                conn.executemany(_UPSERT, [self._row(span) for span in spans])
                conn.commit()
        except Exception as error:  # an exporter reports, never raises, into the SDK
            _log.warning("could not write spans to SQLite: %s", error)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    def _query(self, sql: str, params: Iterable[object]) -> list[sqlite3.Row]:
        with self._lock:
            return list(self._connection().execute(sql, tuple(params)).fetchall())

    @staticmethod
    def _span_of(row: sqlite3.Row) -> ReadableSpan:
        """A stored row as a sampled ``ReadableSpan`` (attributes that do not read back
        as a JSON object: none)."""
        trace_id = int(str(row["trace_id"]), 16)
        flags, state = TraceFlags(TraceFlags.SAMPLED), TraceState()
        context = SpanContext(trace_id=trace_id, span_id=int(str(row["span_id"]), 16), is_remote=False,
                              trace_flags=flags, trace_state=state)
        parent = None
        if row["parent_span_id"]:
            parent = SpanContext(trace_id=trace_id, span_id=int(str(row["parent_span_id"]), 16), is_remote=False,
                                 trace_flags=flags, trace_state=state)
        try:
            attributes = json.loads(row["attributes_json"]) if row["attributes_json"] else {}
        except (json.JSONDecodeError, TypeError):
            attributes = {}
        if not isinstance(attributes, Mapping):
            attributes = {}
        return ReadableSpan(name=row["name"] or "", context=context, parent=parent, attributes=dict(attributes),
                            start_time=row["start_time_unix_nano"], end_time=row["end_time_unix_nano"])

    def get_all_spans_for_session(self, session_id: str) -> list[ReadableSpan]:
        """Every span of every trace that has a span of ``session_id`` (so also a
        trace's spans that name no session), in the order they started."""
        traces = [row["trace_id"] for row in self._query("SELECT DISTINCT trace_id FROM spans WHERE session_id = ?",
                                                         (session_id,)) if row["trace_id"]]
        if not traces:
            return []
        marks = ",".join("?" * len(traces))
        rows = self._query(f"SELECT * FROM spans WHERE trace_id IN ({marks}) ORDER BY start_time_unix_nano", traces)
        return [self._span_of(row) for row in rows]
