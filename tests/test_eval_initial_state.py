"""A session added to an eval set begins its case with google-adk's initial state.

google-adk's ``add_session`` route gives the new case's ``session_input.state`` an empty
string for every ``{key}`` of the app's text instructions (its ``create_empty_state``:
every agent under the root and every graph node, a plain word only), so that a case
run later fills those keys with nothing. Ours: ``instruction_keys_state``, side by side
with google-adk's on the same tree, and the route on a served host (the pipeline app,
whose reviewer and summarizer read ``{code}`` and ``{review}``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import serving
from google.adk.agents import LlmAgent as TheirLlmAgent
from google.adk.agents import SequentialAgent as TheirSequentialAgent
from google.adk.cli.utils.state import create_empty_state
from google.adk.workflow import Workflow as TheirWorkflow

from adk_actors import LlmAgent, SequentialAgent
from adk_actors.evals import instruction_keys_state
from adk_actors.workflow import Workflow

INSTRUCTIONS = {"lead": "Plan for {who} in {city}.", "scout": "Look up {city}? {when?} {app:tone} {user:name}",
                "judge": "Judge {verdict} for {who}.", "noted": "No keys here."}


def _tree(llm: Any, sequential: Any, workflow: Any) -> Any:
    lead, scout, judge, noted = (llm(name=name, instruction=text) for name, text in INSTRUCTIONS.items())
    team = sequential(name="team", sub_agents=[lead, sequential(name="inner", sub_agents=[scout, noted])])
    return workflow(name="root", edges=[("START", team, judge)])  # graph nodes, and agents under a node


def test_the_keys_and_their_values_are_google_adks() -> None:
    theirs = create_empty_state(_tree(TheirLlmAgent, TheirSequentialAgent, TheirWorkflow))
    ours = instruction_keys_state(_tree(LlmAgent, SequentialAgent, Workflow))
    assert ours == theirs == {"who": "", "city": "", "verdict": ""}
    assert instruction_keys_state(None) == {}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with serving(tmp_path_factory.mktemp("initial"), apps='pipeline = "examples.pipeline.agent:root_agent"\n') as info:
        yield info


def test_a_session_added_to_an_eval_set_keeps_the_apps_instruction_keys_empty(served: dict[str, Any],
                                                                              tmp_path: Path) -> None:
    with httpx.Client(base_url=served["url"], timeout=60) as client:
        session = client.post("/apps/pipeline/users/ivy/sessions").json()["id"]
        ran = client.post("/run", json={"appName": "pipeline", "userId": "ivy", "sessionId": session,
                                        "newMessage": {"role": "user", "parts": [{"text": "a sum function"}]}})
        assert ran.status_code == 200, ran.text
        base = "/dev/apps/pipeline"
        assert client.post(f"{base}/eval-sets", json={"eval_set": {"eval_set_id": "keys"}}).status_code == 200
        added = client.post(f"{base}/eval_sets/keys/add_session",
                            json={"evalId": "one", "sessionId": session, "userId": "ivy"})
        assert added.status_code == 200, added.text
        case = client.get(f"{base}/eval_sets/keys/evals/one").json()
    state = (case.get("sessionInput") or case.get("session_input"))["state"]
    assert state == {"code": "", "review": ""}  # not the session's state (its code and review were written)
