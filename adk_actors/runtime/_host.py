"""The host: the whole supervision tree, started in-process.

``with Host(HostConfig(apps={...})) as host:`` starts, in order: the session store's
migrations (once, in this process), an actor system on loopback (or uses the one
given), then the root supervisor::

    root (rest_for_one; root_intensity restarts in root_period s, then the host stops)
    ├── registry          names that follow restarts
    ├── sessions          one_for_one over N partitions
    │   ├── sessions-0    holds its sessions (single writer of each) -> its run workers
    │   └── sessions-1    ...
    └── services          one_for_one, its own restart budget; each child with backoff
        ├── breakers      one circuit breaker per model name, shared by all runs
        ├── artifacts     versioned artifact files under the data dir
        ├── memory        searchable memories of past sessions, per (app, user)
        ├── approvals     tool calls waiting for a human's decision (persisted)
        ├── credentials   API keys and OAuth2 tokens per (app, user, key); file 0600
        ├── mcp           one actor per MCP toolset, started on first use (runtime._mcp)
        └── cluster       in a cluster only: its membership, sent to the partitions (runtime._cluster)

rest_for_one at the root, as ADK Elixir: everything after a child depends on it (a new
registry must be refilled by restarting what registered in it). The services sit under
a supervisor of their own because nothing depends on their state (runs find them by
name and fail fast while one restarts): a service that dies is restarted there, after a
short backoff, and is never counted against the root's budget; only a whole
``services`` that gives up is. So random kills of services, sessions and runs cannot
use up the root's budget; only the three root children can. Leaving the block stops the
tree in reverse order (runs in flight get ``RunFailed(interrupted)``), then the actor
system if the host started it.

Its parts: the configuration and its checks (``_host_config``), the tree's spec
(``_host_tree``, imported only by a host that starts); here, starting and stopping the
tree, and where a caller's requests go (the partitions, a cluster's members).
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Any

from supervision import (
    CallTimeout,
    ServerNotRunning,
    SupervisionError,
    Supervisor,
    SupervisorClient,
    call,
    start_actor_system,
    start_supervisor,
)
from supervision.lowlevel import (
    attach_actor_system,
    direct_thespian_log,
    find_global,
    pid_space,
    proc_stat,
    process_alive,
    takes_connection,
)
from supervision.protocol import ChildNotFound, PidSpace

from .._exceptions import HostError, HostStopped
from .._files import private_dir, private_file
from ..messages import partition_of, session_key
from ..otel import quiet_unused_a2a_spans
from ._host_config import HostConfig, check_cluster
from ._jobs_client import Jobs
from ._placement import ClusterView, Member, Reachability, ranked
from ._routing import root_not_running
from ._runner import Runner

__all__ = ["ROOT_NAME", "Host", "HostConfig"]

#: Thespian's own log (its transport's and admin's warnings), in the host's data folder
#: unless ``THESPLOG_FILE`` names another file (``supervision.lowlevel.direct_thespian_log``).
THESPIAN_LOG = "thespian.log"
#: The Thespian global name of a host's root supervisor (how other processes find it).
ROOT_NAME = "adk-actors-root"
#: How long a cluster's view routes a caller's requests (``Host.session_home``) before it
#: is asked again, and how long a member found to take (or refuse) connections is believed.
VIEW_FRESH = 1.0
#: How long the ``sessions`` supervisor has to list its partitions. One the root is
#: restarting (rest_for_one, after an earlier child died) may be stopping its partitions
#: meanwhile and never answer: the caller asks the root again instead of waiting for it.
LIST_WAIT = 2.0


class Host:
    def __init__(self, config: HostConfig, *, system: Any = None) -> None:
        self.config = config
        self.system = system
        self._owns_system = system is None
        self.root: SupervisorClient | None = None
        self._stopped = False  # stop() began: callers are answered HostStopped (partitions, partition_alive)
        self._partitions: list[Any] = []
        self._partition_pids: list[int | None] = []  # of the partitions, in the same order
        self._same_pids: bool | None = None  # do the partitions' pids mean the same process here? (None: not asked)
        self._partitions_lock = threading.Lock()
        self._root_pid: int | None = None  # the root supervisor's process, where it runs here
        self._jobs: Jobs | None = None
        self._in_cluster: bool | None = None  # (cluster_view: None until asked)
        self._view_lock = threading.Lock()
        self._view_seen: tuple[float, ClusterView | None] = (float("-inf"), None)  # (when, what) for session_home
        self._members_answer = Reachability(VIEW_FRESH, keep_success=True)  # which members take a connection

    @staticmethod
    def load_tree_code() -> None:
        """Import the code of the tree's actors (session partitions, run workers,
        services) and the log setup. Not at the top of this module: a client of a
        running host needs none of it (bench/startup.py). :meth:`start` calls it before
        the actor system it starts, so every actor is forked from an image that has it;
        call it before starting an actor system you give to a Host, or each supervisor
        restarted imports its children's code again. Then builds what each forked
        process would otherwise build at its first turn (``_warm_image``)."""
        from .. import log  # noqa: F401
        from . import (  # noqa: F401
            _approvals,
            _artifacts,
            _breakers,
            _credentials,
            _host_tree,
            _jobs,
            _memory,
            _partition,
            _run_pool,
        )
        from ._warm_image import warm_image

        warm_image()

    def start(self) -> Host:
        """Start the tree, and the actor system first if none was given. In order:
        :meth:`load_tree_code`; check the jobs' cron entries
        (:class:`ConfigError` for one whose job could never run); make the data folder and log file private; check the
        session store (:class:`HostError` if it cannot be opened or is corrupted); start
        the system, with Thespian's own log in ``<data_dir>/thespian.log`` (0600; unless
        ``THESPLOG_FILE`` names another file); start the root and its children
        (``start_supervisor``'s error if one fails, with the system stopped if this Host
        started it)."""
        self.load_tree_code()
        self._stopped = False
        from ..log import JSON_LINES
        from ._host_tree import tree_spec
        from ._jobs import check_jobs

        check_jobs(self.config.jobs, self.config.apps, self.config.agents_dir)  # ConfigError: nothing started
        private_dir(self.config.data_dir)
        if self.config.log_file:
            private_file(self.config.log_file)
        self._check_store()
        leader = check_cluster(self.config)
        quiet_unused_a2a_spans()  # (the actors forked from now on)
        if self.system is None:
            # Thespian's own log: this host's data folder, not the machine's /tmp/thespian.log
            direct_thespian_log(str(Path(self.config.data_dir) / THESPIAN_LOG))
            self.system = start_actor_system(self.config.port, host=self.config.address, log_file=self.config.log_file,
                                             log_level=self.config.log_level, log_formatter=JSON_LINES,
                                             convention=leader,
                                             convention_checkin=self.config.cluster_checkin if leader else None)
        tree = tree_spec(self.config, self.holder_name)
        try:
            self.root = start_supervisor(self.system, tree, timeout=120.0,
                                         global_name=ROOT_NAME if self.config.extra.get("global_root") or self.config.clients else None)
        except Exception:
            self._shutdown_system()
            raise
        self._root_pid = _parent_of(self.root.pids().get("registry"))
        return self

    def cluster_view(self, timeout: float = 5.0) -> ClusterView | None:
        """The cluster as this host sees it (None outside a cluster, or before its first
        view). Asked from a private endpoint (safe from any thread); a host found outside
        a cluster is not asked again (its services never gain a cluster actor). Raises
        :class:`HostError` while the host, its services or its cluster actor restart."""
        root = self.root
        if root is None:
            raise HostError("the host is not running")
        if self._in_cluster is False:
            return None
        with self.system.private() as endpoint:
            services = SupervisorClient(endpoint, root.address, timeout=timeout).child("services").address
            if services is None:
                raise HostError("the service supervisor is restarting")
            try:
                address = SupervisorClient(endpoint, services, timeout=timeout).child("cluster").address
            except ChildNotFound:
                self._in_cluster = False
                return None
            self._in_cluster = True
            if address is None:
                raise HostError("the cluster actor is restarting")
            view = call(endpoint, address, "view", timeout=timeout)
        return view if isinstance(view, ClusterView) else None

    def session_home(self, app_name: str, user_id: str, session_id: str) -> Any | None:
        """Where a caller here sends the session's requests when its home is another
        member of the cluster: that member's ``sessions`` supervisor (which routes the
        session's key to its partition), so the request takes no hop through this host's
        partition. By the view last seen, asked again when older than
        :data:`VIEW_FRESH`. None (the request goes to this host's partition, which
        forwards it or fails the session over) when the host is in no cluster (its
        config joins none: a client made with :meth:`connect` alone never routes), has no
        view yet, is the home itself, or the home does not take a connection now (a
        member dead or cut off; asked again after :data:`VIEW_FRESH`)."""
        if not self.config.cluster_join or self._in_cluster is False:
            return None  # (a host outside a cluster asks nobody, even while its services restart)
        view = self._fresh_view()
        if view is None or not view.members:
            return None
        home = ranked(session_key(app_name, user_id, session_id), view.members)[0]
        if home.name == self.holder_name or home.sessions is None or not self._member_answers(home):
            return None
        return home.sessions

    def is_member_sessions(self, address: Any) -> bool:
        """Whether ``address`` is another member's ``sessions`` supervisor in the view last seen."""
        return self._member_at(address) is not None

    def forget_home(self, address: Any) -> None:
        """A request sent to ``address`` (a member's ``sessions`` supervisor, as
        :meth:`session_home` gave it) found nobody there: that member is taken for
        not answering until it is asked again (:data:`VIEW_FRESH`), and the view is
        asked again at the next request (it names the supervisor's next address)."""
        member = self._member_at(address)
        if member is not None:
            self._members_answer.refused(member.name, time.monotonic())
        self._view_seen = (float("-inf"), self._view_seen[1])

    def _member_at(self, address: Any) -> Member | None:
        """The member whose ``sessions`` supervisor is at ``address`` in the view last seen."""
        view = self._view_seen[1]
        return next((m for m in view.members if m.sessions and str(m.sessions) == str(address)), None) \
            if view is not None else None

    def _fresh_view(self) -> ClusterView | None:
        """The view last seen; when it is older than :data:`VIEW_FRESH`, one caller asks
        again (the others go on with the one they have: a host restarting its services
        makes the asking wait, and no caller waits on another's asking)."""
        seen_at, view = self._view_seen
        now = time.monotonic()
        if now - seen_at < VIEW_FRESH or not self._view_lock.acquire(blocking=False):
            return view
        try:
            try:
                view = self.cluster_view(timeout=2.0)
            except (HostError, SupervisionError, ServerNotRunning):
                view = None  # restarting: this host's partitions route meanwhile
            self._view_seen = (time.monotonic(), view)
        finally:
            self._view_lock.release()
        return view

    def _member_answers(self, member: Member) -> bool:
        """Whether ``member``'s ``sessions`` supervisor takes a connection (believed for
        :data:`VIEW_FRESH`)."""
        return self._members_answer.answers(member.name, time.monotonic(),
                                            lambda: takes_connection(member.sessions) is not False)

    @property
    def jobs(self) -> Jobs:
        """The host's background jobs (:class:`~adk_actors.runtime.Jobs`), as the operator."""
        if self._jobs is None:
            self._jobs = Jobs(self)
        return self._jobs

    def services(self) -> SupervisorClient:
        """The supervisor of the service actors (breakers, artifacts, memory, approvals,
        credentials)."""
        address, root = self._root_child("services", "the service supervisor")
        return SupervisorClient(self.system, address, timeout=root.timeout)

    def sessions_address(self) -> Any:
        """The address of the session supervisor, which routes each session request to the
        partition holding the session now, through its restarts (``messages``: a session's
        address is its app, user and id). It changes only when the supervisor itself is
        restarted (beyond the partitions' intensity); actors may also find it as
        ``sessions`` in the host's registry (``WhereIs``)."""
        return self._root_child("sessions", "the session supervisor")[0]

    def _root_child(self, child_id: str, what: str) -> tuple[Any, SupervisorClient]:
        """The root's child ``child_id`` (its address, and the root); ``HostError`` when
        the host is not running or that child is restarting."""
        root = self.root
        if root is None:
            raise HostError("the host is not running")
        address = root.child(child_id).address
        if address is None:
            raise HostError(f"{what} is restarting")
        return address, root

    def _check_store(self) -> None:
        """Open the session store once in this process: its migrations run, and SQLite's
        quick check reads every page (a corrupted file stops the start here, with
        :class:`HostError`, instead of failing the first turn that touches it). A
        PostgreSQL store is reached and migrated here; its URL's password is in no message."""
        from ..store import connection_name, open_session_store, store_name

        where = store_name(self.config.store_location)
        try:
            store = open_session_store(self.config.store_location,
                                       application_name=connection_name(self.holder_name, "start"))
        except Exception as exc:
            raise HostError(f"the session store {where} cannot be opened: {exc}") from None
        try:
            problems = store.quick_check()
        finally:
            store.close()
        if problems:
            raise HostError(f"the session store {where} is corrupted ({'; '.join(problems[:3])}): "
                            "restore it from a backup, or move it away to start with an empty store")

    @property
    def holder_name(self) -> str:
        """This host's name among the hosts that share a store: where its actor system's
        admin listens, ``<address>:<port>`` (the writer of its sessions' leases, the
        node of its jobs; another host checks that it takes a connection before it
        forwards a request to it)."""
        address, port = getattr(self.system, "admin_address", None) or (self.config.address, self.config.port)
        return f"{address}:{port}"

    @classmethod
    def connect(cls, port: int, address: str = "127.0.0.1") -> Host:
        """Attach to a host process running on ``port`` (never starts one)."""
        host = cls(HostConfig(apps={}))
        host.attach(port, address)
        return host

    def attach(self, port: int, address: str = "127.0.0.1") -> None:
        """Make this Host, made without a system and never started, the client of a host
        process running on ``port``: what was built on it (an HTTP app) works from now.
        Raises :class:`HostError` when nothing listens there, or no adk-actors host does."""
        if self.system is not None:
            raise HostError("this Host already has an actor system")
        with socket.socket() as probe:
            probe.settimeout(1.0)
            if probe.connect_ex((address, port)) != 0:
                raise HostError(f"no host is running on {address}:{port} (start one with `adk-actors serve`)")
        system = attach_actor_system(port, address)
        root = find_global(system, Supervisor, ROOT_NAME)
        if root is None:
            raise HostError(f"an actor system runs on port {port}, but no adk-actors host in it")
        self.system, self._owns_system = system, False
        self.root = SupervisorClient(system, root)

    def stop(self, timeout: float = 60.0) -> None:
        """Stop the tree gracefully (every child in reverse start order), within
        ``timeout`` seconds; then stop the actor system if the host started it. From its
        start, callers here get :class:`HostStopped` at once, those waiting included.

        If the root does not stop in time (hung, or stopped with SIGSTOP), its process
        gets SIGKILL and every process of the tree dies with it (each has its parent's
        death signal); that is logged, and ``stop`` returns all the same."""
        self._stopped = True
        try:
            if self.root is not None:
                try:
                    self.root.stop(timeout=timeout)
                except SupervisionError as exc:
                    self._kill_tree(f"the root did not stop within {timeout} s ({type(exc).__name__})")
        finally:
            self.root = None
            self._shutdown_system()

    def alive(self) -> bool:
        """False once the root supervisor is gone (it gave up, or was killed); a root
        too busy to answer within 5 s still counts as alive."""
        root = self.root
        if root is None:
            return False
        try:
            SupervisorClient(self.system, root.address, timeout=5.0).which_children()
        except ServerNotRunning:
            return False
        except SupervisionError:
            return True
        return True

    def _kill_tree(self, why: str) -> None:
        from ..log import get_logger  # the host's side only: a client's Host loads no logging setup

        pid = self._root_pid
        get_logger("adk_actors.host").warning("killing the supervision tree", reason=why, root_pid=pid)
        if pid is not None and process_alive(pid):
            os.kill(pid, signal.SIGKILL)

    def disconnect(self) -> None:
        """Leave a host attached with :meth:`connect` running."""
        self.root = None
        self.system = None

    def _shutdown_system(self) -> None:
        if self._owns_system and self.system is not None:
            self.system.shutdown()
            self.system = None

    def __enter__(self) -> Host:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- routing ------------------------------------------------------------------------------

    def partitions(self, refresh: bool = False) -> list[Any]:
        """The session partitions' addresses (asked once, again with ``refresh``).
        Safe from any thread: the asking is done under a lock, from a private endpoint
        (a Thespian endpoint serves one thread at a time). :class:`HostError` while the
        session supervisor or a partition restarts (a supervisor that does not list its
        partitions within ``LIST_WAIT`` is taken for restarting); :class:`HostStopped` once
        :meth:`stop` began, or the root refuses it or stops (``_routing.root_not_running``)."""
        with self._partitions_lock:
            if self._stopped:
                raise HostStopped("the host has stopped")
            root = self.root
            if root is None:  # no actor system either: never started (or disconnected), nothing to wait for
                raise (HostStopped if self.system is None else HostError)("the host is not running")
            if refresh or not self._partitions:
                with self.system.private() as endpoint:
                    try:
                        sessions = SupervisorClient(endpoint, root.address, timeout=root.timeout).child("sessions")
                    except ServerNotRunning as exc:  # HostStopped, unless the root is still starting
                        raise root_not_running(exc) from None
                    if sessions.address is None:
                        raise HostError("the session supervisor is restarting")
                    try:
                        infos = SupervisorClient(endpoint, sessions.address,
                                                 timeout=min(root.timeout, LIST_WAIT)).which_children()
                    except CallTimeout:
                        raise HostError("the session supervisor did not list its partitions: it is restarting") from None
                    if self._same_pids is None and infos and infos[0].address is not None:
                        try:  # once: may the partitions' pids be looked at here? (partition_alive)
                            theirs = call(endpoint, infos[0].address, PidSpace(), timeout=root.timeout)
                            self._same_pids = theirs is not None and theirs == pid_space()
                        except Exception:  # asked again with the next refresh
                            pass
                self._partitions = [info.address for info in infos]
                self._partition_pids = [info.pid for info in infos]
            if any(address is None for address in self._partitions):
                raise HostError("a session partition is restarting")
            return self._partitions

    def partition_for(self, app_name: str, user_id: str, session_id: str, refresh: bool = False) -> Any:
        return partition_of(self.partitions(refresh), app_name, user_id, session_id)

    def listed_partition_for(self, app_name: str, user_id: str, session_id: str) -> Any:
        """The session's partition as last listed, without asking anyone (None when the
        partitions were not listed yet, or one of them is restarting)."""
        with self._partitions_lock:
            listed = list(self._partitions)
        if not listed or any(address is None for address in listed):
            return None
        return partition_of(listed, app_name, user_id, session_id)

    def partition_alive(self, address: Any) -> bool | None:
        """Whether the partition at ``address`` (as last listed) still runs, from its
        process (no message: a few microseconds); None when that cannot be told here:
        the host's pids are not this process's (another machine or container:
        ``supervision.lowlevel.pid_space``), or ``address`` is no partition it listed.
        False once :meth:`stop` began (a caller waiting on it asks no more)."""
        with self._partitions_lock:
            known = list(zip(self._partitions, self._partition_pids, strict=False))
        return self.tree_process_alive(next((pid for listed, pid in known if listed == address), None))

    def tree_process_alive(self, pid: int | None) -> bool | None:
        """Whether process ``pid`` of the host's tree (a partition, a service) still runs,
        from the process table (no message: a few microseconds); None when that cannot
        be told here: the host's pids are not this process's (``supervision.lowlevel.pid_space``,
        asked with the partitions' list), or ``pid`` is not known. False once
        :meth:`stop` began."""
        if self._stopped:
            return False
        if not self._same_pids or pid is None:
            return None
        return process_alive(pid)

    def http_url(self, timeout: float = 10.0) -> str | None:
        """Where the host's HTTP API listens (its ``http`` child), or None when it has none."""
        if self.root is None:
            raise HostError("the host is not running")
        info = next((c for c in self.root.which_children() if c.id == "http"), None)
        if info is None or info.address is None:
            return None
        with self.system.private() as endpoint:
            url: str = call(endpoint, info.address, "url", timeout=timeout)
        return url

    def runner(self, app_name: str, **kwargs: Any) -> Any:
        return Runner(self, app_name, **kwargs)


def _parent_of(pid: int | None) -> int | None:
    """The parent of local process ``pid`` (a root child's parent is the root)."""
    stat = proc_stat(pid) if pid else None
    return stat[1] if stat is not None else None
