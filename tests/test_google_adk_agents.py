"""google-adk agent files run here with only their imports changed (issue 38).

Each file of tests/adk_style is run on google-adk as written, then with its imports
rewritten (adk_side_by_side.source_for) on our engine (our InMemoryRunner, once with
``adk_actors.types`` and once keeping ``google.genai.types``) and on a host (every
file an app, one run worker process per turn), each on the same scripted replies.
The tool calls with their arguments, the tool responses, the texts, escalations and
transfers, and the session state after the turns must be the same.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from adk_side_by_side import (
    FILES,
    Replies,
    drive,
    final_text,
    give_model,
    google_model,
    load,
    our_model,
    rows,
)

import adk_actors.runners
from adk_actors import types
from adk_actors.runtime import Host, HostConfig, Runner

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


def on_google_adk(name: str, folder: Path) -> tuple[list[tuple[Any, ...]], dict[str, Any]]:
    import google.adk.runners
    from google.genai import types as genai_types

    module = load(name, folder, ours=False, genai=True)
    give_model(module.root_agent, google_model(Replies(module.REPLIES, folder / f"{name}.google.cursor")))
    events, state = asyncio.run(drive(google.adk.runners, genai_types, module.root_agent, module.TURNS))
    return rows(events), state


@pytest.mark.parametrize("name", FILES)
def test_an_agent_file_runs_here_as_on_google_adk(name: str, tmp_path: Path) -> None:
    expected, expected_state = on_google_adk(name, tmp_path)
    assert final_text(expected) is not None or any(r[0] == "response" for r in expected)  # the script was used
    for genai in (False, True):
        module = load(name, tmp_path, ours=True, genai=genai)
        give_model(module.root_agent, our_model(Replies(module.REPLIES, tmp_path / f"{name}.{genai}.cursor")))
        events, state = asyncio.run(drive(adk_actors.runners, types, module.root_agent, module.TURNS))
        assert rows(events) == expected, f"{name} (google.genai types: {genai})"
        assert state == expected_state, f"{name} (google.genai types: {genai})"


@pytest.fixture(scope="module")
def app_modules(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """Every agent file, its imports rewritten, as an app module of a folder on
    ``sys.path`` (put there before the test's actor system starts, so the host's
    processes, forked from this one, import from it too); the app's model is the
    script, read through a cursor file."""
    folder = tmp_path_factory.mktemp("adk_style_apps")
    apps: dict[str, str] = {}
    for name in FILES:
        module = load(name, folder, ours=True, genai=False)
        app = f"adk_style_app_{name}"
        (folder / f"{app}.py").write_text(
            f"from adk_side_by_side import Replies, give_model, our_model\n"
            f"from {module.__name__} import REPLIES, root_agent\n"
            f"give_model(root_agent, our_model(Replies(REPLIES, {str(folder / (name + '.host.cursor'))!r})))\n")
        apps[name] = f"{app}:root_agent"
    sys.path.insert(0, str(folder))
    try:
        yield folder, apps
    finally:
        sys.path.remove(str(folder))


def test_every_agent_file_runs_on_a_host_as_on_google_adk(app_modules: tuple[Path, dict[str, str]],
                                                           actor_system: Any, tmp_path: Path) -> None:
    _folder, apps = app_modules
    expected = {name: on_google_adk(name, tmp_path) for name in FILES}
    different: dict[str, Any] = {}
    with Host(HostConfig(apps=apps, data_dir=str(tmp_path / "data")), system=actor_system) as host:
        for name in FILES:
            module = sys.modules[f"adk_style_{name}_ours"]
            runner = Runner(host, name, timeout=30.0)
            session = runner.create_session("ann", f"s-{name}")
            events = [event for text in module.TURNS for event in runner.run("ann", session.id, text)]
            got = (rows(events), runner.get_session("ann", session.id).state)
            if got != expected[name]:
                different[name] = {"here": got, "google-adk": expected[name]}
    assert different == {}, json.dumps(different, default=str)
