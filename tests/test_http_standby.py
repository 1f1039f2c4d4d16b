"""The HTTP server's first process, forked by ``serve`` ahead of the tree (``http._standby``):
one claimer only, and a serve that cannot start leaves no process behind."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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
