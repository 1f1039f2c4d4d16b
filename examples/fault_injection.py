"""A conversation that survives kill -9 of the process holding its session.

Run: ``python examples/fault_injection.py``. Starts a host, talks to weather_bot,
kills the session's partition (the process that holds the session and writes it)
with SIGKILL between turns, and shows the conversation going on with its history
intact: the partition is restarted by its supervisor and loads the session again.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from adk_actors.runtime import Host, HostConfig
from supervision import SupervisionError, call
from supervision.protocol import OsPid
from supervision.testing import running_actor_system, wait_until


def session_pid(host: Host) -> int | None:
    """The pid of the partition that holds ann/s1 (None while it restarts)."""
    try:
        pid: int = call(host.system, host.partition_for("weather_bot", "ann", "s1", refresh=True), OsPid(), timeout=1)
    except SupervisionError:
        return None
    return pid


def say(runner: object, text: str) -> None:
    for event in runner.run("ann", "s1", text):  # type: ignore[attr-defined]
        if event.author != "user" and event.content and event.content.text:
            print(f"  {event.author}: {event.content.text}")


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="fault-demo-"))
    with running_actor_system(work / "logs") as system:
        config = HostConfig(apps={"weather_bot": "examples.weather_bot.agent:root_agent"}, data_dir=str(work))
        with Host(config, system=system) as host:
            runner = host.runner("weather_bot")
            runner.create_session("ann", "s1")
            print("turn 1:")
            say(runner, "What's the weather in Paris?")
            pid = session_pid(host)
            assert pid is not None
            print(f"\nkill -9 the process holding the session (pid {pid}) ...")
            os.kill(pid, signal.SIGKILL)
            began = time.monotonic()
            wait_until(lambda: (p := session_pid(host)) is not None and p != pid)
            print(f"restarted by its supervisor after {1000 * (time.monotonic() - began):.0f} ms, pid {session_pid(host)}")
            print("\nturn 2 (same session):")
            say(runner, "And in Oslo?")
            history = runner.get_session("ann", "s1")
            print(f"\nthe session holds {len(history.events)} events; state: {history.state}")


if __name__ == "__main__":
    main()
