"""``python -m supervision stop --port P``: stop an actor system left running on a port."""

from __future__ import annotations

import argparse
import sys

from ._system import stop_actor_system_on_port


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m supervision")
    sub = parser.add_subparsers(dest="command", required=True)
    stop = sub.add_parser("stop", help="stop the actor system whose admin listens on --port")
    stop.add_argument("--port", type=int, required=True)
    stop.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    stop_actor_system_on_port(args.port, args.host)
    print(f"stopped the actor system on port {args.port}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
