"""Issue 52: agent config files that declare a workflow graph, side by side with
google-adk 2.13 (``agents/config_agent_utils.from_config``, its ``_AgentConfigMapper``).

The same YAML files (only the package of the user's code differs) are loaded by both
kits: ``agent_class: Workflow`` with ``edges`` in each form google-adk reads (chains,
``START``, agent files, dotted functions made function nodes, a bare name of an earlier
node, fan-out lists, routing maps, ``from_node``/``to_node``/``route`` mappings, inline
nodes: an LlmAgent, a ``FunctionNode`` by ``func_code``, a nested Workflow,
``config_path``/``code`` references) and its own fields; compared: the graph's edges
(each end's name and kind, the route), the nodes' settings, and which nodes are one
object. What google-adk refuses is refused here too (a ValueError; here an
AgentDefinitionError naming the file), among them an inline agent definition in
``sub_agents`` (google-adk takes only ``config_path`` or ``code`` there); a key a
workflow has not is logged and ignored by both. One file's workflow is run by both
against one Gemini stand-in: the same events, state and model requests.
"""

from __future__ import annotations

import importlib
import logging
import sys
import textwrap
import uuid
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from google_adk_harness import event_rows, gemini, request_rows, rewritten, run_program, stand_in  # noqa: F401

from adk_actors import AgentDefinitionError
from adk_actors.agents import config_agent_utils
from adk_actors.testing import StubServer, gemini_response

pytest.importorskip("google.adk")
from google.adk.agents import config_agent_utils as adk_utils

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"), pytest.mark.timeout(120)]

FUNCS = """\
from pydantic import BaseModel

CONSTANT = "not a node"


class State(BaseModel):
    topic: str = ""


def prepare(node_input) -> str:
    return "topic: tea"


def classify(node_input) -> str:
    return "long"


def finish(node_input) -> str:
    return "done"
"""

AGENTS = """\
from {kit}.agents import LlmAgent

helper = LlmAgent(name="helper", model="gemini-2.5-flash", instruction="Help.")
"""

AGENT_FILES = {
    "a.yaml": "name: a\nmodel: gemini-2.5-flash\ninstruction: Say A.\n",
    "b.yaml": "name: b\nmodel: gemini-2.5-flash\ninstruction: Say B.\n",
    "c.yaml": "name: c\nmodel: gemini-2.5-flash\ninstruction: Say C.\n",
}

#: workflow files (``{pkg}`` is the package of the user's code)
WORKFLOWS = {
    "chain": """\
        agent_class: Workflow
        name: flow
        edges:
          - [START, a.yaml, b.yaml]
          - [b, .funcs.finish]
        """,
    "inline": """\
        agent_class: Workflow
        name: flow
        edges:
          - - START
            - name: writer
              model: gemini-2.5-flash
              instruction: Write.
              output_key: draft
            - {pkg}.funcs.prepare
            - {{agent_class: FunctionNode, name: closing, func_code: .funcs.finish}}
          - [closing, {{config_path: c.yaml}}, {{code: {pkg}.agents.helper}}]
        """,
    "routes": """\
        agent_class: Workflow
        name: flow
        edges:
          - [START, .funcs.classify, {{long: a.yaml, short: [b.yaml, c.yaml]}}]
        """,
    "edge_mappings": """\
        agent_class: Workflow
        name: flow
        edges:
          - {{from_node: START, to_node: .funcs.classify}}
          - {{from_node: classify, to_node: a.yaml, route: long}}
          - {{from_node: classify, to_node: b.yaml, route: [short, brief]}}
        """,
    "fan_out": """\
        agent_class: Workflow
        name: flow
        edges:
          - [START, [a.yaml, b.yaml], .funcs.finish]
        """,
    "nested": """\
        agent_class: Workflow
        name: flow
        edges:
          - - START
            - agent_class: Workflow
              name: inner
              edges:
                - [START, .funcs.prepare, a.yaml]
            - b.yaml
        """,
    "fields": """\
        agent_class: Workflow
        name: flow
        description: Writes about tea.
        max_concurrency: 2
        rerun_on_resume: false
        timeout: 30
        retry_config: {{max_attempts: 3}}
        state_schema: {pkg}.funcs.State
        edges:
          - [START, .funcs.prepare]
        """,
}

#: files both kits refuse (a ValueError), with a piece of google-adk's message
REFUSED = {
    "forward_name": ("agent_class: Workflow\nname: flow\nedges:\n  - [START, a]\n", "Unknown node"),
    "not_a_node": ("agent_class: Workflow\nname: flow\nedges:\n  - [START, {pkg}.funcs.CONSTANT]\n",
                   "neither a callable nor a node"),
    "reference_with_extra_key": ("agent_class: Workflow\nname: flow\nedges:\n"
                                 "  - [START, {{config_path: a.yaml, model: x}}]\n", "Extra inputs are not permitted"),
    "no_edge_from_start": ("agent_class: Workflow\nname: flow\nedges:\n  - [a.yaml, b.yaml]\n", "START"),
    "unknown_class": ("agent_class: Flow\nname: flow\n", "Flow"),
    "inline_sub_agent": ("name: root\nmodel: gemini-2.5-flash\ninstruction: Route.\nsub_agents:\n"
                         "  - name: inline\n    model: gemini-2.5-flash\n    instruction: Inline.\n",
                         "Extra inputs are not permitted"),
    "inline_sub_agent_of_sequence": ("agent_class: SequentialAgent\nname: steps\nsub_agents:\n"
                                     "  - name: inline\n    instruction: Inline.\n", "Extra inputs are not permitted"),
    "sub_agent_as_a_string": ("agent_class: SequentialAgent\nname: steps\nsub_agents:\n  - a.yaml\n",
                              "valid dictionary or instance of AgentRefConfig"),
}


class Kits:
    """The same app for each kit: a package of the user's code and the YAML files."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.packages = {"theirs": f"theirs_wf_{uuid.uuid4().hex[:8]}", "ours": f"ours_wf_{uuid.uuid4().hex[:8]}"}
        for side, package in self.packages.items():
            folder = root / package
            folder.mkdir()
            (folder / "__init__.py").write_text("")
            (folder / "funcs.py").write_text(FUNCS)
            (folder / "agents.py").write_text(AGENTS.format(kit="google.adk" if side == "theirs" else "adk_actors"))
            for name, text in AGENT_FILES.items():
                (folder / name).write_text(text)

    def file(self, side: str, name: str, text: str) -> str:
        path = self.root / self.packages[side] / f"{name}.yaml"
        path.write_text(textwrap.dedent(text).format(pkg=self.packages[side]))
        return str(path)

    def load(self, name: str, text: str) -> dict[str, Any]:
        """Both kits' objects from the file ``text``."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            theirs = adk_utils.from_config(self.file("theirs", name, text))
        return {"theirs": theirs, "ours": config_agent_utils.from_config(self.file("ours", name, text))}


@pytest.fixture
def kits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Kits]:
    monkeypatch.syspath_prepend(str(tmp_path))
    made = Kits(tmp_path)
    importlib.invalidate_caches()
    yield made
    for package in made.packages.values():
        for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
            del sys.modules[name]


def _kind(node: Any) -> str:
    name = type(node).__name__
    if node.name == "__START__":
        return "START"
    return {"LlmAgent": "agent", "FunctionNode": "function", "Workflow": "workflow"}.get(name, name)


def _node(node: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"name": node.name, "kind": _kind(node)}
    if row["kind"] == "agent":
        row.update(instruction=node.instruction, model=node.model, output_key=node.output_key)
    if row["kind"] == "function":
        row["func"] = node._func.__name__ if hasattr(node, "_func") else node.func.__name__
    if row["kind"] == "workflow":
        row["graph"] = shape(node)
    return row


def shape(workflow: Any) -> dict[str, Any]:
    """A workflow as both kits can be compared on (see the module)."""
    graph = workflow.graph
    edges = sorted((e.from_node.name, _kind(e.from_node), e.to_node.name, _kind(e.to_node), repr(e.route))
                   for e in graph.edges)
    nodes = {}
    for edge in graph.edges:
        for end in (edge.from_node, edge.to_node):
            nodes[end.name] = _node(end)
    # a node named twice is one object
    objects = {end.name: {id(e.from_node) for e in graph.edges if e.from_node.name == end.name}
               | {id(e.to_node) for e in graph.edges if e.to_node.name == end.name}
               for edge in graph.edges for end in (edge.from_node, edge.to_node)}
    retry = workflow.retry_config
    return {"class": type(workflow).__name__, "name": workflow.name, "description": workflow.description,
            "max_concurrency": workflow.max_concurrency, "rerun_on_resume": workflow.rerun_on_resume,
            "timeout": workflow.timeout, "retry_max_attempts": retry.max_attempts if retry else None,
            "state_schema": workflow.state_schema.__name__ if workflow.state_schema else None,
            "edges": edges, "nodes": sorted(nodes.values(), key=lambda n: n["name"]),
            "one_object_each": all(len(ids) == 1 for ids in objects.values())}


@pytest.mark.parametrize("case", sorted(WORKFLOWS))
def test_a_workflow_file_loads_into_the_same_graph(kits: Kits, case: str) -> None:
    loaded = kits.load(case, WORKFLOWS[case])
    theirs, ours = shape(loaded["theirs"]), shape(loaded["ours"])
    assert ours == theirs
    assert theirs["edges"] and theirs["one_object_each"]


def test_the_nodes_of_a_workflow_file_are_its_agents_here(kits: Kits) -> None:
    ours = kits.load("inline", WORKFLOWS["inline"])["ours"]
    assert [agent.name for agent in ours.sub_agents] == ["writer", "c", "helper"]
    assert ours.find_agent("writer").parent_agent is ours
    helper = importlib.import_module(f"{kits.packages['ours']}.agents").helper
    assert ours.find_agent("helper") is helper


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_google_adk_refuses_is_refused(kits: Kits, case: str) -> None:
    text, words = REFUSED[case]
    with pytest.raises(ValueError) as theirs, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        adk_utils.from_config(kits.file("theirs", case, text))
    assert words in str(theirs.value)
    path = kits.file("ours", case, text)
    with pytest.raises(AgentDefinitionError) as ours:
        config_agent_utils.from_config(path)
    assert path in str(ours.value)
    if words in ("Extra inputs are not permitted", "START", "valid dictionary or instance of AgentRefConfig"):
        assert words in str(ours.value)


def test_a_key_a_workflow_has_not_is_logged_and_ignored_by_both(kits: Kits,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    text = "agent_class: Workflow\nname: flow\nnodes: [a]\nedges:\n  - [START, a.yaml]\n"
    with caplog.at_level(logging.WARNING):
        loaded = kits.load("extra_key", text)
    said = [record.getMessage() for record in caplog.records if "does not accept" in record.getMessage()]
    assert len(said) == 2 and all("'nodes'" in line for line in said)
    assert shape(loaded["ours"]) == shape(loaded["theirs"])


PROGRAM = '''
from google.adk.agents import config_agent_utils
from google.adk.runners import InMemoryRunner
from google.genai import types


async def main(path, turns):
    agent = config_agent_utils.from_config(path)
    runner = InMemoryRunner(agent=agent, app_name="w")
    session = await runner.session_service.create_session(app_name="w", user_id="u")
    events = []
    for turn in turns:
        async for event in runner.run_async(user_id="u", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text=turn)])):
            events.append(event)
    stored = await runner.session_service.get_session(app_name="w", user_id="u", session_id=session.id)
    await runner.close()
    return events, dict(stored.state)
'''

RUN = """\
    agent_class: Workflow
    name: flow
    edges:
      - [START, .funcs.prepare, writer.yaml]
    """


def test_a_workflow_from_its_file_runs_as_in_google_adk(kits: Kits, gemini: StubServer) -> None:  # noqa: F811
    seen = {}
    for side, source in (("theirs", PROGRAM), ("ours", rewritten(PROGRAM))):
        (kits.root / kits.packages[side] / "writer.yaml").write_text(
            "name: writer\nmodel: gemini-2.5-flash\ninstruction: Write one line about the input.\noutput_key: line\n")
        run: Callable[[], Any] = lambda: run_program(  # noqa: E731
            source, [gemini_response("Tea is warm.")], gemini, kits.file(side, "run", RUN), ["Go."])
        _, (events, state) = run()
        assert len(gemini.responses) == 0, f"{side}: the case must use its script"
        seen[side] = {"events": event_rows(events), "state": state, "requests": request_rows(gemini)}
    assert seen["ours"] == seen["theirs"]
    assert seen["theirs"]["state"] == {"line": "Tea is warm."}
    assert seen["theirs"]["requests"][0]["contents"] == [{"role": "user", "parts": [{"text": "topic: tea"}]}]


def test_workflow_from_config_reads_its_edges_as_a_file(kits: Kits) -> None:
    """Our Workflow is an agent, so it has BaseAgent's deprecated ``from_config`` hook
    (google-adk's Workflow has none): it reads the edges as its file would."""
    from adk_actors.workflow import Workflow

    path = kits.root / kits.packages["ours"] / "hook.yaml"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        made = Workflow.from_config({"name": "flow", "edges": [["START", "a.yaml", ".funcs.finish"]]}, str(path))
    assert shape(made)["edges"] == [("__START__", "START", "a", "agent", "None"), ("a", "agent", "finish", "function",
                                                                                   "None")]
