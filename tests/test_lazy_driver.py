"""PostgreSQL's driver is loaded only by a host that uses PostgreSQL (``store._pg_names``):
everything ``serve`` imports to start a SQLite host leaves psycopg out (about 0.1 s of
its start, bench/first_hour.py), and the first PostgreSQL location opened loads it, its
errors still the store's typed ``StoreError`` without the URL's password.

Each case runs in a process of its own, so that what it imports is its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from supervision.lowlevel import free_port

ROOT = Path(__file__).resolve().parents[1]

_PROBE = """
import json, sys
import adk_actors.cli
from adk_actors.runtime import Host
from adk_actors.store import Database, StoreError, open_session_store

Host.load_tree_code()  # every actor's code, as serve loads it before its tree
import adk_actors.http._process  # and the HTTP server's
store = open_session_store(sys.argv[1] + "/sessions.db")
services = Database(sys.argv[1] + "/memory.db")
loaded_by_sqlite = "psycopg" in sys.modules or "psycopg_pool" in sys.modules
try:
    Database(f"postgresql://ann:s3cret@127.0.0.1:{sys.argv[2]}/nothing")
    error = None
except StoreError as exc:
    error = str(exc)
from adk_actors.store import PostgresSessionStore
print(json.dumps({"loaded_by_sqlite": loaded_by_sqlite, "loaded_after": "psycopg" in sys.modules, "error": error,
                  "store": PostgresSessionStore.__name__}))
"""


def _probe(tmp_path: Path) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", _PROBE, str(tmp_path), str(free_port())], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_sqlite_host_never_loads_the_postgres_driver_and_a_postgres_url_loads_it(tmp_path: Path) -> None:
    result = _probe(tmp_path)
    assert result["loaded_by_sqlite"] is False
    assert result["loaded_after"] is True and result["store"] == "PostgresSessionStore"
    error = result["error"]
    assert error is not None and error.startswith("cannot open postgresql://ann:***@127.0.0.1:")
    assert "s3cret" not in error and "refused" in error.lower()
