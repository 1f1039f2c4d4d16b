"""adk-web's graph views of a workflow app (issue 55), side by side with google-adk
2.13's own FastAPI app (``get_fast_api_app(web=True)``, in process) serving the same
program from an agents folder, ours served by ``adk-actors serve`` (a real host) with
only its imports rewritten: ``GET /dev/apps/{app}/build_graph`` gives the same JSON
(its ``graph``: every node and edge with their kinds and settings, exactly; its
``edges`` as written, where google-adk prints a fan-out tuple as its Python repr and
we give the list of its nodes), ``build_graph_image`` the same DOT text for the root
workflow and each nested one, light and dark, and for one nested workflow by its
path; an unknown path is 404 on both. ``/graph`` (where google-adk 2.13 fails on a
workflow root) gives the root workflow's DOT text here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import serving
from google_adk_harness import rewritten

pytest.importorskip("google.adk.workflow")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

TESTS = Path(__file__).parent

GRAPH = '''
from google.adk.agents import LlmAgent
from google.adk.events import RequestInput
from google.adk.events.event import Event
from google.adk.workflow import DEFAULT_ROUTE, START, Edge, FunctionNode, JoinNode, RetryConfig, Workflow


def classify(node_input: str):
    """Sort the request by its length."""
    return Event(output=node_input, route="long" if len(node_input) > 5 else "short")


def long_path(node_input: str):
    return node_input


def short_path(node_input: str):
    return node_input


def left(node_input: str):
    return node_input


def shout(node_input: str):
    return node_input + "!"


def check(node_input: dict):
    return Event(output=node_input, route=bool(node_input))


def summary(node_input: dict):
    return node_input


def lookup(topic: str) -> str:
    """Look the topic up."""
    return topic


scout = LlmAgent(name="scout", model="gemini-2.0-flash", instruction="Scout the topic.", tools=[lookup],
                 output_key="found")
inner = Workflow(name="inner", edges=[(START, shout)], max_concurrency=2)
gate = FunctionNode(func=check, retry_config=RetryConfig(max_attempts=2), timeout=3.0)
total = FunctionNode(func=summary)
root_agent = Workflow(name="graph_app", description="Routes, a fan-out, a nested graph and a join.", edges=[
    (START, classify, {"long": long_path, DEFAULT_ROUTE: short_path}),
    (long_path, (left, scout, inner)),
    (short_path, (left, scout, inner)),
    ((left, scout, inner), JoinNode(name="gather"), gate),
    Edge(from_node=gate, to_node=total, route=True),
])


def prep(node_input: str):
    return node_input.upper()


def ask(node_input: str):
    return RequestInput(interrupt_id="go-ahead", message=f"Ship {node_input}?")


def ship(node_input: str):
    return f"shipped: {node_input}"


asking_app = Workflow(name="asking_app", edges=[(START, prep, ask, ship)])
'''


@pytest.fixture(scope="module")
def theirs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """google-adk's FastAPI app (adk web's routes) on an agents folder with the program.

    ``web=True`` turns on google-adk's process-wide YAML key denylist; it is turned
    back off after the module, so a later test on this worker loading a YAML agent with
    google-adk's ``from_config`` sees the loader as a program does."""
    from fastapi.testclient import TestClient
    from google.adk.agents import config_agent_utils
    from google.adk.cli.fast_api import get_fast_api_app

    agents = tmp_path_factory.mktemp("agents")
    (agents / "graphs").mkdir()
    (agents / "graphs" / "__init__.py").write_text("from . import agent\n")
    (agents / "graphs" / "agent.py").write_text(GRAPH)
    app = get_fast_api_app(agents_dir=str(agents), web=True, session_service_uri="memory://",
                           artifact_service_uri="memory://", memory_service_uri="memory://")
    try:
        with TestClient(app) as client:
            yield client
    finally:
        config_agent_utils._set_enforce_yaml_key_denylist(False)


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A real host (``adk-actors serve``) serving the program with its imports rewritten."""
    base = tmp_path_factory.mktemp("ours")
    (base / "graph_views_app.py").write_text(rewritten(GRAPH))
    with serving(base, apps='graphs = "graph_views_app:root_agent"\nasking = "graph_views_app:asking_app"\n',
                 env={"PYTHONPATH": os.pathsep.join([str(TESTS), str(base)])}) as served, \
            httpx.Client(base_url=served["url"], timeout=30) as http:
        yield http


def _edges_alike(their_edges: list[Any], our_edges: list[Any]) -> None:
    """The edges as written: equal, except a fan-out tuple inside a chain, which
    google-adk prints as its repr: ours lists the same nodes, in order."""
    assert len(our_edges) == len(their_edges)
    for theirs_item, ours_item in zip(their_edges, our_edges, strict=True):
        if isinstance(theirs_item, dict):
            assert ours_item == theirs_item
            continue
        assert len(ours_item) == len(theirs_item)
        for their_element, our_element in zip(theirs_item, ours_item, strict=True):
            if isinstance(their_element, str) and their_element.startswith("("):
                names = [node["name"] for node in our_element]
                positions = [their_element.find(f"name='{n}'") if n != "left" else their_element.find("function left")
                             for n in names]
                assert all(p >= 0 for p in positions) and positions == sorted(positions), (names, their_element)
            else:
                assert our_element == their_element


def test_build_graph_is_google_adks_json_of_the_workflow(theirs: Any, ours: httpx.Client) -> None:
    their_answer = theirs.get("/dev/apps/graphs/build_graph")
    our_answer = ours.get("/dev/apps/graphs/build_graph")
    assert their_answer.status_code == our_answer.status_code == 200
    their_json, our_json = their_answer.json(), our_answer.json()
    assert our_json["name"] == their_json["name"] == "graphs"
    their_root, our_root = their_json["root_agent"], our_json["root_agent"]
    assert our_root["graph"] == their_root["graph"]
    assert [n["type"] for n in their_root["graph"]["nodes"]] == [
        "start", "function", "function", "function", "function", "agent", "workflow", "join", "function",
        "function"]
    assert {k: v for k, v in our_root.items() if k != "edges"} == {
        k: v for k, v in their_root.items() if k != "edges"}
    _edges_alike(their_root["edges"], our_root["edges"])


@pytest.mark.parametrize("query", ["", "?dark_mode=true", "?node=inner", "?node=inner&dark_mode=true"])
def test_build_graph_image_is_google_adks_dot_of_each_workflow(theirs: Any, ours: httpx.Client, query: str) -> None:
    their_answer = theirs.get(f"/dev/apps/graphs/build_graph_image{query}")
    our_answer = ours.get(f"/dev/apps/graphs/build_graph_image{query}")
    assert their_answer.status_code == our_answer.status_code == 200
    their_json = their_answer.json()
    assert set(their_json) == ({"inner"} if "node" in query else {"", "inner"})
    assert our_answer.json() == their_json
    root = their_json.get("") or their_json["inner"]
    assert root["dotSrc"].startswith("// Workflow Visualization\ndigraph {")


def test_an_unknown_node_is_404_on_both_and_graph_draws_the_root_workflow(theirs: Any, ours: httpx.Client) -> None:
    assert theirs.get("/dev/apps/graphs/build_graph_image?node=nowhere").status_code == 404
    missing = ours.get("/dev/apps/graphs/build_graph_image?node=nowhere")
    assert missing.status_code == 404 and "nowhere" in missing.text
    assert ours.get("/dev/apps/nowhere/build_graph").status_code == 404
    drawn = ours.get("/dev/apps/graphs/graph").json()["dotSrc"]
    assert drawn == theirs.get("/dev/apps/graphs/build_graph_image").json()[""]["dotSrc"]
    assert "classify -> long_path [label=\"  long\"]" in drawn and "summary -> __END__" in drawn
    assert json.dumps(drawn)  # plain text


def _their_drawing(statuses: dict[str, str], dark_mode: bool) -> str:
    """google-adk's drawing of ``asking_app`` with these node statuses."""
    from google.adk.cli.utils.graph_serialization import serialize_agent
    from google.adk.cli.utils.graph_visualization import plot_workflow_graph
    from google.adk.workflow._node_status import NodeStatus

    namespace: dict[str, Any] = {}
    exec(compile(GRAPH, "graph_views_app", "exec"), namespace)
    state = {"nodes": {name: {"status": NodeStatus[status.upper()]} for name, status in statuses.items()}}
    return str(plot_workflow_graph({"root_agent": serialize_agent(namespace["asking_app"])}, state, format="dot",
                                   dark_mode=dark_mode))


def test_the_event_graph_fills_each_node_with_its_status_at_that_event(ours: httpx.Client) -> None:
    base = "/apps/asking/users/ann/sessions"
    assert ours.post(f"{base}/s1", json={}).status_code == 200
    asked = ours.post("/run", json={"appName": "asking", "userId": "ann", "sessionId": "s1",
                                    "newMessage": {"role": "user", "parts": [{"text": "tea"}]}}).json()
    answer = {"role": "user", "parts": [{"functionResponse": {"id": "go-ahead", "name": "adk_request_input",
                                                               "response": {"result": "yes"}}}]}
    shipped = ours.post("/run", json={"appName": "asking", "userId": "ann", "sessionId": "s1",
                                      "newMessage": answer}).json()
    by_node = {e["nodeInfo"]["path"].split("/")[-1]: e["id"] for e in asked + shipped if e.get("nodeInfo")}
    assert set(by_node) == {"prep@1", "ask@1", "ship@1"}

    def drawn(event_id: str, dark: bool = False) -> str:
        answer = ours.get(f"/dev/apps/asking/users/ann/sessions/s1/events/{event_id}/graph",
                          params={"dark_mode": str(dark).lower()})
        assert answer.status_code == 200
        return str(answer.json()["dotSrc"])

    assert drawn(by_node["prep@1"]) == _their_drawing({"prep": "completed"}, False)
    assert drawn(by_node["ask@1"]) == _their_drawing({"prep": "completed", "ask": "waiting"}, False)
    assert 'ask [label=<<FONT COLOR="#10B981" POINT-SIZE="14">ƒ</FONT> ask> fillcolor="#d2a6e0"' in drawn(
        by_node["ask@1"])  # waiting
    assert drawn(by_node["ask@1"], True) == _their_drawing({"prep": "completed", "ask": "waiting"}, True)
    assert drawn(by_node["ship@1"]) == _their_drawing({"prep": "completed", "ask": "completed",
                                                       "ship": "completed"}, False)
    assert ours.get("/dev/apps/asking/users/ann/sessions/s1/events/no-such-event/graph").json() == {}
    assert ours.get("/dev/apps/asking/users/ann/sessions/nobody/events/x/graph").json() == {}
