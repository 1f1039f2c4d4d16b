"""What the commands share: the defaults (config file, user, polls), colours, the
config's settings, the host of the config, and a line to standard error."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..config import Settings

__all__ = ["APPROVAL_POLL", "BUSY_PROBE", "DEFAULT_CONFIG", "DEFAULT_USER", "SOAK_TICK", "connect_host", "host_port", "load_config_settings", "paint", "say_line"]


DEFAULT_CONFIG = "config/host.toml"
#: The user of ``run``, ``chat``, ``sessions``, ``resume`` and ``jobs enqueue`` when
#: ``--user`` is not given: google-adk's ``adk web`` user, and the console's, so a
#: session (or an approval) made in one is seen in the others.
DEFAULT_USER = "user"
#: How often a waiting ``run`` looks for approvals its run waits for, and how often
#: ``chaos soak`` says how far it is (seconds).
APPROVAL_POLL = 0.5
SOAK_TICK = 3.0
#: How long ``serve`` waits for a host that may hold a busy port to answer (seconds).
BUSY_PROBE = 5.0


def paint(code: str, text: str) -> str:
    return f"\033[{code}m{text}\033[0m" if sys.stdout.isatty() else text


def load_config_settings(args: argparse.Namespace) -> Settings:
    # Imported here: a command that reads no config (`run --url`) does not pay for
    # pydantic-settings (bench/startup.py).
    from ..config import load_settings

    path = args.config if args.config else (DEFAULT_CONFIG if Path(DEFAULT_CONFIG).exists() else None)
    return load_settings(path)


def host_port(args: argparse.Namespace) -> int:
    if getattr(args, "port", None):
        return int(args.port)
    return load_config_settings(args).host.port


def connect_host(args: argparse.Namespace) -> Any:
    """The host of the config (its ``[host] address`` and port; ``--port`` overrides the port)."""
    from ..runtime import Host

    return Host.connect(host_port(args), load_config_settings(args).host.address)


def say_line(line: str, error: bool) -> None:
    print(f"error: {line}" if error else line, file=sys.stderr if error else sys.stdout, flush=True)
