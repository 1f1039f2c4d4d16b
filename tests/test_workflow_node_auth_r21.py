"""A workflow function node that waits for a credential (issue 52: google-adk 2.13's
``FunctionNode(auth_config=..., rerun_on_resume=True)``).

Side by side with google-adk 2.13 (the same program, imports rewritten by
search-and-replace; no model is called): with no credential in the state the node asks
with an ``adk_request_credential`` call of id ``wf_auth:<node path>`` (its args
``functionCallId``, ``authConfig`` with no configured secret, ``message``), the OAuth
state it made in the question's state delta, and the run stops; the client's answer
(a function response to that id carrying the request's ``authConfig`` with the
credential filled in, or a bare API key) makes the node run again and read the
credential through ``AuthHandler(auth_config).get_auth_response(ctx.state)``; the
nodes after it run. Compared per turn: each event as a google-adk user reads it (the
random OAuth state and PKCE challenge named), the final session state, and the error
that ended a turn. Cases: an API key answered as an ``AuthConfig`` and as a bare key;
an OAuth2 authorization code flow, its code exchanged at a local token endpoint (a
confidential client, and a public one with PKCE whose verifier stays out of the
question and reaches the token endpoint); an answer with another OAuth state, refused,
the question still open for a good answer; a credential already in the state (no
question); the refusals when the node is built.

On a real host: the node waits across a restart of the host (a new host on the same
data), the answer given as the next message runs it once, and the graph finishes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import sys
import threading
import types
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest
from fastapi.openapi.models import APIKey, APIKeyIn

from adk_actors import Content
from adk_actors.auth import AuthConfig, AuthCredential, AuthCredentialTypes, AuthHandler
from adk_actors.runtime import Host, HostConfig
from adk_actors.types import FunctionResponse, Part
from adk_actors.workflow import START, FunctionNode, Workflow, WorkflowDataError, waiting_inputs

pytest.importorskip("google.adk.workflow")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


def rewritten(source: str) -> str:
    """The program for ours: its imports, and only they, changed."""
    source = source.replace("from google.genai import types", "from adk_actors import types")
    return re.sub(r"\bgoogle\.adk\b", "adk_actors", source)


HEAD = '''
import copy
from fastapi.openapi.models import APIKey, APIKeyIn, OAuthFlowAuthorizationCode, OAuthFlows
from google.adk.auth.auth_credential import AuthCredential, AuthCredentialTypes, OAuth2Auth
from google.adk.auth.auth_handler import AuthHandler
from google.adk.auth.auth_schemes import OAuth2
from google.adk.auth.auth_tool import AuthConfig
from google.adk.runners import InMemoryRunner
from google.adk.workflow import START, FunctionNode, Workflow
from google.genai import types
'''

MAIN = '''
def merged(base, extra):
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merged(base[key], value)
        else:
            base[key] = value
    return base

async def main(turns, seed):
    runner = InMemoryRunner(agent=root, app_name="keys")
    session = await runner.session_service.create_session(app_name="keys", user_id="ann", state=seed)
    batches, question, errors = [], None, []
    for turn in turns:
        if isinstance(turn, str):
            parts = [types.Part(text=turn)]
        else:  # (how, what): "config": the question's authConfig, what merged into it; "raw": what as it is
            how, what = turn
            args = question.args
            made = ((args["authConfig"].get("exchangedAuthCredential") or {}).get("oauth2") or {}).get("state", "")
            if how == "config":
                what = merged(copy.deepcopy(args["authConfig"]), what)
            what = json.loads(json.dumps(what).replace("{state}", made))
            parts = [types.Part(function_response=types.FunctionResponse(
                id=question.id, name="adk_request_credential", response=what))]
        batch, error = [], None
        try:
            async for event in runner.run_async(user_id="ann", session_id=session.id,
                                                new_message=types.Content(role="user", parts=parts)):
                batch.append(event)
                question = next((c for c in event.get_function_calls() if c.name == "adk_request_credential"),
                                question)
        except Exception as exc:
            error = type(exc).__name__
        batches.append(batch)
        errors.append(error)
    session = await runner.session_service.get_session(app_name="keys", user_id="ann", session_id=session.id)
    return batches, dict(session.state), errors
'''

API_KEY = '''
import json
weather = AuthConfig(auth_scheme=APIKey(**{"in": APIKeyIn.header, "name": "X-Weather-Key"}),
                     raw_auth_credential=AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key=""),
                     credential_key="weather_key")
calls = []

def forecast(node_input, ctx):
    credential = AuthHandler(weather).get_auth_response(ctx.state)
    calls.append(credential.api_key)
    return {"city": "Paris", "key_ends": credential.api_key[-3:], "runs": len(calls)}

def report(node_input, ctx):
    ctx.state["report"] = f"{node_input['city']} with ...{node_input['key_ends']}"
    return ctx.state["report"]

root = Workflow(name="weather", edges=[
    (START, FunctionNode(func=forecast, auth_config=weather, rerun_on_resume=True), report)])
'''

OAUTH = '''
import json
calendar = AuthConfig(
    auth_scheme=OAuth2(flows=OAuthFlows(authorizationCode=OAuthFlowAuthorizationCode(
        authorizationUrl="https://auth.example/authorize", tokenUrl=TOKEN_URL,
        scopes={"calendar.read": "read your calendar"}))),
    raw_auth_credential=AuthCredential(auth_type=AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth(
        client_id="cal-client", client_secret=CLIENT_SECRET, redirect_uri="https://app.example/done")),
    credential_key="calendar")

def agenda(ctx):
    credential = AuthHandler(calendar).get_auth_response(ctx.state)
    return {"token": credential.oauth2.access_token}

root = Workflow(name="planner", edges=[
    (START, FunctionNode(func=agenda, auth_config=calendar, rerun_on_resume=True))])
'''


def _module_run(source: str, turns: list[Any], seed: dict[str, Any]) -> Any:
    import asyncio

    module = types.ModuleType("node_auth_case")
    sys.modules["node_auth_case"] = module
    try:
        exec(compile(source, "<node auth case>", "exec"), module.__dict__)
        return asyncio.run(asyncio.wait_for(module.__dict__["main"](turns, seed), timeout=60))
    finally:
        sys.modules.pop("node_auth_case", None)


def _plain(value: Any) -> Any:
    """A value as JSON (a pydantic model as its camelCase dump without None)."""
    def default(item: Any) -> Any:
        dump = getattr(item, "model_dump", None)
        return dump(mode="json", by_alias=True, exclude_none=True) if dump else str(item)
    return json.loads(json.dumps(value, default=default, sort_keys=True))


def _rows(batch: list[Any], named: dict[str, str]) -> list[dict[str, Any]]:
    """What a google-adk user reads of each event; the random OAuth state and PKCE
    challenge (found in the question's sign-in URL) named, a PKCE verifier kept in the
    state shown by its presence only."""
    rows = []
    for event in batch:
        content, info = event.content, event.node_info
        delta = _plain(dict(event.actions.state_delta))
        for key, value in delta.items():
            if key.startswith("adk_oauth_credential:") and value is not None:
                oauth2 = value.get("oauth2", {})
                delta[key] = {"verifier": bool(oauth2.get("codeVerifier")), "method": oauth2.get("codeChallengeMethod")}
        row = json.dumps({
            "author": event.author,
            "role": content.role if content else None,
            # the question's ``message`` is each side's own words: compared apart (MESSAGES)
            "calls": [(c.id, c.name, {**_plain(c.args), **({"message": "<message>"} if "message" in c.args else {})})
                      for c in event.get_function_calls()],
            "long_running": sorted(event.long_running_tool_ids or []),
            "path": info.path,
            "output_for": info.output_for,
            "output": _plain(event.output),
            "state_delta": delta,
            "error_code": event.error_code,
        }, sort_keys=True)
        for found in re.findall(r"[?&]state=([A-Za-z0-9]+)", row):
            named.setdefault(found, "<state>")
        for found in re.findall(r"code_challenge=([A-Za-z0-9_-]+)", row):
            named.setdefault(found, "<challenge>")
        for raw, name in named.items():
            row = row.replace(raw, name)
        rows.append(json.loads(row))
    return rows


def both(source: str, turns: list[Any], seed: dict[str, Any] | None = None,
         named: list[dict[str, str]] | None = None) -> tuple[Any, Any]:
    """``source`` on google-adk, then on ours rewritten: per turn its event rows and the
    error that ended it, and the final state, a key set to None left out (here a key
    set to None is deleted: the store's rule; google-adk keeps it, None) (``named``,
    when given, gets each side's random values by their names)."""
    program = HEAD + source + MAIN
    runs = []
    assert "google" not in rewritten(program)
    for text in (program, rewritten(program)):
        batches, state, errors = _module_run(text, turns, dict(seed or {}))
        names: dict[str, str] = {}
        if named is not None:
            named.append(names)
        runs.append({"turns": [_rows(batch, names) for batch in batches], "errors": errors,
                     "state": _plain({k: ("<state>" if k.startswith("adk_oauth_state:") else v)
                                      for k, v in state.items() if v is not None})})
    return runs[0], runs[1]


@pytest.fixture
def token_endpoint() -> Iterator[dict[str, Any]]:
    """A local OAuth2 token endpoint (random loopback port): each POST's form recorded,
    answered with access token ``tok-<the code>``."""
    seen: list[dict[str, list[str]]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
            seen.append(parse_qs(body))
            payload = json.dumps({"access_token": f"tok-{seen[-1].get('code', ['none'])[0]}", "token_type": "Bearer",
                                  "expires_in": 3600}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield {"url": f"http://127.0.0.1:{server.server_address[1]}/token", "seen": seen}
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


QUESTION_ID = "wf_auth:weather@1/forecast@1"


def test_an_api_key_node_asks_stops_and_runs_again_with_the_answered_key_as_google_adk() -> None:
    """Turn 1: google-adk's question (id, name, args, long-running id, node path), and
    nothing after it (``report`` does not run). Turn 2 answers with the request's
    ``authConfig``, the key filled in: the node runs once, with the key, then
    ``report``; the key is not kept in the session state (``temp:``), alike."""
    answer = ("config", {"exchangedAuthCredential": {"authType": "apiKey", "apiKey": "wx-secret-123"}})
    theirs, ours = both(API_KEY, ["Paris?", answer])
    assert ours == theirs
    [question] = ours["turns"][0]
    assert question["calls"] == [[QUESTION_ID, "adk_request_credential", {
        "functionCallId": QUESTION_ID,
        "authConfig": {"authScheme": {"type": "apiKey", "in": "header", "name": "X-Weather-Key"},
                       "rawAuthCredential": {"authType": "apiKey"}, "credentialKey": "weather_key"},
        "message": "<message>"}]]
    assert question["long_running"] == [QUESTION_ID] and question["path"] == "weather@1/forecast@1"
    assert [(r["path"], r["output"]) for r in ours["turns"][1]] == [
        ("weather@1/forecast@1", {"city": "Paris", "key_ends": "123", "runs": 1}),
        ("weather@1/report@1", "Paris with ...123")]
    assert ours["state"] == {"report": "Paris with ...123"} and ours["errors"] == [None, None]


def test_a_bare_key_answers_an_api_key_question_and_a_key_in_the_state_asks_nothing_as_google_adk() -> None:
    """``{"result": "<key>"}`` (as adk-web sends typed text) answers the question; a run
    whose state holds the credential under its key never asks."""
    theirs, ours = both(API_KEY, ["Paris?", ("raw", {"result": "plain-key-789"})])
    assert ours == theirs and ours["turns"][1][0]["output"]["key_ends"] == "789"
    theirs, ours = both(API_KEY, ["Paris?"], seed={"weather_key": {"authType": "apiKey", "apiKey": "seeded-456"}})
    assert ours == theirs
    assert [r["output"] for r in ours["turns"][0]] == [{"city": "Paris", "key_ends": "456", "runs": 1},
                                                         "Paris with ...456"]


def test_an_oauth2_code_flow_node_asks_with_a_sign_in_url_and_its_code_is_exchanged_as_google_adk(
        token_endpoint: dict[str, Any]) -> None:
    """A confidential client: the question carries the sign-in URL and its state (no
    client secret), the state is in its state delta under ``adk_oauth_state:<id>``;
    the answer (the redirect URL with the code and that state) makes the node run
    again, the code exchanged at the token endpoint with the client's own secret."""
    source = f"TOKEN_URL = {token_endpoint['url']!r}\nCLIENT_SECRET = 'cal-secret'\n" + OAUTH
    redirect = {"exchangedAuthCredential": {"oauth2": {
        "authResponseUri": "https://app.example/done?code=code-42&state={state}"}}}
    theirs, ours = both(source, ["plan my day", ("config", redirect)])
    assert ours == theirs
    [question] = ours["turns"][0]
    interrupt = "wf_auth:planner@1/agenda@1"
    args = question["calls"][0][2]
    assert question["calls"][0][:2] == [interrupt, "adk_request_credential"]
    assert "cal-secret" not in json.dumps(args) and args["message"] == "<message>"
    assert args["authConfig"]["exchangedAuthCredential"]["oauth2"]["state"] == "<state>"
    assert question["state_delta"] == {f"adk_oauth_state:{interrupt}": "<state>"}
    assert [r["output"] for r in ours["turns"][1]] == [{"token": "tok-code-42"}]
    assert [form["code"] for form in token_endpoint["seen"]] == [["code-42"], ["code-42"]]
    assert ours["state"] == {f"adk_oauth_state:{interrupt}": "<state>"}


def test_a_public_clients_pkce_verifier_stays_out_of_the_question_and_reaches_the_token_endpoint_as_google_adk(
        token_endpoint: dict[str, Any]) -> None:
    """No client secret: PKCE. The question's sign-in URL has a S256 challenge and no
    verifier; the verifier is kept in the state under ``adk_oauth_credential:<id>``
    (emptied once answered) and sent with the code: its S256 is the challenge."""
    source = f"TOKEN_URL = {token_endpoint['url']!r}\nCLIENT_SECRET = None\n" + OAUTH
    redirect = {"exchangedAuthCredential": {"oauth2": {
        "authResponseUri": "https://app.example/done?code=code-7&state={state}"}}}
    named: list[dict[str, str]] = []
    theirs, ours = both(source, ["plan my day", ("config", redirect)], named=named)
    assert ours == theirs
    interrupt = "wf_auth:planner@1/agenda@1"
    [question] = ours["turns"][0]
    assert "codeVerifier" not in json.dumps(question["calls"])
    assert question["state_delta"][f"adk_oauth_credential:{interrupt}"] == {"verifier": True, "method": "S256"}
    assert f"adk_oauth_credential:{interrupt}" not in ours["state"]  # set to None once answered: deleted here
    assert ours["turns"][1][0]["state_delta"] == {f"adk_oauth_credential:{interrupt}": None}
    assert len(token_endpoint["seen"]) == 2  # google-adk's exchange, then ours
    for form, names in zip(token_endpoint["seen"], named, strict=True):
        [challenge] = [raw for raw, name in names.items() if name == "<challenge>"]
        digest = hashlib.sha256(form["code_verifier"][0].encode()).digest()
        assert base64.urlsafe_b64encode(digest).decode().rstrip("=") == challenge
        assert form["code"] == ["code-7"]


def test_an_answer_with_another_oauth_state_is_refused_and_the_question_stays_open_as_google_adk(
        token_endpoint: dict[str, Any]) -> None:
    """The answer's state is not the question's: a ``WorkflowDataError`` ends the turn,
    nothing is exchanged, the node does not run; a good answer then finishes it. One
    difference: google-adk's node runs and fails (its error event at the node's path);
    here the answer is refused before anything runs (the error event at the
    workflow's path), so the question stays open as google-adk's does."""
    source = f"TOKEN_URL = {token_endpoint['url']!r}\nCLIENT_SECRET = 'cal-secret'\n" + OAUTH
    forged = {"exchangedAuthCredential": {"oauth2": {
        "state": "forged", "authResponseUri": "https://app.example/done?code=evil&state=forged"}}}
    good = {"exchangedAuthCredential": {"oauth2": {
        "authResponseUri": "https://app.example/done?code=code-9&state={state}"}}}
    theirs, ours = both(source, ["plan my day", ("config", forged), ("config", good)])
    assert ours["errors"] == theirs["errors"] == [None, "WorkflowDataError", None]
    [their_refusal], [our_refusal] = theirs["turns"][1], ours["turns"][1]
    assert (their_refusal["path"], our_refusal["path"]) == ("planner@1/agenda@1", "planner@1")
    their_refusal["path"] = our_refusal["path"]
    assert ours == theirs
    assert [[r["output"] for r in turn] for turn in ours["turns"][2:]] == [[{"token": "tok-code-9"}]]
    assert [form["code"] for form in token_endpoint["seen"]] == [["code-9"], ["code-9"]]


def _api_config() -> AuthConfig:
    return AuthConfig(auth_scheme=APIKey.model_validate({"in": APIKeyIn.header, "name": "X-Key"}),
                      raw_auth_credential=AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key=""),
                      credential_key="host_key")


def test_auth_config_without_rerun_on_resume_is_refused_when_built_with_google_adks_error_type() -> None:
    """``FunctionNode(auth_config=...)`` and ``node(fn, auth_config=...)`` without
    ``rerun_on_resume=True``: WorkflowConfigurationError on both sides; with it, built."""
    import google.adk.workflow as theirs
    from google.adk.auth.auth_credential import AuthCredential as TheirCredential
    from google.adk.auth.auth_credential import AuthCredentialTypes as TheirTypes
    from google.adk.auth.auth_tool import AuthConfig as TheirConfig
    from google.adk.workflow._errors import WorkflowConfigurationError as their_error

    import adk_actors.workflow as ours

    def fetch(node_input: Any) -> Any:
        return node_input

    their_config = TheirConfig(auth_scheme=APIKey.model_validate({"in": APIKeyIn.header, "name": "X-Key"}),
                               raw_auth_credential=TheirCredential(auth_type=TheirTypes.API_KEY, api_key=""))
    for module, config, error in ((theirs, their_config, their_error),
                                  (ours, _api_config(), ours.WorkflowConfigurationError)):
        with pytest.raises(error):
            module.FunctionNode(func=fetch, auth_config=config)
        with pytest.raises(error):
            module.node(fetch, auth_config=config)
        built = module.node(fetch, auth_config=config, rerun_on_resume=True)
        assert built.auth_config is config and built.rerun_on_resume


# -- on a real host, across a restart -----------------------------------------------------


def host_fetch(ctx: Any) -> dict[str, Any]:
    credential = AuthHandler(_api_config()).get_auth_response(ctx.state)
    assert credential is not None
    with open(ctx.state["done_file"], "a") as done:
        done.write("fetch\n")
    return {"key_length": len(credential.api_key or "")}


def host_report(node_input: dict[str, Any], ctx: Any) -> str:
    ctx.state["reported"] = node_input["key_length"]
    return f"key of {node_input['key_length']} characters"


host_app = Workflow(name="keyed", edges=[
    (START, FunctionNode(func=host_fetch, auth_config=_api_config(), rerun_on_resume=True), host_report)])


def test_on_a_host_the_node_waits_across_a_restart_and_the_answer_runs_it_once(
        actor_system: Any, tmp_path: Path) -> None:
    """Turn 1 on a host: the question, and the run ends. The host stops; a new host on
    the same data still shows the question and no output. The answer, the next
    message, runs the node once (its function had not run before) and the node after
    it; the same answer again is refused (answered already)."""
    done = tmp_path / "done.txt"
    done.touch()
    config = HostConfig(apps={"keyed": "test_workflow_node_auth_r21:host_app"}, data_dir=str(tmp_path / "data"),
                        partitions=1)
    interrupt = "wf_auth:keyed@1/host_fetch@1"
    with Host(config, system=actor_system) as host:
        runner = host.runner("keyed")
        runner.create_session("ann", "s1", state={"done_file": str(done)})
        first = list(runner.run("ann", "s1", "go"))
        assert [c.id for e in first for c in e.get_function_calls()] == [interrupt]
        assert first[-1].long_running_tool_ids == (interrupt,)
    with Host(config, system=actor_system) as host:
        runner = host.runner("keyed")
        stored = runner.get_session("ann", "s1").events
        assert [c.name for e in stored for c in e.get_function_calls()] == ["adk_request_credential"]
        assert not [e for e in stored if e.output is not None] and done.read_text() == ""
        [waiting] = waiting_inputs(stored)  # what the CLI, the console and GET .../waiting_inputs show
        assert (waiting.interrupt_id, waiting.message, waiting.path) == (
            interrupt, "This step needs the API key X-Key.", "keyed@1/host_fetch@1")
        question = next(c for e in stored for c in e.get_function_calls())
        answer = dict(question.args["authConfig"])
        answer["exchangedAuthCredential"] = {"authType": "apiKey", "apiKey": "host-secret-key"}
        message = Content(role="user", parts=(Part(function_response=FunctionResponse(
            id=interrupt, name="adk_request_credential", response=answer)),))
        events = list(runner.run("ann", "s1", message))
        assert [(e.node_info.path, e.output) for e in events if e.output is not None] == [
            ("keyed@1/host_fetch@1", {"key_length": 15}), ("keyed@1/host_report@1", "key of 15 characters")]
        assert done.read_text().split() == ["fetch"]
        assert waiting_inputs(runner.get_session("ann", "s1").events) == []
        assert runner.get_state("ann", "s1")["reported"] == 15
        assert "host_key" not in runner.get_state("ann", "s1") and "temp:host_key" not in runner.get_state("ann", "s1")
        with pytest.raises(Exception, match="answered already"):
            list(runner.run("ann", "s1", message))
        assert done.read_text().split() == ["fetch"]


def test_a_node_without_a_question_asked_refuses_an_answer_naming_its_id() -> None:
    """An answer to a credential question the graph never asked is refused before
    anything runs (WorkflowDataError), as an answer to a request for input is."""
    import asyncio

    from adk_actors.runners import InMemoryRunner

    ran: list[str] = []

    def fetch(ctx: Any) -> str:
        ran.append("fetch")
        return "ok"

    app = Workflow(name="keyed", edges=[(START, FunctionNode(func=fetch, auth_config=_api_config(),
                                                             rerun_on_resume=True))])

    async def main() -> None:
        runner = InMemoryRunner(agent=app, app_name="keys")
        session = await runner.session_service.create_session(app_name="keys", user_id="ann")
        message = Content(role="user", parts=(Part(function_response=FunctionResponse(
            id="wf_auth:keyed@1/other@1", name="adk_request_credential", response={"result": "k"})),))
        with pytest.raises((WorkflowDataError, ValueError)):
            async for _ in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
                pass

    asyncio.run(main())
    assert ran == []
