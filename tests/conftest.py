from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

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
