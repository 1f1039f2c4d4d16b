"""A supervision tree that survives kill -9, shown step by step.

Run: ``python examples/supervision_demo.py``. Starts an actor system on a free
loopback port, a rest_for_one tree (registry, a named store, a nested supervisor),
kills the store with SIGKILL, shows the restart, calls it by name, and shuts down.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from supervision import (
    ChildSpec,
    Registry,
    Strategy,
    SupervisorClient,
    SupervisorSpec,
    call_name,
    start_supervisor,
)
from supervision.testing import Probe, probe_args, running_actor_system, wait_until


def show(title: str, sup: SupervisorClient, indent: str = "") -> None:
    if title:
        print(f"\n{title}")
    for info in sup.which_children():
        print(f"{indent}  {info.id:<10} {info.type:<10} {info.status:<10} pid={info.pid} restarts={info.restarts}")
        if info.type == "supervisor" and info.address is not None:
            show("", SupervisorClient(sup.system, info.address), indent + "    ")


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="supervision-demo-"))
    events = work / "events"
    tree = SupervisorSpec(
        children=(
            ChildSpec(id="registry", start=Registry, provides_registry=True),
            ChildSpec(id="store", start=Probe, args=probe_args("store", events), name="store"),
            ChildSpec.supervisor(
                "workers",
                SupervisorSpec(children=tuple(
                    ChildSpec(id=f"w{i}", start=Probe, args=probe_args(f"w{i}", events)) for i in range(3))),
            ),
        ),
        strategy=Strategy.REST_FOR_ONE,
    )
    with running_actor_system(work / "logs") as system:
        root = start_supervisor(system, tree)
        show("the tree (rest_for_one):", root)
        registry = root.registry()
        call_name(system, registry, "store", ("put", "greeting", "hello"))
        pid = root.child("store").pid
        assert pid is not None
        print(f"\nkill -9 store (pid {pid}) ...")
        began = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        new_pid = call_name(system, registry, "store", "pid", timeout=5)
        print(f"'store' answers again by name after {1000 * (time.monotonic() - began):.1f} ms, pid {new_pid}")
        wait_until(lambda: root.child("workers").status == "running")
        show("after the kill: store and everything started after it were restarted:", root)
        print("\nits in-memory state is gone (a real service reloads from its store):",
              call_name(system, registry, "store", ("get", "greeting")))
        root.stop()
        print("\nstopped in reverse start order; no process left behind.")


if __name__ == "__main__":
    main()
