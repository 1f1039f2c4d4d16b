"""Host configuration: TOML (stdlib ``tomllib``) validated by pydantic, environment overrides.

Precedence, highest first: environment variables ``ADK_ACTORS_<SECTION>__<KEY>`` (for
example ``ADK_ACTORS_HOST__PORT=19500``), then the TOML file, then defaults. A bad
config fails at start with :class:`ConfigError` naming the file, the key and what was
expected.
"""

from __future__ import annotations

import ipaddress
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from ._exceptions import ConfigError
from ._names import name_problem
from ._validate import MAX_JSON_DEPTH
from .jobs import Backoff, CronEntry, JobsConfig, JobSpec, cron_problem, cron_timing_problem

__all__ = ["ArtifactsSection", "BackoffSection", "BreakerSection", "ConfigError", "CronSection", "HostSection", "HttpSection",
           "JobsSection", "LimitsSection", "LoggingSection", "RetrySection", "Settings", "StoreSection",
           "load_settings"]


class HostSection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Every socket of the actor system listens on this address only. The actor
    # system's wire is unauthenticated pickle: keep it on loopback, or, for several
    # hosts, on a private network between them alone.
    address: str = "127.0.0.1"
    port: int = Field(default=19470, ge=1, le=65535)
    data_dir: str = "data"
    # A folder of YAML apps (<agents_dir>/<name>/root_agent.yaml), google-adk's layout:
    # served as they appear, and where adk-web's agent builder saves. Empty: <data_dir>/agents.
    agents_dir: str = ""
    # google-adk's conformance runner (`adk conformance record|test`) records and replays
    # cases under this folder; empty: both are refused (the path comes from the client).
    conformance_dir: str = ""
    partitions: int = Field(default=2, ge=1, le=64)
    idle_timeout: float = Field(default=300.0, gt=0)
    run_timeout: float = Field(default=600.0, ge=0)  # a run's deadline when its RunConfig sets none; 0: none
    # A run that must stop (killed, cancelled, timed out, its session crashed) may take
    # this long; past it, the run worker process holding it is killed (its other runs
    # end interrupted). Its caller hears the run's end only once it stopped.
    run_stop_grace: float = Field(default=2.0, gt=0, le=600)
    max_queued_runs: int = Field(default=8, ge=0)
    run_workers: int = Field(default=2, ge=1, le=64)  # per partition
    runs_per_worker: int = Field(default=0, ge=0)  # 0: no limit; 1: every turn has a process to itself
    max_run_workers: int = Field(default=32, ge=1, le=1024)  # per partition, with runs_per_worker
    trace_turns: int = Field(default=20, ge=0, le=10_000)  # turns whose trace each session keeps; 0: no tracing
    shutdown_timeout: float = Field(default=30.0, gt=0)
    restart_intensity: int = Field(default=40, ge=0)
    restart_period: float = Field(default=10.0, gt=0)
    # Health checks: every actor is asked by its parent every health_interval seconds;
    # one alive but not answering for health_timeout seconds (stopped, stuck) is killed
    # and restarted. 0: no health checks.
    health_interval: float = Field(default=1.0, ge=0)
    health_timeout: float = Field(default=5.0, ge=0)
    # A session that crashes more than session_intensity times within session_period
    # seconds fails: it answers session_failed until an operator resets it.
    session_intensity: int = Field(default=5, ge=0)
    session_period: float = Field(default=60.0, gt=0)
    # A pool of run workers whose workers die, unasked, more than worker_intensity times
    # within worker_period seconds exits, and run_pools restarts it (a crash loop escalates).
    worker_intensity: int = Field(default=20, ge=0)
    worker_period: float = Field(default=5.0, gt=0)

    @model_validator(mode="after")
    def _check_health(self) -> HostSection:
        if self.health_interval and self.health_timeout < self.health_interval:
            raise ValueError("health_timeout must be at least health_interval")
        return self

    @field_validator("address")
    @classmethod
    def _check_address(cls, address: str) -> str:
        try:
            ipaddress.IPv4Address(address)
        except ValueError:
            raise ValueError("must be an IPv4 address, such as 127.0.0.1") from None
        return address

    @field_validator("data_dir")
    @classmethod
    def _check_data_dir(cls, data_dir: str) -> str:
        if Path(data_dir).exists() and not Path(data_dir).is_dir():
            raise ValueError("must be a directory, but a file of that name exists")
        return data_dir

    @property
    def agents_folder(self) -> str:
        return self.agents_dir or str(Path(self.data_dir) / "agents")


#: Keys whose values are never echoed in a config error (they may hold a password).
_SECRET_KEYS = frozenset({"store.url"})


class StoreSection(BaseModel):
    """Where sessions are stored. Empty ``url``: SQLite in ``data_dir`` (the embedded
    default). ``postgresql://user:password@host:port/db``: a PostgreSQL database, the
    store several hosts share (schema created and migrated on start). The password is
    shown nowhere; ``ADK_ACTORS_STORE__URL`` keeps it out of the config file."""

    model_config = ConfigDict(extra="forbid")

    url: str = ""
    # How long a partition's lease on a session it holds lasts without renewal (it
    # renews every third of it): the longest a session waits for another host after
    # its holder was cut off.
    lease_seconds: float = Field(default=15.0, ge=1.0, le=3600.0)

    @field_validator("url")
    @classmethod
    def _check_url(cls, url: str) -> str:
        if url and not url.startswith(("postgresql://", "postgres://")):
            raise ValueError("must be empty (SQLite in data_dir) or a postgresql:// URL")
        return url


class ClusterSection(BaseModel):
    """Hosts that form a cluster (Thespian's convention, docs/scaling.md): ``join`` is
    the leader's ``<ip>:<port>`` (its ``[host] address`` and ``port``); the host whose own
    address it is, is the leader. Every member needs the same ``[store] url``."""

    model_config = ConfigDict(extra="forbid")

    join: str = ""
    checkin_seconds: float = Field(default=5.0, ge=1.0, le=3600.0)  # a member that misses 3 is gone
    refresh_seconds: float = Field(default=1.0, ge=0.1, le=60.0)  # how often the leader sends the view
    allow_public: bool = False  # let the actor system listen on a public address (unauthenticated pickle)


class LoggingSection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    file: str = ""  # empty: <data_dir>/host.log


class BreakerSection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    consecutive_failures: int = Field(default=5, ge=1)
    failure_rate: float = Field(default=0.5, gt=0, le=1)
    window_seconds: float = Field(default=60.0, gt=0)
    minimum_calls: int = Field(default=10, ge=1)
    slow_call_seconds: float | None = Field(default=None, gt=0)
    open_seconds: float = Field(default=30.0, gt=0)
    max_open_seconds: float = Field(default=300.0, gt=0)
    half_open_probes: int = Field(default=1, ge=1)
    probe_deadline: float = Field(default=120.0, gt=0)


class RetrySection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_attempts: int = Field(default=3, ge=1)
    base_delay: float = Field(default=1.0, ge=0)
    max_delay: float = Field(default=30.0, ge=0)
    timeout: float = Field(default=120.0, gt=0)


class ArtifactsSection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_bytes: int = Field(default=50 * 1024 * 1024, ge=1)
    # Where artifacts' files are kept; empty: <data_dir>/artifacts. Hosts sharing a
    # PostgreSQL store share this folder too (a shared filesystem), so a session that
    # moves to another host finds its artifacts there.
    dir: str = ""


class LimitsSection(BaseModel):
    """What one request may cost the host (see ``adk_actors.messages.Limits``)."""

    model_config = ConfigDict(extra="forbid")

    max_message_bytes: int = Field(default=1024 * 1024, ge=1)
    max_events_per_turn: int = Field(default=2500, ge=1)
    max_sessions_per_user: int = Field(default=1000, ge=1)
    max_json_depth: int = Field(default=32, ge=1, le=MAX_JSON_DEPTH)


class HttpSection(BaseModel):
    """The host's HTTP front door (google-adk's API and the console).

    Loopback with no token by default, as ``adk web``. Any other address needs
    ``tokens``: each maps a bearer token to the user id it may act as, or to ``"*"``
    for an operator (every user, the supervision tree). Tokens are better given in
    the environment (``ADK_ACTORS_HTTP__TOKENS='{"<token>": "ann"}'``) than in a file.
    """

    model_config = ConfigDict(extra="forbid")
    enabled: bool = True
    address: str = "127.0.0.1"
    port: int = Field(default=19471, ge=0, le=65535)  # 0: a free port, logged
    tokens: dict[str, str] = Field(default_factory=dict)
    allow_origins: list[str] = Field(default_factory=list)  # CORS and the origin guard's allowed origins
    max_body_bytes: int = Field(default=2 * 1024 * 1024, ge=1024)
    #: The URL clients reach the front door at, as A2A agent cards name it (behind a
    #: proxy, say); None: the scheme and Host header of each request.
    public_url: str | None = None
    #: ``/run``, ``/run_sse`` and ``/run_live`` on a session that does not exist create
    #: it (google-adk's ``adk api_server --auto_create_session``); off: 404
    auto_create_session: bool = False
    #: the web console at ``/`` (and its ``/console/`` routes); ``adk-actors api_server``
    #: turns it off, as google-adk's ``api_server`` serves no UI
    console: bool = True

    @field_validator("address")
    @classmethod
    def _check_address(cls, address: str) -> str:
        try:
            ipaddress.ip_address(address)
        except ValueError:
            raise ValueError("must be an IP address, such as 127.0.0.1") from None
        return address

    @field_validator("tokens")
    @classmethod
    def _check_tokens(cls, tokens: dict[str, str]) -> dict[str, str]:
        for token, user in tokens.items():
            if len(token) < 16:
                raise ValueError("every token must be at least 16 characters long")
            if not user:
                raise ValueError("every token maps to a user id, or to \"*\" for an operator")
        return tokens

    @model_validator(mode="after")
    def _public_needs_tokens(self) -> HttpSection:
        if self.enabled and not self.loopback and not self.tokens:
            raise ValueError(f"address {self.address} is not loopback: give tokens (ADK_ACTORS_HTTP__TOKENS), "
                             "so that nobody else can reach the host unauthenticated")
        return self

    @property
    def loopback(self) -> bool:
        return ipaddress.ip_address(self.address).is_loopback


class CronSection(BaseModel):
    """One ``[[jobs.cron]]`` schedule: an agent run (``app``, ``message``) or a function
    (``function``, ``args``), enqueued at each time ``schedule`` names, on the wall clock
    of ``timezone``."""

    model_config = ConfigDict(extra="forbid")

    name: str
    schedule: str
    timezone: str = "UTC"
    app: str = ""
    message: str = ""
    user: str = "operator"
    function: str = ""
    args: dict[str, Any] = Field(default_factory=dict)
    queue: str = "default"
    max_attempts: int = Field(default=20, ge=1)

    @model_validator(mode="after")
    def _check(self) -> CronSection:
        problem = name_problem(self.name, "cron name")
        if problem is not None:
            raise ValueError(problem)
        timing = cron_timing_problem(self.schedule, self.timezone, expression_key="schedule")
        if timing is not None:
            raise ValueError(f"cron {self.name!r}: {timing}")
        if bool(self.app) == bool(self.function):
            raise ValueError(f"cron {self.name!r}: give an app and a message, or a function")
        if self.app and not self.message:
            raise ValueError(f"cron {self.name!r}: message: an agent job needs a message")
        return self

    def entry(self) -> CronEntry:
        kind: Literal["agent", "function"] = "agent" if self.app else "function"
        spec = JobSpec(kind=kind, user_id=self.user, queue=self.queue, app_name=self.app, message=self.message,
                       function=self.function, args=dict(self.args), max_attempts=self.max_attempts)
        return CronEntry(self.name, self.schedule, spec, self.timezone)


class BackoffSection(BaseModel):
    """A queue's backoff (``[jobs.queue_backoff.<queue>]``): seconds."""

    model_config = ConfigDict(extra="forbid")

    base: float = Field(default=15.0, gt=0)
    max_delay: float = Field(default=3600.0, gt=0)
    jitter: float = Field(default=0.1, ge=0, le=1)


class JobsSection(BaseModel):
    """Background jobs (docs/jobs.md): the queues and their concurrency, the backoff of
    failed attempts, how often the queue ticks, how long finished jobs are kept, the
    functions the HTTP API may enqueue (none by default: an import path in a request is
    code run on the host), and cron schedules. ``enabled = false``: no jobs actor."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    queues: dict[str, int] = Field(default_factory=lambda: {"default": 4})
    backoff_base: float = Field(default=15.0, gt=0)
    backoff_max: float = Field(default=3600.0, gt=0)
    tick: float = Field(default=1.0, gt=0, le=60)
    prune_after_days: float = Field(default=7.0, gt=0)
    queue_backoff: dict[str, BackoffSection] = Field(default_factory=dict)  # a queue's own backoff
    http_functions: list[str] = Field(default_factory=list)
    cron: list[CronSection] = Field(default_factory=list)

    @field_validator("queues")
    @classmethod
    def _check_queues(cls, queues: dict[str, int]) -> dict[str, int]:
        for name, limit in queues.items():
            problem = name_problem(name, "queue name")
            if problem is not None:
                raise ValueError(problem)
            if limit < 1:
                raise ValueError(f"queue {name!r}: its concurrency must be at least 1")
        return queues

    @model_validator(mode="after")
    def _check_cron(self) -> JobsSection:
        """Each schedule has a name of its own and a queue of this section's."""
        names: set[str] = set()
        for entry in self.cron:
            if entry.name in names:
                raise ValueError(f"cron {entry.name!r}: two schedules share this name (each needs its own)")
            names.add(entry.name)
            if entry.queue not in self.queues:
                raise ValueError(f"cron {entry.name!r}: queue: no queue {entry.queue!r} "
                                 f"(queues: {', '.join(sorted(self.queues))})")
        return self

    def jobs_config(self) -> JobsConfig | None:
        if not self.enabled:
            return None
        return JobsConfig(queues=dict(self.queues), backoff=Backoff(self.backoff_base, self.backoff_max),
                          queue_backoff={name: Backoff(b.base, b.max_delay, b.jitter)
                                         for name, b in self.queue_backoff.items()},
                          tick=self.tick, prune_after=self.prune_after_days * 86_400.0,
                          cron=tuple(entry.entry() for entry in self.cron))


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ADK_ACTORS_", env_nested_delimiter="__", extra="forbid")

    host: HostSection = Field(default_factory=HostSection)
    logging: LoggingSection = Field(default_factory=LoggingSection)
    store: StoreSection = Field(default_factory=StoreSection)
    cluster: ClusterSection = Field(default_factory=ClusterSection)
    apps: dict[str, str] = Field(default_factory=dict)
    models: dict[str, str] = Field(default_factory=dict)  # model name -> OpenAI-compatible base URL
    breaker: BreakerSection = Field(default_factory=BreakerSection)
    retry: RetrySection = Field(default_factory=RetrySection)
    artifacts: ArtifactsSection = Field(default_factory=ArtifactsSection)
    limits: LimitsSection = Field(default_factory=LimitsSection)
    http: HttpSection = Field(default_factory=HttpSection)
    jobs: JobsSection = Field(default_factory=JobsSection)
    _source: str = PrivateAttr(default="<defaults>")  # the file read (load_settings), for errors

    @field_validator("apps")
    @classmethod
    def _check_apps(cls, apps: dict[str, str]) -> dict[str, str]:
        checked = {}
        for name, path in apps.items():
            problem = name_problem(name, "app name")  # names key sessions and folders: one grammar
            if problem is not None:
                raise ValueError(problem)
            if path.endswith((".yaml", ".yml")):
                path = str(Path(path).resolve())  # every process of the host reads the same file
            elif ":" not in path or not path.split(":", 1)[1]:
                raise ValueError(f"app {name!r}: the agent must be an import path 'package.module:root_agent' "
                                 "or an agent file 'path/root_agent.yaml'")
            checked[name] = path
        return checked

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return env_settings, init_settings

    @property
    def log_file(self) -> str:
        return self.logging.file or str(Path(self.host.data_dir) / "host.log")

    def check_jobs(self, apps: list[str]) -> None:
        """Check each ``[[jobs.cron]]`` entry against the host's ``apps`` (those of
        ``[apps]`` and of its agents folder) in order: what the file alone says was
        checked when it was read; here, that its job can run: its app is one of
        ``apps``, its function can be imported (call this once the project's folder is
        on ``sys.path``, as ``serve`` does). :class:`ConfigError` naming the file, the
        entry and the key, for the first that cannot. Nothing when jobs are off."""
        if not self.jobs.enabled:
            return
        known, queues = set(apps), set(self.jobs.queues)
        for index, section in enumerate(self.jobs.cron):
            problem = cron_problem(section.entry(), apps=known, queues=queues)
            if problem is not None:
                key, _, what = problem.partition(": ")
                raise ConfigError(f"{self._source}: jobs.cron.{index}.{key}: cron {section.name!r}: {what}")


def load_settings(path: str | Path | None) -> Settings:
    """Read and validate a TOML config (None: defaults and the environment only)."""
    data: dict[str, Any] = {}
    where = str(path) if path else "<defaults>"
    if path is not None:
        try:
            data = tomllib.loads(Path(path).read_text())
        except FileNotFoundError:
            raise ConfigError(f"{where}: no such file") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{where}: not valid TOML: {exc}") from None
    try:
        settings = Settings(**data)
        settings._source = where
        return settings
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            key = ".".join(str(p) for p in error["loc"])
            got = error.get("input")
            shown = not isinstance(got, dict) and key not in _SECRET_KEYS  # a URL may hold a password
            problems.append(f"{key}: {error['msg']}" + (f" (got {got!r})" if shown else ""))
        raise ConfigError(f"{where}: " + "; ".join(problems)) from None
