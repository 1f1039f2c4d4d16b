"""Workflow graphs for tests/test_workflow_parallel.py whose function nodes run in
processes (``node(..., processes=True)``): their functions are found by module and
name in the item processes (and in a host's processes: ``workflow_parallel_apps:<name>``).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from pid_files import write_pid

from adk_actors.workflow import START, JoinNode, Workflow, node


def spin(node_input: int) -> dict[str, Any]:
    """A pure-Python CPU-bound item: a checksum of ``node_input`` rounds, with the pid
    of the process that computed it."""
    total = 0
    for i in range(node_input * 1000):
        total = (total * 31 + i) % 1_000_003
    return {"n": node_input, "sum": total, "pid": os.getpid()}


def squares(node_input: list[dict[str, Any]]) -> dict[str, Any]:
    """The items' checksums without the pids (what the two ways must agree on)."""
    return {"sums": [item["sum"] for item in node_input], "pids": sorted({item["pid"] for item in node_input})}


def hold(node_input: int, work_dir: str) -> int:
    """An item that writes its pid to ``work_dir/item-<n>.pid`` and then waits (120 s
    at most) to be killed."""
    write_pid(Path(work_dir, f"item-{node_input}.pid"))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        time.sleep(0.05)
    return node_input


def fail_on_three(node_input: int) -> int:
    if node_input == 3:
        raise KeyError(f"no item {node_input}")
    return node_input


def give_a_generator(node_input: int) -> Any:
    return (i for i in range(node_input))


def split(node_input: str) -> list[int]:
    return [int(word) for word in node_input.split()]


spin_in_threads = node(spin, name="spin", parallel_worker=True)
spin_in_processes = node(spin, name="spin", parallel_worker=True, processes=True)
in_threads = Workflow(name="fan", edges=[(START, spin_in_threads, squares)])
in_processes = Workflow(name="fan", edges=[(START, spin_in_processes, squares)])

holding = Workflow(name="holding", edges=[(START, split, node(hold, parallel_worker=True, processes=True))])
failing = Workflow(name="failing", edges=[
    (START, node(fail_on_three, parallel_worker=True, max_parallel_workers=1, processes=True))])
generating = Workflow(name="generating", edges=[(START, node(give_a_generator, processes=True))])

timing_out = Workflow(name="timing_out", edges=[
    (START, split, node(hold, name="slow", timeout=5.0, parallel_worker=True, processes=True))])

APPS = {"holding": "workflow_parallel_apps:holding", "fan": "workflow_parallel_apps:in_processes"}


CALLS: list[int] = []  # the items counted, in this process (the threads' runs)


def count_item(node_input: int) -> int:
    CALLS.append(node_input)
    return node_input * 10


def add_up(node_input: list[int]) -> int:
    return sum(node_input)


counting = Workflow(name="counting", edges=[
    (START, split, node(count_item, parallel_worker=True, max_parallel_workers=2), add_up)])


def seven(node_input: Any) -> int:
    return 7


branches = Workflow(name="branches", edges=[
    (START, seven, (node(spin, name="left", processes=True), node(spin, name="right", processes=True)),
     JoinNode(name="both"))])
