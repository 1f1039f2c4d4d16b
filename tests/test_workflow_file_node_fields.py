"""Issue 52/55: the node fields a google-adk 2.13 workflow file gives its nodes, side by
side with google-adk (``agents/config_agent_utils.from_config``): a node's
``input_schema`` / ``output_schema`` (a code reference, ``{name: ...}``, ``x_code``, or a
JSON schema kept as it is), a FunctionNode's ``require_confirmation`` (true, or a
predicate by code reference) and ``parameter_binding``.

The same YAML files (only the package of the user's code differs) are loaded by both
kits into the same nodes, and run by both against one Gemini stand-in: the same events
(outputs checked and coerced by the schemas, parameters bound from the node input, the
confirmation request and what its answer does), the same state; a Workflow's own
``input_schema`` / ``output_schema`` too. What google-adk refuses is refused here (an
AgentDefinitionError naming the file and the node); what it takes and ours cannot run
yet (a FunctionNode's ``auth_config``) is refused by name rather than ignored.
"""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import rewritten, run_program

from adk_actors import AgentDefinitionError
from adk_actors.agents import config_agent_utils

pytest.importorskip("google.adk.workflow")
from google.adk.agents import config_agent_utils as adk_utils

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning"),
              pytest.mark.timeout(120)]

stand_in, gemini = harness.stand_in, harness.gemini

FUNCS = """\
from pydantic import BaseModel

NOT_A_SCHEMA = 3
Items = list[str]


class Order(BaseModel):
    item: str
    qty: int = 1
    note: str | None = None


class Receipt(BaseModel):
    item: str
    total: float
    coupon: str | None = None


def parse(node_input: str) -> dict:
    item, qty = node_input.split()
    return {"item": item, "qty": qty}


def price(node_input: Order) -> Receipt:
    return Receipt(item=node_input.item, total=node_input.qty * 2.5)


def relay(node_input):
    return node_input


def charge(item: str, total: float, **extra) -> dict:
    return {"item": item, "charged": total, "extra": sorted(extra)}


def costly(node_input) -> bool:
    return node_input["charged"] > 5


def ship(node_input: dict) -> str:
    return "shipped " + node_input["item"]


def tally(node_input) -> list:
    return [node_input["item"], 7]


def label(node_input) -> dict:
    return {"item": node_input["item"], "qty": "2"}
"""

#: the graph both kits load and run (``{pkg}`` is the package of the user's code)
SHOP = """\
    agent_class: Workflow
    name: shop
    edges:
      - - START
        - {{agent_class: FunctionNode, name: parse, func_code: .funcs.parse, output_schema: {pkg}.funcs.Order}}
        - .funcs.price
        - .funcs.relay
        - {{agent_class: FunctionNode, name: charge, func_code: .funcs.charge, parameter_binding: node_input}}
        - {{agent_class: FunctionNode, name: ship, func_code: .funcs.ship, rerun_on_resume: true,
            require_confirmation: {pkg}.funcs.costly}}
    """

#: every form of the fields, for the trees both kits build
FORMS = """\
    agent_class: Workflow
    name: forms
    edges:
      - - START
        - {{agent_class: FunctionNode, name: parse, func_code: .funcs.parse,
            output_schema: {{name: {pkg}.funcs.Order}}, input_schema: {pkg}.funcs.Items}}
        - [{{agent_class: FunctionNode, name: price, func_code: .funcs.price}}, .funcs.relay]
        - {{agent_class: JoinNode, name: meet, input_schema_code: .funcs.Receipt, description: Both.}}
      - - relay
        - {{agent_class: FunctionNode, name: charge, func_code: .funcs.charge, parameter_binding: node_input,
            output_schema_code: .funcs.Receipt}}
        - {{agent_class: FunctionNode, name: ship, func_code: .funcs.ship, rerun_on_resume: true,
            require_confirmation: true}}
        - {{agent_class: FunctionNode, name: label, func_code: .funcs.label, rerun_on_resume: true,
            require_confirmation_code: .funcs.costly}}
        - {{agent_class: FunctionNode, name: tally, func_code: .funcs.tally, output_schema: {{type: array}}}}
    """


class Kits:
    """The same app for each kit: a package of the user's code and the YAML files."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.packages = {"theirs": f"theirs_nf_{uuid.uuid4().hex[:8]}", "ours": f"ours_nf_{uuid.uuid4().hex[:8]}"}
        for package in self.packages.values():
            folder = root / package
            folder.mkdir()
            (folder / "__init__.py").write_text("")
            (folder / "funcs.py").write_text(FUNCS)

    def file(self, side: str, name: str, text: str) -> str:
        path = self.root / self.packages[side] / f"{name}.yaml"
        path.write_text(textwrap.dedent(text).format(pkg=self.packages[side]))
        return str(path)

    def load(self, name: str, text: str) -> dict[str, Any]:
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


def _schema(schema: Any) -> Any:
    if schema is None or isinstance(schema, dict):
        return schema
    return getattr(schema, "__name__", None) if isinstance(schema, type) else repr(schema).split(".")[-1]


def _settings(node: Any) -> dict[str, Any]:
    confirm = getattr(node, "require_confirmation", None)
    return {"name": node.name, "class": type(node).__name__, "description": node.description,
            "input_schema": _schema(node.input_schema), "output_schema": _schema(node.output_schema),
            "require_confirmation": confirm if isinstance(confirm, bool) or confirm is None else confirm.__name__,
            "parameter_binding": getattr(node, "parameter_binding", None), "rerun_on_resume": node.rerun_on_resume}


def nodes(workflow: Any) -> list[dict[str, Any]]:
    """Each node of the workflow's graph (START left out), by name: its settings."""
    found = {end.name: end for edge in workflow.graph.edges for end in (edge.from_node, edge.to_node)}
    return [_settings(found[name]) for name in sorted(found) if name != "__START__"]


@pytest.mark.parametrize("case", ["shop", "forms"])
def test_a_file_gives_its_nodes_the_same_fields_as_in_google_adk(kits: Kits, case: str) -> None:
    loaded = kits.load(case, {"shop": SHOP, "forms": FORMS}[case])
    theirs, ours = nodes(loaded["theirs"]), nodes(loaded["ours"])
    assert ours == theirs
    by_name = {row["name"]: row for row in theirs}
    if case == "forms":  # the case sets what it means to, on google-adk too
        assert by_name["parse"]["output_schema"] == "Order" and by_name["parse"]["input_schema"] == "list[str]"
        assert by_name["tally"]["output_schema"] == {"type": "array"}
        assert by_name["meet"]["input_schema"] == "Receipt" and by_name["meet"]["description"] == "Both."
        assert by_name["charge"]["output_schema"] == "Receipt"
        assert by_name["charge"]["input_schema"]["title"] == "chargeParams"
        assert by_name["label"]["require_confirmation"] == "costly"
    else:
        assert by_name["price"]["input_schema"] == "Order" and by_name["price"]["output_schema"] == "Receipt"


PROGRAM = '''
from google.adk.agents import config_agent_utils
from google.adk.runners import InMemoryRunner
from google.genai import types


async def main(path, turns):
    runner = InMemoryRunner(agent=config_agent_utils.from_config(path), app_name="shop")
    session = await runner.session_service.create_session(app_name="shop", user_id="ann")
    batches, asked, error = [], [], None
    try:
        for turn in turns:
            if isinstance(turn, str):
                parts = [types.Part(text=turn)]
            else:  # the answer to the latest request
                parts = [types.Part(function_response=types.FunctionResponse(
                    id=asked[-1], name="adk_request_input", response=turn))]
            batch = []
            batches.append(batch)  # kept when the turn fails
            async for event in runner.run_async(user_id="ann", session_id=session.id,
                                                new_message=types.Content(role="user", parts=parts)):
                batch.append(event)
                asked.extend(c.id for c in event.get_function_calls() if c.name == "adk_request_input")
    except Exception as exc:
        error = type(exc).__name__
    session = await runner.session_service.get_session(app_name="shop", user_id="ann", session_id=session.id)
    await runner.close()
    return batches, dict(session.state), error
'''


def _args(args: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments; a request's response schema without its ``description`` (the
    docstring of each kit's ToolConfirmation class, in its own words)."""
    schema = args.get("response_schema")
    if isinstance(schema, dict):
        args = {**args, "response_schema": {k: v for k, v in schema.items() if k != "description"}}
    return args


def _rows(batch: list[Any]) -> list[dict[str, Any]]:
    """What a google-adk user reads of each node event of one turn."""
    found = []
    for event in batch:
        info = event.node_info
        found.append(json.loads(json.dumps({
            "author": event.author,
            "calls": [(c.id, c.name, _args(c.args or {})) for c in event.get_function_calls()],
            "long_running": sorted(event.long_running_tool_ids or []),
            "path": info.path if info is not None else None,
            "output": event.output,
            "state_delta": dict(event.actions.state_delta),
            "error_code": event.error_code,
            "error_message": event.error_message,
        }, default=str, sort_keys=True)))
    return found


def run_both(kits: Kits, server: Any, text: str, turns: list[Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The file run by google-adk, then here, turn by turn: the event rows, the state
    and the error that ended it (or None)."""
    seen = []
    for side, source in (("theirs", PROGRAM), ("ours", rewritten(PROGRAM))):
        _, (batches, state, error) = run_program(source, [], server, kits.file(side, "run", text), turns)
        seen.append({"turns": [_rows(batch) for batch in batches], "state": state, "error": error})
    return seen[0], seen[1]


def _outputs(run: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(row["path"], row["output"]) for rows in run["turns"] for row in rows if row["output"] is not None]


@pytest.mark.parametrize("answer", [{"confirmed": True}, {"confirmed": False}])
def test_a_file_runs_its_schemas_binding_and_confirmation_as_google_adk(kits: Kits, gemini: Any,
                                                                         answer: dict[str, Any]) -> None:
    theirs, ours = run_both(kits, gemini, SHOP, ["tea 3", answer])
    assert ours == theirs
    assert theirs["error"] is None
    # what the case shows, as google-adk does it: the output schema made "3" a number and
    # left out the unset field; the node bound its parameters from its input; the
    # confirmation was asked for and its answer decided
    outputs = _outputs(theirs)
    assert outputs[:4] == [("shop@1/parse@1", {"item": "tea", "qty": 3}),
                           ("shop@1/price@1", {"item": "tea", "total": 7.5}),
                           ("shop@1/relay@1", {"item": "tea", "total": 7.5}),
                           ("shop@1/charge@1", {"item": "tea", "charged": 7.5, "extra": []})]
    asked = [call for row in theirs["turns"][0] for call in row["calls"]]
    assert asked == [["wf_tool_confirmation:shop@1/ship@1", "adk_request_input", asked[0][2]]]
    assert asked[0][2]["payload"] == {"tool_name": "ship", "args": {"node_input": outputs[3][1]}}
    assert outputs[4:] == [("shop@1/ship@1", "shipped tea" if answer["confirmed"]
                            else {"error": "This tool call is rejected."})]


def test_a_predicate_that_needs_no_confirmation_runs_the_node_at_once(kits: Kits, gemini: Any) -> None:
    theirs, ours = run_both(kits, gemini, SHOP, ["tea 1"])
    assert ours == theirs
    assert _outputs(theirs)[-1] == ("shop@1/ship@1", "shipped tea")
    assert not [row for row in theirs["turns"][0] if row["calls"]]


def test_an_output_its_schema_refuses_fails_the_node_as_in_google_adk(kits: Kits, gemini: Any) -> None:
    theirs, ours = run_both(kits, gemini, SHOP, ["tea lots"])
    assert ours["turns"] == theirs["turns"] and ours["state"] == theirs["state"]
    assert ours["error"] is not None and theirs["error"] is not None
    assert not _outputs(theirs)


def test_an_input_its_schema_refuses_fails_the_run_as_in_google_adk(kits: Kits, gemini: Any) -> None:
    """The node does not run and the run fails with pydantic's ValidationError, on both:
    the graph checks the node's input before it starts the node, so the error event is
    the workflow's (``shop@1``), its error titled for the node (``dynamic node 'ship'``)."""
    text = """\
        agent_class: Workflow
        name: shop
        edges:
          - [START, {{agent_class: FunctionNode, name: ship, func_code: .funcs.ship, input_schema: {pkg}.funcs.Order}}]
        """
    theirs, ours = run_both(kits, gemini, text, ['{"qty": 2}'])
    assert ours == theirs
    assert [(row["author"], row["path"], row["error_code"]) for rows in theirs["turns"] for row in rows] == [
        ("shop", "shop@1", "ValidationError")]
    assert theirs["turns"][0][0]["error_message"].startswith("1 validation error for dynamic node 'ship'\nitem\n")
    assert theirs["error"] == "ValidationError"
    assert not _outputs(ours)


#: files google-adk refuses too (a ValueError); ours: an AgentDefinitionError naming the
#: file and the node, with these words
REFUSED = {
    "schema_not_importable": ("output_schema: {pkg}.funcs.Missing", "Missing"),
    "schema_module_not_importable": ("input_schema: {pkg}.nowhere.Order", "nowhere"),
    "schema_not_a_type": ("output_schema: {pkg}.funcs.NOT_A_SCHEMA", "output_schema"),
    "confirmation_of_a_wrong_type": ("rerun_on_resume: true, require_confirmation: 3", "require_confirmation"),
    "predicate_not_importable": ("rerun_on_resume: true, require_confirmation: {pkg}.funcs.nobody", "nobody"),
    "binding_of_a_wrong_value": ("parameter_binding: sideways", "parameter_binding"),
    "confirmation_without_rerun": ("require_confirmation: true", "rerun_on_resume=True"),
}


def _file_with(fields: str) -> str:
    return ("agent_class: Workflow\nname: flow\nedges:\n  - - START\n"
            f"    - {{{{agent_class: FunctionNode, name: fin, func_code: .funcs.ship, {fields}}}}}\n")


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_bad_node_field_is_refused_naming_the_file_and_the_node(kits: Kits, case: str) -> None:
    fields, words = REFUSED[case]
    with pytest.raises((ValueError, TypeError)), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        adk_utils.from_config(kits.file("theirs", case, _file_with(fields)))
    path = kits.file("ours", case, _file_with(fields))
    with pytest.raises(AgentDefinitionError) as ours:
        config_agent_utils.from_config(path)
    said = str(ours.value)
    assert path in said and "'fin'" in said and words in said


def test_a_function_nodes_auth_config_in_a_file_is_read_as_google_adk_reads_it(kits: Kits) -> None:
    """google-adk takes a function node's ``auth_config`` in a workflow file (the node
    asks for a credential before it runs: tests/test_workflow_node_auth_r21.py): ours
    reads the mapping as an ``AuthConfig`` with the same scheme and the same default
    credential key; without ``rerun_on_resume`` both refuse it."""
    text = _file_with("rerun_on_resume: true, auth_config: {{auth_scheme: {{type: apiKey, in: header, "
                      "name: key}}}}")
    loaded = kits.load("auth_config", text)
    found = {}
    for side, agent in loaded.items():
        nodes = agent.graph.nodes  # google-adk's a list, ours a dict by name
        [fin] = [n for n in (nodes.values() if isinstance(nodes, dict) else nodes) if getattr(n, "name", "") == "fin"]
        config = fin.auth_config
        found[side] = (type(config).__name__, config.auth_scheme.type_.value, config.auth_scheme.name,
                       config.credential_key)
    assert found["ours"] == found["theirs"] and found["ours"][:3] == ("AuthConfig", "apiKey", "key")
    refused = _file_with("auth_config: {{auth_scheme: {{type: apiKey, in: header, name: key}}}}")
    with pytest.raises((ValueError, TypeError)), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        adk_utils.from_config(kits.file("theirs", "auth_no_rerun", refused))
    with pytest.raises((AgentDefinitionError, ValueError, TypeError)):
        config_agent_utils.from_config(kits.file("ours", "auth_no_rerun", refused))


#: a Workflow's own schemas, in each form a file gives them (``{kind}``: which case)
OWN_SCHEMAS = {
    "names": """\
        agent_class: Workflow
        name: shop
        input_schema: {pkg}.funcs.Order
        output_schema_code: .funcs.Receipt
        edges:
          - [START, .funcs.price]
        """,
    "refused_output": """\
        agent_class: Workflow
        name: shop
        input_schema: {{name: {pkg}.funcs.Order}}
        output_schema: {pkg}.funcs.Order
        edges:
          - [START, .funcs.relay, .funcs.tally]
        """,
    "json": """\
        agent_class: Workflow
        name: shop
        input_schema: {{type: object}}
        output_schema: {{type: object}}
        edges:
          - [START, .funcs.ship]
        """,
}


@pytest.mark.parametrize("case", sorted(OWN_SCHEMAS))
def test_a_workflows_own_schemas_load_and_run_as_in_google_adk(kits: Kits, gemini: Any, case: str) -> None:
    """A Workflow's ``input_schema`` / ``output_schema`` in a file (a code reference,
    ``{name: ...}``, ``x_code``, a JSON schema) are the same schemas on both kits, and
    the file runs alike: its input coerced before the graph starts, its terminal
    output checked when it ends (refused: the workflow's own error event, ``shop@1``)."""
    loaded = kits.load(case, OWN_SCHEMAS[case])
    theirs_schemas, ours_schemas = ((_schema(w.input_schema), _schema(w.output_schema))
                                    for w in (loaded["theirs"], loaded["ours"]))
    assert ours_schemas == theirs_schemas
    theirs, ours = run_both(kits, gemini, OWN_SCHEMAS[case], ['{"item": "tea", "qty": "3"}'])
    assert ours == theirs
    rows = theirs["turns"][0]
    if case == "names":
        assert theirs_schemas == ("Order", "Receipt") and theirs["error"] is None
        assert _outputs(theirs) == [("shop@1/price@1", {"item": "tea", "total": 7.5})]
    elif case == "refused_output":
        assert theirs_schemas == ("Order", "Order") and theirs["error"] == "ValidationError"
        assert _outputs(theirs)[0] == ("shop@1/relay@1", {"item": "tea", "qty": 3})  # its input coerced
        assert [(row["path"], row["error_code"]) for row in rows if row["error_code"]] == [
            ("shop@1", "ValidationError")]
    else:
        assert theirs_schemas == ({"type": "object"}, {"type": "object"}) and theirs["error"] is None
        assert _outputs(theirs) == [("shop@1/ship@1", "shipped tea")]  # kept, never enforced


def test_node_asking_for_confirmation_reruns_on_resume_as_google_adk() -> None:
    """``node(..., require_confirmation=...)`` as google-adk's: the node runs again on
    resume unless told otherwise; told not to, or on a node that is no function node,
    it is refused."""
    from google.adk.workflow import JoinNode as TheirJoin
    from google.adk.workflow import node as their_node

    from adk_actors.workflow import JoinNode, WorkflowConfigurationError, node

    def step(total: float) -> float:
        return total

    for make in (their_node, node):
        made: Any = make(step, require_confirmation=True, parameter_binding="node_input")
        assert (made.rerun_on_resume, made.require_confirmation, made.parameter_binding) == (True, True, "node_input")
        again: Any = make(made, require_confirmation=False)
        assert again.require_confirmation is False and again.rerun_on_resume is True
    with pytest.raises(ValueError, match="rerun_on_resume=True"):
        their_node(step, require_confirmation=True, rerun_on_resume=False)
    with pytest.raises(WorkflowConfigurationError, match="rerun_on_resume=True"):
        node(step, require_confirmation=True, rerun_on_resume=False)
    with pytest.raises(ValueError, match="only supported on FunctionNode"):
        their_node(TheirJoin(name="meet"), require_confirmation=True)
    with pytest.raises(WorkflowConfigurationError, match="only supported on FunctionNode"):
        node(JoinNode(name="meet"), require_confirmation=True)
