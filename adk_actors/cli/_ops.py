"""``status``, ``chaos kill`` / ``chaos soak`` and ``mcp``: the live tree, faults dealt
on purpose, and the host's apps as MCP tools on standard input and output."""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
import time
from typing import Any

from .._exceptions import (
    ConfigError,
)
from ._common import SOAK_TICK, connect_host, load_config_settings, paint

__all__ = ["cmd_chaos", "cmd_mcp", "cmd_soak", "cmd_status"]


def _tree(host: Any, timeout: float = 1.0) -> list[dict[str, Any]]:
    from ..chaos import tree_rows

    return tree_rows(host, timeout)


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve the config's apps as MCP tools over stdio until the client closes stdin.
    Standard output carries the protocol only: logs go to standard error."""
    try:
        from ..mcp import apps_server
    except ModuleNotFoundError as missing:
        if (missing.name or "").partition(".")[0] != "mcp":
            raise
        print("error: the mcp extra is not installed: pip install 'adk-actors[mcp]'", file=sys.stderr)
        return 2
    from ..engine import BUILDER_ASSISTANT, AppCatalog

    settings = load_config_settings(args)
    sys.path.insert(0, os.getcwd())
    catalog = AppCatalog(settings.apps, settings.host.agents_folder)
    described = {name: _description(catalog, name) for name in catalog.names() if name != BUILDER_ASSISTANT}
    host = connect_host(args)
    runners: dict[str, Any] = {}
    try:
        server = apps_server(lambda app: runners.setdefault(app, host.runner(app)), described, lambda _: args.user)
        server.run("stdio")
    finally:
        host.disconnect()
    return 0


def _description(catalog: Any, name: str) -> str:
    """The app's root agent's description ("" when the app cannot be loaded here)."""
    try:
        return str(catalog.load(name).root_agent.description or "")
    except Exception:
        return ""


def cmd_status(args: argparse.Namespace) -> int:
    """The host's supervision tree; in a cluster, every host's (the leader's view), each
    under a line naming it. ``--json``: the rows (outside a cluster), or the hosts. The
    held sessions are paged (``--offset``, ``--limit``) and searched (``--search``:
    those whose app/user/session or a run id contains it); under this host's tree, a
    line says whether every actor serves, or what does not (``chaos.serving_problems``,
    what ``chaos kill`` waits for), then which page of sessions is shown of how many."""
    from ..chaos import cluster_trees, serving_problems

    if args.offset < 0 or args.limit < 0:
        print("error: --offset and --limit are numbers from 0", file=sys.stderr)
        return 2
    host = connect_host(args)
    try:
        hosts = cluster_trees(host, sessions=args.limit, offset=args.offset, search=args.search)
    finally:
        host.disconnect()
    clustered = len(hosts) > 1 or hosts[0]["leader"]
    if args.json:
        print(json.dumps(hosts if clustered else hosts[0]["rows"]))
        return 0
    for entry in hosts:
        if clustered:
            roles = [role for role, on in (("leader", entry["leader"]), ("this host", entry["this"])) if on]
            print(f"\nhost {entry['name']}" + (f" ({', '.join(roles)})" if roles else "")
                  + (f": unreachable ({entry['unreachable']})" if "unreachable" in entry else ""))
        if entry["rows"]:
            _print_tree(entry["rows"])
            if entry["this"]:  # (another host's pids are of its machine)
                problems = serving_problems(entry["rows"])
                print("every actor serves" if not problems else
                      paint("33", "not serving: " + "; ".join(problems)))
            held = sum(row.get("sessions", 0) for row in entry["rows"])
            shown = sum(row["type"] == "session" for row in entry["rows"])
            matching = f" matching {args.search!r}" if args.search else ""
            print(f"sessions {args.offset + 1 if shown else 0}-{args.offset + shown} of {held}{matching} "
                  "(--offset, --limit, --search for others)")
    return 0


def _print_tree(rows: list[dict[str, Any]]) -> None:
    print(f"{'child':<48} {'type':<10} {'status':<10} {'pid':>7} {'restarts':>8}  last exit")
    for row in rows:
        name = "  " * row["depth"] + row["id"] + (f" ({row['sessions']} sessions held)" if "sessions" in row else "")
        status = paint("32" if row["status"] == "running" else "33", f"{row['status']:<10}")
        print(f"{name:<48} {row['type']:<10} {status} {row['pid'] or '-':>7} {row['restarts']:>8}  "
              f"{row.get('why') or row.get('last_exit') or ''}".rstrip())


def cmd_chaos(args: argparse.Namespace) -> int:
    """``chaos kill TARGET``: kill -9 a process (by its path or id) and wait until it is
    back and the whole host serves again, or crash a session (by its path or
    ``APP/USER/SESSION``), or kill a run (by its path or id): these are asked of the
    partition that owns them, wherever they are in its listing (``chaos.find_rows``).
    ``--random``: a random process. In order, for a process: walk the tree; kill it;
    wait (``chaos.wait_back``) until it runs in a new process (a run worker or an
    executor: until its parent no longer lists it) and every actor of the tree serves,
    those restarted with it included (its children, the siblings its supervisor's
    strategy restarts, a partition's run workers, connected again); say so, with what
    restarted with it. Not back within ``chaos.BACK_TIMEOUT`` seconds scaled to the
    load: ``chaos.NotBackError``, naming what is not back (exit 1). A session or a run
    is not waited for: nothing restarts (a session is read from its store at its next
    request)."""
    from ..chaos import BACK_TIMEOUT, find_rows, kill_row, killable, wait_back

    host = connect_host(args)
    try:
        before = _tree(host)
        if args.random:
            target = random.choice([r for r in before if killable(r) and r["pid"]])
        else:
            if not args.target:
                print("error: chaos kill needs a TARGET (or --random); see `adk-actors status`", file=sys.stderr)
                return 2
            matches = [r for r in find_rows(host, args.target) if killable(r)]
            if not matches:
                print(f"error: no running actor {args.target!r}; see `adk-actors status`", file=sys.stderr)
                return 1
            target = matches[0]
        began = time.monotonic()
        done = kill_row(host, target)
        print(f"killed {done}", flush=True)
        if not target["pid"]:  # a session (read from the store on its next request) or a run: nothing restarts
            return 0
        seconds, after = wait_back(host, target, before, BACK_TIMEOUT, began=began)
        print(_back_line(target, before, after, seconds))
        return 0
    finally:
        host.disconnect()


def _back_line(target: dict[str, Any], before: list[dict[str, Any]], after: list[dict[str, Any]],
               seconds: float) -> str:
    """What ``chaos kill`` says once the killed process is back and the host serves: how
    it came back, after how long, and what restarted with it (the top of each part of
    the tree found in new processes, the target's own children not named)."""
    took = f"after {1000 * seconds:.0f} ms"
    if target.get("pooled"):
        how = (f"{target['path']} was replaced by its pool {took}" if "/worker-" in target["path"] else
               f"{target['path']} is gone {took} (the jobs actor starts executors as jobs wait)")
    else:
        now = next(r for r in after if r["path"] == target["path"])
        how = f"{target['path']} is back as pid {now['pid']} {took} (restarts: {now['restarts']})"
    was = {r["path"]: r["pid"] for r in before if r["pid"] and not r.get("pooled")}
    moved = {r["path"] for r in after if r["pid"] and not r.get("pooled") and was.get(r["path"]) not in (None, r["pid"])}
    tops = sorted(p for p in moved - {target["path"]} if ("/" not in p or p.rsplit("/", 1)[0] not in moved)
                  and not p.startswith(target["path"] + "/"))
    with_it = f"; restarted with it: {', '.join(tops)}" if tops else ""
    return f"{how}{with_it}; every actor of the host serves again"


def cmd_soak(args: argparse.Namespace) -> int:
    from ..chaos import check_soak_arguments, soak

    try:  # a usage error needs no host
        check_soak_arguments(sessions=args.sessions, duration=args.duration, interval=args.interval / 1000.0,
                             targets=args.targets.split(","), stops=args.stops)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    host = connect_host(args)
    ticker = _SoakTicker(args.duration)
    try:
        app = args.app or _default_app(args)
        ticker.start()
        report = soak(host, app, sessions=args.sessions, duration=args.duration, interval=args.interval / 1000.0,
                      targets=args.targets.split(","), turn_timeout=args.turn_timeout, seed=args.seed,
                      stops=args.stops, jobs=args.jobs, resume=args.resume, cluster=args.cluster,
                      all_sessions=args.all, progress=ticker.phase)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        ticker.stop()
        host.disconnect()
    print(json.dumps(report.to_dict()) if args.json else report.render(), flush=True)
    return 0 if report.passed else 1


class _SoakTicker:
    """A soak's progress on standard error (standard output keeps the report, and its
    ``--json``): each phase the soak names as it begins, and every ``SOAK_TICK`` seconds
    how long it has run and what it is doing, until :meth:`stop`; Ctrl-C ends it."""

    def __init__(self, duration: float) -> None:
        self._duration = duration
        self._began = time.monotonic()
        self._doing = f"dealing faults for {duration:g} s"
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._tick, name="soak-ticker", daemon=True)

    def start(self) -> None:
        self._began = time.monotonic()
        print(f"soak: {self._doing} while sessions talk (Ctrl-C to stop)", file=sys.stderr, flush=True)
        self._thread.start()

    def phase(self, text: str) -> None:
        self._doing = text
        print(f"soak: {text}", file=sys.stderr, flush=True)

    def stop(self) -> None:
        self._done.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)

    def _tick(self) -> None:
        while not self._done.wait(SOAK_TICK):
            print(f"soak: {time.monotonic() - self._began:.0f} s: {self._doing}", file=sys.stderr, flush=True)


def _default_app(args: argparse.Namespace) -> str:
    apps = sorted(load_config_settings(args).apps)
    if not apps:
        raise ConfigError("chaos soak needs --app (the config names no apps)")
    return "weather_bot" if "weather_bot" in apps else apps[0]


