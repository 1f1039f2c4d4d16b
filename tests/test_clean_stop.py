"""A clean stop writes no traceback (issue 19 item 10: pooled session actors crashed in
``terminate`` at every stop)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from adk_actors.runtime import Host, HostConfig
from supervision import call
from supervision.testing import wait_until


def test_stopping_a_host_with_a_session_pool_logs_no_traceback(actor_system: Any, tmp_path: Path) -> None:
    import runtime_agents

    config = HostConfig(apps=runtime_agents.APPS, data_dir=str(tmp_path / "data"), session_pool=2)
    with Host(config, system=actor_system) as host:
        runner = host.runner("echo")
        session = runner.create_session(user_id="u")
        list(runner.run("u", session.id, "hello"))
        wait_until(lambda: all(call(host.system, p, "pool") for p in host.partitions()), timeout=30,
                   message="a pooled session actor up in every partition")
    log = (tmp_path / "logs" / "actors.log").read_text()
    assert "Traceback" not in log and "terminate raised" not in log
