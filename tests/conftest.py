from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from adk_actors.runtime import Host, HostConfig
from supervision import ChildSpec, SupervisorClient, SupervisorSpec, start_supervisor
from supervision.lowlevel import free_port
from supervision.testing import (
    LeftoverProcesses,
    kill_marked_processes,
    process_marker,
    running_actor_system,
    wait_until,
)

ROOT = Path(__file__).resolve().parents[1]

# Before any test's actor system starts: its actors are forked from this process's
# image, as serve's are from one that has the tree's code (Host.start loads it before
# the system it starts).
Host.load_tree_code()

pytest_plugins = ["supervision.testing"]

#: The files that take longest (50-180 worker-seconds each on CI), longest first. With
#: ``--no-loadscope-reorder`` (pyproject) xdist hands the workers whole files in
#: collection order, so these start first instead of last (its own order, most tests
#: first, left them for the end, where one worker ran on alone). Order only: a file
#: not named keeps its place after them.
SLOWEST_FIRST = ("test_faults_at_once.py", "test_run_folder.py", "test_cluster.py", "test_http.py",
                 "test_tree_recovery.py", "test_jobs.py", "test_runtime.py", "test_console.py", "test_cli.py",
                 "test_postgres_host.py", "test_first_hour.py", "test_chaos_soak.py", "test_eval_in_process.py",
                 "test_session_actors.py", "test_supervisor.py", "test_many_hosts.py", "test_mcp_client.py",
                 "test_console_busy_partition.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move the items of ``SLOWEST_FIRST``'s files to the front, in its order; every
    other item keeps its order (a stable sort)."""
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.fixture(autouse=True)
def google_adk_yaml_denylist_off() -> Iterator[None]:
    """google-adk keeps one process-wide switch for its YAML key denylist (off unless its
    web server turns it on): put back off after each test, so that a side by side that
    turned it on does not decide a later test's outcome in the same worker."""
    yield
    utils = sys.modules.get("google.adk.agents.config_agent_utils")
    if utils is not None and hasattr(utils, "_set_enforce_yaml_key_denylist"):
        utils._set_enforce_yaml_key_denylist(False)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """One real PostgreSQL server for the whole run (Debian's postgresql, initdb in a
    temp folder, a free loopback port), stopped at the end; tests take a fresh
    database each (``postgres.new_database()``)."""
    from adk_actors.testing import TemporaryPostgres

    with TemporaryPostgres() as server:
        yield server


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


class SharedHost:
    """One host, on an actor system of its own, for those tests of a module that neither
    kill, stop nor reconfigure it and use sessions of their own (starting a host is
    ~23 actor processes in sequence; stopping one waits for each).

    :meth:`get` hands a test the host: the same one while its tree is as it started
    (each child of the root, and each child of the root's supervisors, reported running
    in the process it started in); a tree found otherwise (a test broke it, or a
    restart is under way) is stopped, its system with it, and a fresh host started in
    its place, so that a test that breaks the host fails alone. :meth:`close` stops
    whatever runs (the system's leftover processes raise, as the ``actor_system``
    fixture's do)."""

    def __init__(self, folder: Path, config: Callable[[Path], HostConfig]) -> None:
        self.folder, self.config = folder, config
        self.host: Host | None = None
        self._stack: ExitStack | None = None
        self._tree: dict[str, tuple[str, int | None]] | None = None
        self._started = 0

    def get(self) -> Host:
        if self.host is not None and (self._tree is None or self.tree() != self._tree):
            try:
                self.close()
            except LeftoverProcesses:  # killed: the test that broke the tree has failed, not this one
                pass
        if self.host is None:
            self._started += 1
            data = self.folder / f"host-{self._started}"
            with ExitStack() as stack:
                system = stack.enter_context(running_actor_system(data / "logs"))
                self.host = stack.enter_context(Host(self.config(data / "data"), system=system))
                self._stack = stack.pop_all()  # (a failed start: the system is shut down on the way out)
            self._tree = self.tree()
        return self.host

    def tree(self) -> dict[str, tuple[str, int | None]] | None:
        """(status, pid) of the root's children and of its supervisors' children, by path,
        asked from an endpoint of its own; None when a supervisor does not answer within
        5 s, or a child is not running."""
        host = self.host
        if host is None or host.root is None:
            return None
        try:
            with host.system.private() as endpoint:
                rows: dict[str, tuple[str, int | None]] = {}
                for info in SupervisorClient(endpoint, host.root.address, timeout=5.0).which_children():
                    rows[info.id] = (info.status, info.pid)
                    if info.type == "supervisor" and info.address is not None:
                        for inner in SupervisorClient(endpoint, info.address, timeout=5.0).which_children():
                            rows[f"{info.id}/{inner.id}"] = (inner.status, inner.pid)
        except Exception:  # a supervisor restarting, or not answering
            return None
        if any(status != "running" for status, _ in rows.values()):
            return None
        return rows

    def close(self) -> None:
        """Stop the host, then its system (:class:`LeftoverProcesses` if processes of it
        were left, killed); nothing when none runs."""
        stack, self._stack, self.host, self._tree = self._stack, None, None, None
        if stack is not None:
            stack.close()


@contextmanager
def serving(tmp_path: Path, host_settings: str = "", *, more_toml: str = "",
            apps: str = 'weather_bot = "examples.weather_bot.agent:root_agent"\n',
            env: dict[str, str] | None = None, prefix: tuple[str, ...] = (),
            port: int | None = None) -> Iterator[dict[str, Any]]:
    """``adk-actors serve`` in a subprocess (the weather_bot app, data in ``tmp_path``),
    every process it starts marked; yields port, process, marker, config and the
    paths of its stdout and stderr; ``host_settings`` are more ``[host]`` lines, ``apps``
    the ``[apps]`` lines, ``more_toml`` more sections, ``env`` more environment
    (``tests/`` is on its ``PYTHONPATH``, for ``runtime_agents``), ``prefix`` a command it
    runs under (``ip netns exec NAME``), ``port`` its actor system's (default: a free one).
    Afterwards: SIGTERM (if it still runs), then every marked process is killed.

    Ports it picked itself that another process took before the host bound them (a
    free port is free only a moment: other tests and programs run beside) are picked
    again, up to three times; a port given, or any other failure to start, fails."""
    config = tmp_path / "host.toml"
    out, err = tmp_path / "serve.out", tmp_path / "serve.err"
    for attempt in range(3):
        actor_port = port or free_port()
        http = "" if "[http]" in more_toml else f"[http]\nport = {free_port()}\n"  # tests never meet on one
        config.write_text(f'[host]\nport = {actor_port}\ndata_dir = "{tmp_path / "data"}"\nshutdown_timeout = 10\n'
                          f'{host_settings}{http}[apps]\n{apps}{more_toml}')
        with process_marker(tmp_path) as (marker, fd), open(out, "w") as stdout, open(err, "w") as stderr:
            process = subprocess.Popen([*prefix, sys.executable, "-m", "adk_actors.cli", "serve", "--config",
                                        str(config)], cwd=ROOT, stdout=stdout, stderr=stderr, pass_fds=(fd,),
                                       env={**os.environ, "PYTHONPATH": str(ROOT / "tests"), **(env or {})})
        try:
            wait_until(lambda: "listening" in out.read_text() or process.poll() is not None, timeout=90)  # at load
        except BaseException:
            process.kill()
            kill_marked_processes(marker, grace=15)
            raise
        taken = process.poll() is not None and "already in use" in err.read_text()
        if not taken or attempt == 2 or (port is not None and "[http]" in more_toml):
            break
        kill_marked_processes(marker, grace=15)
    port = actor_port
    try:
        assert process.poll() is None, err.read_text()
        found = re.search(r"HTTP API and console: (\S+)", out.read_text())
        yield {"port": port, "process": process, "marker": marker, "out": out, "err": err, "config": config,
               "url": found.group(1) if found else None}
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
        kill_marked_processes(marker, grace=15)


def last_text(url: str, app: str, text: str, user: str = "ann", session: str = "s1") -> str:
    """One turn over the served host's ``/run``: the text of its last event."""
    events = httpx.post(f"{url}/run", timeout=60, json={
        "appName": app, "userId": user, "sessionId": session,
        "newMessage": {"role": "user", "parts": [{"text": text}]}})
    events.raise_for_status()
    return str(events.json()[-1]["content"]["parts"][0]["text"])


def answers(url: str) -> bool:
    """Does ``url`` answer 200 now? (False while its server is not up.)"""
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture
def client(served: dict[str, Any]) -> Iterator[httpx.Client]:
    """An httpx client of the module's ``served`` host (``serving``)."""
    with httpx.Client(base_url=served["url"], timeout=30) as http:
        yield http


def turn_in_background(runner: Any, user_id: str, session_id: str, text: str) -> tuple[Any, list[Any]]:
    """Start one turn on a thread; return (the thread, a list that gets the turn's
    events, or the RunFailedError it ended with)."""
    import threading

    from adk_actors import RunFailedError

    outcome: list[Any] = []

    def turn() -> None:
        try:
            outcome.append(list(runner.run(user_id, session_id, text)))
        except RunFailedError as exc:
            outcome.append(exc)

    caller = threading.Thread(target=turn)
    caller.start()
    return caller, outcome


def session_workers(host: Any, app: str, user: str, session: str) -> list[int]:
    """The pids of the run workers connected to the partition of session (app, user,
    session): its turns run on them (the workers are the processes of that partition's
    pool, not of the partition)."""
    from adk_actors.messages import LiveWorkers
    from supervision import call

    workers: list[int] = call(host.system, host.partition_for(app, user, session, refresh=True), LiveWorkers(),
                              timeout=5)
    return workers


def run_worker(host: Any, app: str, user: str, session: str, run_id: str) -> int:
    """The pid of the run worker that runs ``run_id`` of session (app, user, session)."""
    from adk_actors.messages import WorkerRuns
    from supervision import call

    holders: dict[int, list[str]] = call(host.system, host.partition_for(app, user, session, refresh=True),
                                         WorkerRuns(), timeout=5)
    (pid,) = [pid for pid, runs in holders.items() if run_id in runs]
    return pid


def wait_workers_gone(host: Any, app: str, user: str, session: str, pids: list[int]) -> None:
    """Wait until the partition of session (app, user, session) has seen each of the
    workers ``pids`` (killed) go: a turn started sooner may be given to one still dying,
    and fail ``killed`` with it."""
    wait_until(lambda: not set(session_workers(host, app, user, session)) & set(pids), timeout=10,
               message=f"the partition still lists a killed worker of {pids}")
