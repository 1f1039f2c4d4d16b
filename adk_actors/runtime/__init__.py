"""The actor runtime: supervised session actors, runs as temporary child actors, the Runner."""

from ._credentials import Credential
from ._host import Host, HostConfig
from ._runner import Runner

__all__ = ["Credential", "Host", "HostConfig", "Runner"]
