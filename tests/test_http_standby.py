"""The HTTP server's first process, forked by ``serve`` ahead of the tree (``http._standby``):
one claimer only, a serve that cannot start leaves no process behind, and it answers
what needs no host before the tree has started, the rest once its owner came."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any

import httpx
import pytest

from adk_actors.http import Standby
from supervision.lowlevel import free_port
from supervision.testing import find_marked_processes, process_marker

ROOT = Path(__file__).resolve().parents[1]


def _claim(standby: Standby, results: Any) -> None:
    results.put(standby.claim())


def test_of_many_processes_racing_for_a_standby_exactly_one_claims_it() -> None:
    claim_read, claim_write = os.pipe()
    os.write(claim_write, b"1")
    os.close(claim_write)
    standby = Standby(pid=os.getpid(), claim_fd=claim_read, launch_fd=-1, ready_fd=-1)
    context = multiprocessing.get_context("fork")  # as the actors get the descriptors: by fork
    results = context.Queue()
    racers = [context.Process(target=_claim, args=(standby, results)) for _ in range(8)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(30)
    claims = sorted(results.get(timeout=5) for _ in racers)
    assert claims == [False] * 7 + [True]
    assert standby.claim() is False  # and never again, here either
    os.close(claim_read)


def test_a_serve_that_cannot_start_leaves_no_process_behind(tmp_path: Path) -> None:
    """The server forked ahead is discarded with the rest when the tree cannot start."""
    config = tmp_path / "host.toml"
    config.write_text(f'[host]\nport = {free_port()}\ndata_dir = "{tmp_path / "data"}"\n'
                      f'[http]\nport = {free_port()}\n[apps]\nbroken = "no_such_module.agent:root_agent"\n')
    with process_marker(tmp_path) as (marker, fd):
        done = subprocess.run([sys.executable, "-m", "adk_actors.cli", "serve", "--config", str(config)], cwd=ROOT,
                              capture_output=True, text=True, timeout=60, pass_fds=(fd,))
        assert done.returncode == 1 and "the host did not start" in done.stderr and "no_such_module" in done.stderr
        assert find_marked_processes(marker) == []


# A process that does what ``serve`` does around its standby, one step per line read
# on stdin: fork the standby (no actor system yet), then start a real host and hand the
# standby to it as the ``http`` actor does (claim, owner line), then stop.
_SERVE_LIKE = """
import json, os, sys
from dataclasses import replace
from adk_actors.config import HttpSection
from adk_actors.http import fork_standby, http_args, open_front_door
from adk_actors.runtime import Host, HostConfig

admin, http_port, data = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
apps = {"weather_bot": "examples.weather_bot.agent:root_agent"}
door = open_front_door("127.0.0.1", http_port)
args = replace(http_args(HttpSection(port=http_port), admin_port=admin, admin_address="127.0.0.1", apps=apps,
                         data_dir=data), listen_fd=door.fileno())
os.makedirs(data, exist_ok=True)
standby = fork_standby(args.launch(), args.log_file)
assert standby is not None
print("FORKED", flush=True)
sys.stdin.readline()
host = Host(HostConfig(apps=apps, data_dir=data, port=admin, extra={"global_root": True})).start()
assert standby.claim()
os.write(standby.launch_fd, (json.dumps({"owner": os.getpid()}) + "\\n").encode())
print("OWNED", flush=True)
sys.stdin.readline()
host.stop()
standby.discard()
print("STOPPED", flush=True)
"""


def test_a_standby_lists_the_apps_before_the_host_starts_and_holds_the_rest_until_its_owner_comes(
        tmp_path: Path) -> None:
    """``serve``'s forked-ahead server answers ``/list-apps`` from its own process while
    no actor system runs yet; a request that needs the host (a user's sessions) waits,
    unanswered, and is answered once the host runs and the standby's owner has come."""
    admin, http_port = free_port(), free_port()
    with process_marker(tmp_path) as (marker, fd):
        serve = subprocess.Popen([sys.executable, "-c", _SERVE_LIKE, str(admin), str(http_port), str(tmp_path / "data")],
                                 cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, pass_fds=(fd,))
        assert serve.stdin is not None and serve.stdout is not None
        try:
            assert serve.stdout.readline().strip() == "FORKED"
            with httpx.Client(base_url=f"http://127.0.0.1:{http_port}", timeout=60) as http:
                listed = http.get("/list-apps")
                assert listed.status_code == 200 and listed.json() == ["weather_bot"]
                assert http.get("/version").status_code == 200
            with ThreadPoolExecutor(1) as pool:
                sessions = pool.submit(httpx.get, f"http://127.0.0.1:{http_port}/apps/weather_bot/users/u/sessions",
                                       timeout=120)
                with pytest.raises(FutureTimeout):  # no host yet: it waits (no 503, no 500)
                    sessions.result(timeout=2)
                serve.stdin.write("start\n")
                serve.stdin.flush()
                assert serve.stdout.readline().strip() == "OWNED"
                answer = sessions.result(timeout=60)
            assert answer.status_code == 200 and answer.json() == []
            serve.stdin.write("stop\n")
            serve.stdin.flush()
            assert serve.stdout.readline().strip() == "STOPPED"
            assert serve.wait(30) == 0
        finally:
            if serve.poll() is None:
                serve.kill()
                serve.wait(10)
        assert find_marked_processes(marker) == []
