"""Frame chunks (supervision._frame_chunk): a loop on a chunk's edge pays a page fault
per call it makes; the same loop started on a fresh chunk does not, and no actor a
GenServer forks runs on an edge."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from supervision import CallerRef, GenServer, ServerNotRunning, call, start_server
from supervision.lowlevel import call_on_fresh_chunk
from supervision.protocol import Init
from supervision.testing import wait_until

ROOT = Path(__file__).resolve().parent.parent

# Runs in a fresh interpreter, so the stack under it is the same every time. Finds the
# depth (of 200: more than one 16 KiB chunk of these frames) where a loop of calls
# faults the most, then runs that loop again from a fresh chunk.
EDGE_PROBE = """
import json, resource, sys
from supervision.lowlevel import call_on_fresh_chunk

CALLS = 2000

def leaf(spill=False):  # 40 slots: wider than a step of at_depth, so no edge is stepped over
    if spill:
        _0 = _1 = _2 = _3 = _4 = _5 = _6 = _7 = _8 = _9 = _10 = _11 = _12 = _13 = _14 = _15 = _16 = _17 = _18 = _19 = _20 = _21 = _22 = _23 = _24 = _25 = _26 = _27 = _28 = _29 = _30 = _31 = _32 = _33 = _34 = _35 = _36 = _37 = _38 = _39 = None
    return None

def calls():
    for _ in range(CALLS):
        leaf()

def at_depth(depth, then):
    return then() if depth == 0 else at_depth(depth - 1, then)

def faults(run):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    run()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

def probe(depth, fresh):
    if fresh:
        return faults(lambda: call_on_fresh_chunk(at_depth, depth, calls))
    return faults(lambda: at_depth(depth, calls))

# (both measures from a list comprehension: the same stack under them)
found = [probe(depth, False) for depth in range(200)]
edge = found.index(max(found))
on_edge, fresh = [probe(edge, fresh) for fresh in (False, True)]
print(json.dumps({"calls": CALLS, "on_edge": on_edge, "fresh": fresh}))
"""


def test_a_call_on_a_fresh_chunk_returns_what_the_call_returns_and_raises_what_it_raises() -> None:
    assert call_on_fresh_chunk(lambda a, *, b: (a, b), 1, b=2) == (1, 2)

    def fails() -> None:
        raise KeyError("kept")

    with pytest.raises(KeyError, match="kept"):
        call_on_fresh_chunk(fails)


def test_a_loop_on_a_chunk_edge_faults_per_call_and_the_same_loop_on_a_fresh_chunk_does_not() -> None:
    done = subprocess.run([sys.executable, "-c", EDGE_PROBE], capture_output=True, text=True, timeout=60,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    found = json.loads(done.stdout)
    if found["on_edge"] < found["calls"] // 2:
        pytest.skip(f"this Python keeps a frame chunk back (no loop faulted per call: {found})")
    assert found["on_edge"] >= found["calls"]  # one mmap, one page fault, one munmap per call
    assert found["fresh"] < found["calls"] // 100


CALLS = 200
RECURSION = 60  # frames of _descend: about 5 KiB of a chunk, a third of one


def _descend(depth: int) -> None:
    if depth:
        _descend(depth - 1)


def _faults_while_descending() -> int:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(CALLS):
        _descend(RECURSION)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


class EdgeProbe(GenServer):
    """Answers ``faults``: the page faults its process takes while its handler recurses
    ``RECURSION`` frames deep, ``CALLS`` times (one each time if an edge lies there)."""

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if request == "faults":
            return _faults_while_descending()
        return super().handle_call(request, caller)


class Forker(GenServer):
    """Answers ``("fork", depth)`` with a new EdgeProbe it forked ``depth`` frames
    deeper than its handler: as a parent forks from whatever depth its code is at."""

    def handle_call(self, request: Any, caller: CallerRef) -> Any:
        if isinstance(request, tuple) and request[0] == "fork":
            forked: list[Any] = []
            _descend_then(request[1], lambda: forked.append(self.createActor(EdgeProbe)))
            self.send(forked[0], Init(args=None, supervisor=self.myAddress))
            return forked[0]
        return super().handle_call(request, caller)


def _descend_then(depth: int, then: Callable[[], None]) -> None:
    if depth:
        _descend_then(depth - 1, then)
    else:
        then()


def test_an_actor_forked_by_a_genserver_never_runs_on_a_chunk_edge_whatever_depth_it_was_forked_from(
        actor_system: Any) -> None:
    """Without the fresh chunk, the children forked from some of these depths (a span of
    more than one 16 KiB chunk) fault once per recursion: their loops sit where the
    parent forked them. With it, none does."""
    forker = start_server(actor_system, Forker, None)
    faults = {}
    for depth in range(0, 200, 8):
        probe = call(actor_system, forker, ("fork", depth), timeout=10)
        faults[depth] = wait_until(lambda p=probe: _answer(actor_system, p), timeout=10)
    assert max(faults.values()) < CALLS // 10, faults


def _answer(system: Any, probe: Any) -> int | None:
    """The probe's faults; None while its Init (sent by its parent) has not arrived."""
    try:
        found: int = call(system, probe, "faults", timeout=10)
    except ServerNotRunning:
        return None
    return found
