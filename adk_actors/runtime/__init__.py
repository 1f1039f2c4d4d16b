"""The actor runtime: supervised session partitions holding the sessions, run workers
streaming each run's events, the services, background jobs, the host and the Runner.
``adk_actors.runtime.testing`` (imported on its own: it loads the engine) holds
``LocalHost``, a host in the test's process for unit tests of code using a Runner."""

from ._host import Host, HostConfig
from ._jobs_client import Jobs
from ._live_run import LiveRun
from ._placement import ClusterView, Member, ranked
from ._runner import Runner
from ._service_calls import Credential

__all__ = ["ClusterView", "Credential", "Host", "HostConfig", "Jobs", "LiveRun", "Member", "Runner", "ranked"]
