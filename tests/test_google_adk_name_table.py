"""docs/google-adk.md lists every public name of google-adk 2.13 as it is here today:
regenerated from google-adk and ``adk_actors`` themselves (in a process of its own),
the page must not differ (``python tests/google_adk_name_table.py`` writes it).

google-adk's side (its modules and their public names: ~30 s to import them all) is
kept between runs in the machine's temporary folder, under a key made of google-adk's
version, its installed files' RECORD, every installed distribution's version and the
code that finds the names (``google_adk_name_table.google_key``): any change of what is
installed finds them again. Whether each name is here is looked up on every run."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from google_adk_name_table import AREA_REASONS, PAGE, Row, page

pytest.importorskip("google.adk")

TABLE = Path(__file__).with_name("google_adk_name_table.py")
GOOGLE_CACHE = Path(tempfile.gettempdir()) / "adk-actors-test-cache"


#: Importing every google-adk module (when its names are not kept yet) takes ~30 s on an
#: idle machine; the fixture's own deadline (300 s) holds at load, so the tests'
#: deadline must not be shorter.
pytestmark = pytest.mark.timeout(360)


@pytest.fixture(scope="module")
def table() -> dict[str, Any]:
    done = subprocess.run([sys.executable, str(TABLE), "--json", "--cache", str(GOOGLE_CACHE)],
                          capture_output=True, text=True, timeout=300, cwd=TABLE.parents[1])
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    found["rows"] = [Row(module, name, here) for module, name, here in found["rows"]]
    return found


def test_the_name_table_is_current_and_every_area_says_why(table: dict[str, Any]) -> None:
    rows: list[Row] = table["rows"]
    assert len(rows) > 500  # google-adk's public names were found at all
    assert {row.area for row in rows} <= set(AREA_REASONS), "an area of google-adk without a reason"
    if f"google-adk {table['version']}'s" not in PAGE.read_text():
        pytest.skip(f"docs/google-adk.md was made for another google-adk than {table['version']}: regenerate it")
    assert PAGE.read_text() == page(rows, table["unimported"]), \
        "docs/google-adk.md is stale: run tests/google_adk_name_table.py"


def test_names_the_table_says_are_here_resolve_by_the_same_import(table: dict[str, Any]) -> None:
    here = [row for row in table["rows"] if row.here]
    assert any(row.module == "google.adk.events.event" and row.name == "Event" for row in here)
    assert any(row.module == "google.adk.plugins.base_plugin" and row.name == "BasePlugin" for row in here)
    namespace: dict[str, object] = {}
    for row in here:
        exec(f"from {row.module.replace('google.adk', 'adk_actors', 1)} import {row.name}", namespace)
