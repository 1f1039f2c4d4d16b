from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from adk_actors.runtime import Host, HostConfig
from supervision import ChildSpec, SupervisorClient, SupervisorSpec, start_supervisor

pytest_plugins = ["supervision.testing"]


@pytest.fixture
def events(tmp_path: Path) -> Path:
    """A file Probe children append their start/terminate records to."""
    return tmp_path / "events.log"


def probe(id: str, events: Path, **kwargs: Any) -> ChildSpec:
    """A Probe child spec; ChildSpec keywords and probe options can be mixed."""
    from supervision.testing import Probe, probe_args

    spec_keys = {"restart", "shutdown", "significant", "name", "backoff", "start_timeout", "type"}
    spec_kwargs = {k: v for k, v in kwargs.items() if k in spec_keys}
    probe_kwargs = {k: v for k, v in kwargs.items() if k not in spec_keys}
    return ChildSpec(id=id, start=Probe, args=probe_args(id, events, **probe_kwargs), **spec_kwargs)


@pytest.fixture
def start_sup(actor_system: Any) -> Callable[..., SupervisorClient]:
    def start(children: list[ChildSpec], **flags: Any) -> SupervisorClient:
        return start_supervisor(actor_system, SupervisorSpec(children=tuple(children), **flags))

    return start


@pytest.fixture
def host(actor_system: Any, tmp_path: Path) -> Iterator[Host]:
    """A host serving the apps of ``runtime_agents`` (data in the test's tmp dir)."""
    import runtime_agents

    with Host(HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data")), system=actor_system) as running:
        yield running
