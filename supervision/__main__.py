"""``python -m supervision stop --port P``: stop an actor system left running on a port.

With ``--kill-group PGID`` (how :class:`~supervision._owner.OwnerWatch` calls it)
the graceful stop may take ``--grace`` seconds; then every process left in that
process group gets SIGKILL.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

from ._start import stop_actor_system_on_port


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m supervision")
    sub = parser.add_subparsers(dest="command", required=True)
    stop = sub.add_parser("stop", help="stop the actor system whose admin listens on --port")
    stop.add_argument("--port", type=int, required=True)
    stop.add_argument("--host", default="127.0.0.1")
    stop.add_argument("--kill-group", type=int, default=None,
                      help="after the graceful stop (or --grace seconds), SIGKILL what is left of this process group")
    stop.add_argument("--grace", type=float, default=10.0)
    args = parser.parse_args(argv)
    if args.kill_group is None:
        stop_actor_system_on_port(args.port, args.host)
        print(f"stopped the actor system on port {args.port}")
        return 0
    stopper = threading.Thread(target=stop_actor_system_on_port, args=(args.port, args.host), daemon=True)
    stopper.start()
    stopper.join(args.grace)
    if args.kill_group != os.getpgrp():
        try:
            os.killpg(args.kill_group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
