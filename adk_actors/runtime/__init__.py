"""The actor runtime: supervised session actors, runs as temporary child actors, the Runner."""

from ._host import Host, HostConfig
from ._runner import Runner

__all__ = ["Host", "HostConfig", "Runner"]
