"""google-adk 2.13's tool names built in round 22 of issue 52, side by side with google-adk.

``AuthenticatedFunctionTool`` and a user's ``BaseAuthenticatedTool`` subclass: one
google-adk program run as written on google-adk, then with its imports rewritten on
ours, against one Gemini REST stand-in and a real OAuth2 provider and API on 127.0.0.1
(tests/test_adk56_openapi_user_auth.py's). The tool's ``AuthConfig`` is an OAuth2
authorization code flow: the first turn emits the same ``adk_request_credential`` call
and the same pending answer; the client answers with the redirect the user landed on;
the second turn runs the original call again, the code is exchanged, and the tool is
given the token (compared: every event, the request's arguments, what the tool saw,
the model requests, the provider's requests).
"""

from __future__ import annotations

import uuid
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import calls, request_rows, rewritten, run_program
from test_adk56_credential_request import (
    REQUEST,
    _answer_with,
    _comparable,
    _reset,
    _rows,
    provider,
)
from test_adk56_openapi_user_auth import Provider

from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini
__all__ = ["provider"]  # the OAuth2 provider fixture, shared

AUTHENTICATED = '''
import os

import httpx
from fastapi.openapi.models import OAuth2, OAuthFlowAuthorizationCode, OAuthFlows
from google.adk.agents import Agent
from google.adk.auth import AuthConfig, AuthCredential, AuthCredentialTypes, OAuth2Auth
from google.adk.runners import InMemoryRunner
from google.adk.tools.authenticated_function_tool import AuthenticatedFunctionTool
from google.adk.tools.base_authenticated_tool import BaseAuthenticatedTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

PROVIDER = os.environ["ADK_TEST_OAUTH_PROVIDER_URL"]
SEEN = []
AUTH = AuthConfig(
    auth_scheme=OAuth2(flows=OAuthFlows(authorizationCode=OAuthFlowAuthorizationCode(
        authorizationUrl=PROVIDER + "/authorize", tokenUrl=PROVIDER + "/token", scopes={"read": "read"}))),
    raw_auth_credential=AuthCredential(auth_type=AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth(
        client_id="agent-client", client_secret="client-secret-7f3a9c1e5b",
        redirect_uri="https://agent.example/callback")),
    credential_key="who_api")


def who_am_i(greeting: str, credential: AuthCredential, tool_context: ToolContext) -> dict:
    """Says who the user is.

    Args:
        greeting: how to greet the user.
    """
    SEEN.append((greeting, credential.auth_type.value, credential.oauth2.access_token))
    answer = httpx.get(PROVIDER + "/whoami", headers={"Authorization": "Bearer " + credential.oauth2.access_token})
    return {"greeting": greeting, **answer.json()}


class WhoAmI(BaseAuthenticatedTool):
    def __init__(self):
        super().__init__(name="who_am_i", description="Says who the user is.", auth_config=AUTH,
                         response_for_auth_required={"pending": True, "message": "Sign in first."})

    def _get_declaration(self):
        return types.FunctionDeclaration(
            name=self.name, description=self.description,
            parameters_json_schema={"type": "object", "properties": {"greeting": {"type": "string"}}})

    async def _run_async_impl(self, *, args, tool_context, credential):
        SEEN.append((args["greeting"], credential.auth_type.value, credential.oauth2.access_token))
        async with httpx.AsyncClient() as http:
            answer = await http.get(PROVIDER + "/whoami",
                                    headers={"Authorization": "Bearer " + credential.oauth2.access_token})
        return {"greeting": args["greeting"], **answer.json()}


TOOL = None
root_agent = Agent(name="who", model="gemini-2.5-flash", instruction="Say who the user is.", tools=[TOOL])


async def main(answer):
    runner = InMemoryRunner(agent=root_agent, app_name="auth")
    session = await runner.session_service.create_session(app_name="auth", user_id="ann")
    first, second, asked = [], [], None
    message = types.Content(role="user", parts=[types.Part(text="who am i")])
    async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
        first.append(event)
        asked = next((c for c in event.get_function_calls() if c.name == "adk_request_credential"), asked)
    if asked is not None and answer is not None:
        reply = types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
            name="adk_request_credential", id=asked.id, response=answer(dict(asked.args))))])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=reply):
            second.append(event)
    await runner.close()
    return {"first": first, "second": second, "asked": None if asked is None else dict(asked.args),
            "seen": list(SEEN)}
'''

SCRIPT = [calls(("who_am_i", {"greeting": "hi"})), gemini_response("You are user 1.")]


def _run(source: str, answers: list[StubResponse], server: StubServer, provider: Provider,
         code: str) -> dict[str, Any]:
    _reset(provider)
    _, result = run_program(source, answers, server, _answer_with(provider, "config", code))
    asked = _comparable(result["asked"], {})
    if asked is not None:
        asked["functionCallId"] = "the call's"
    return {"first": _rows(result["first"]), "second": _rows(result["second"]), "asked": asked,
            "seen": result["seen"], "requests": request_rows(server), "unused_answers": len(server.responses),
            "provider": [(r["method"], r["path"], r.get("form", {}).get("grant_type")) for r in provider.requests]}


@pytest.mark.parametrize("tool", ["AuthenticatedFunctionTool(func=who_am_i, auth_config=AUTH)", "WhoAmI()"])
def test_an_authenticated_tool_asks_then_gets_the_credential_as_google_adks(
        tool: str, gemini: StubServer, provider: Provider) -> None:
    source = AUTHENTICATED.replace("TOOL = None", f"TOOL = {tool}")
    code = f"code-{uuid.uuid4().hex[:12]}"
    theirs = _run(source, SCRIPT, gemini, provider, code)
    assert theirs["unused_answers"] == 0, "the case must use its script on google-adk"
    ours = _run(rewritten(source), SCRIPT, gemini, provider, code)
    assert "google" not in rewritten(source)
    # first turn: the call, the long-running request, the pending answer; the turn ends
    pending = {"result": "Pending User Authorization."} if tool.startswith("Auth") \
        else {"pending": True, "message": "Sign in first."}
    assert [(r["calls"] and r["calls"][0][1], r["responses"]) for r in theirs["first"]] == [
        ("who_am_i", []), (REQUEST, []), ([], [("call-0", "who_am_i", pending)])]
    assert theirs["asked"]["authConfig"]["credentialKey"] == "who_api"
    # second turn: the original call again, given the token the code was exchanged for
    assert theirs["second"][0]["responses"] == [("call-0", "who_am_i", {"greeting": "hi", "token_number": 1})]
    assert theirs["seen"] == [("hi", "oauth2", "access-token-0001-xyzzy")]
    assert theirs["provider"] == [("POST", "/token", "authorization_code"), ("GET", "/whoami", None)]
    for key in ("first", "second", "asked", "seen", "requests", "unused_answers", "provider"):
        assert ours[key] == theirs[key], key


def test_the_credential_parameter_is_not_declared_and_none_without_auth() -> None:
    """Without an ``auth_config`` the tool runs unauthenticated, ``credential`` None, on
    both sides; the model is never told of ``credential``."""
    import asyncio

    from google.adk.tools.authenticated_function_tool import AuthenticatedFunctionTool as Theirs

    from adk_actors.tools.authenticated_function_tool import AuthenticatedFunctionTool as Ours

    def lookup(city: str, credential: Any = None) -> dict[str, Any]:
        """Looks a city up."""
        return {"city": city, "credential": credential}

    theirs, ours = Theirs(func=lookup), Ours(func=lookup)
    declared = theirs._get_declaration()
    assert declared is not None
    their_schema = declared.model_dump(exclude_none=True)
    our_schema = ours.declaration()
    assert our_schema is not None and our_schema.name == their_schema["name"] == "lookup"
    assert our_schema.description == their_schema["description"]
    assert list((our_schema.parameters_json_schema or {})["properties"]) == ["city"]
    assert "credential" not in str(their_schema)
    from types import SimpleNamespace

    their_result = asyncio.run(theirs.run_async(args={"city": "Oslo"}, tool_context=SimpleNamespace()))
    our_result = asyncio.run(ours.run_async(args={"city": "Oslo"}, tool_context=None))  # type: ignore[arg-type]
    assert our_result == their_result == {"city": "Oslo", "credential": None}


# -- AgentToolConfig ------------------------------------------------------------------------

AGENT_TOOL_ARGS = [
    "agent:\n  config_path: helper.yaml\n",
    "agent:\n  code: my_library.agents.helper\nskip_summarization: true\ninclude_plugins: false\n",
]
BAD_AGENT_TOOL_ARGS = [
    "agent:\n  config_path: helper.yaml\n  code: my_library.agents.helper\n",  # both
    "agent: {}\n",  # neither
    "agent:\n  config_path: helper.yaml\nsummarize: false\n",  # an unknown key
    "skip_summarization: true\n",  # no agent
]


@pytest.mark.parametrize("text", AGENT_TOOL_ARGS)
def test_agent_tool_config_loads_the_same_yaml(text: str) -> None:
    import yaml
    from google.adk.tools.agent_tool import AgentToolConfig as Theirs
    from google.adk.tools.tool_configs import BaseToolConfig as TheirBase

    from adk_actors.tools.agent_tool import AgentToolConfig as Ours
    from adk_actors.tools.tool_configs import BaseToolConfig as OurBase

    data = yaml.safe_load(text)
    theirs, ours = Theirs.model_validate(data), Ours.model_validate(data)
    assert ours.model_dump() == theirs.model_dump()
    assert isinstance(ours, OurBase) and isinstance(theirs, TheirBase)


@pytest.mark.parametrize("text", BAD_AGENT_TOOL_ARGS)
def test_agent_tool_config_refuses_what_google_adks_refuses(text: str) -> None:
    import yaml
    from google.adk.tools.agent_tool import AgentToolConfig as Theirs
    from pydantic import ValidationError

    from adk_actors.tools.agent_tool import AgentToolConfig as Ours

    data = yaml.safe_load(text)
    with pytest.raises(ValidationError):
        Theirs.model_validate(data)
    with pytest.raises(ValidationError):
        Ours.model_validate(data)


# -- mcp_session_manager ------------------------------------------------------------------------


def test_the_deprecated_mcp_params_names_are_the_connection_params() -> None:
    """google-adk's older names are its connection params; ours are ours, so a toolset
    made with either spelling is made with the one class."""
    from google.adk.tools.mcp_tool import mcp_session_manager as theirs

    from adk_actors.mcp import SseConnectionParams, StreamableHTTPConnectionParams
    from adk_actors.tools.mcp_tool import mcp_session_manager as ours

    assert theirs.SseServerParams is theirs.SseConnectionParams
    assert theirs.StreamableHTTPServerParams is theirs.StreamableHTTPConnectionParams
    assert ours.SseServerParams is SseConnectionParams
    assert ours.StreamableHTTPServerParams is StreamableHTTPConnectionParams
    made = ours.StreamableHTTPServerParams(url="http://127.0.0.1:9/mcp")
    assert (made.timeout, made.sse_read_timeout, made.terminate_on_close) == (5.0, 300.0, True)
    their_made = theirs.StreamableHTTPServerParams(url="http://127.0.0.1:9/mcp")
    assert (their_made.timeout, their_made.sse_read_timeout, their_made.terminate_on_close) == (5.0, 300.0, True)


def _retried(decorator: Any, failures: list[BaseException]) -> Any:
    """A session-like object whose decorated method raises ``failures`` in turn, then
    answers how many calls it took."""

    class Session:
        def __init__(self) -> None:
            self.calls = 0

        @decorator
        async def list_tools(self, prefix: str = "") -> str:
            self.calls += 1
            if failures:
                raise failures.pop(0)
            return f"{prefix}{self.calls}"

    return Session()


def _cancelled_then_other() -> RuntimeError:
    import asyncio

    try:
        try:
            raise asyncio.CancelledError()
        except asyncio.CancelledError:
            raise RuntimeError("the stream closed") from None
    except RuntimeError as error:
        return error


@pytest.mark.parametrize("failures, outcome", [
    ([], ("ok", "tools:1", 1)),
    ([ConnectionError("gone")], ("ok", "tools:2", 2)),
    ([ConnectionError("gone"), ValueError("again")], ("raised", "ValueError", 2)),
    ([_cancelled_then_other()], ("raised", "RuntimeError", 1)),
])
def test_retry_on_errors_retries_once_as_google_adks(failures: list[BaseException], outcome: tuple[Any, ...]) -> None:
    import asyncio

    from google.adk.tools.mcp_tool.mcp_session_manager import retry_on_errors as theirs

    from adk_actors.tools.mcp_tool.mcp_session_manager import retry_on_errors as ours

    async def run(decorator: Any) -> tuple[Any, ...]:
        session = _retried(decorator, list(failures))
        try:
            answer = await session.list_tools(prefix="tools:")
        except Exception as error:
            return "raised", type(error).__name__, session.calls
        return "ok", answer, session.calls

    assert asyncio.run(run(theirs)) == outcome
    assert asyncio.run(run(ours)) == outcome


def test_retry_on_errors_never_retries_while_the_task_is_cancelled() -> None:
    import asyncio

    from google.adk.tools.mcp_tool.mcp_session_manager import retry_on_errors as theirs

    from adk_actors.tools.mcp_tool.mcp_session_manager import retry_on_errors as ours

    class Session:
        def __init__(self) -> None:
            self.calls = 0

        async def list_tools(self) -> int:
            self.calls += 1
            task = asyncio.current_task()
            assert task is not None
            task.cancel()  # the call's task is being cancelled when the error comes
            raise ConnectionError("gone")

    async def run(decorator: Any) -> tuple[str, int]:
        session = Session()
        call = asyncio.create_task(decorator(Session.list_tools)(session))
        await asyncio.wait([call], timeout=10)
        assert call.done()
        return type(call.exception()).__name__, session.calls

    assert asyncio.run(run(theirs)) == asyncio.run(run(ours)) == ("ConnectionError", 1)


# -- openapi_spec_parser and common.common ----------------------------------------------------

#: operations whose parameters, bodies and responses take every branch of the parsers
EXTRA_SPEC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Odd shapes", "version": "1"},
    "servers": [{"url": "https://odd.example/v1"}],
    "components": {"securitySchemes": {"token": {"type": "http", "scheme": "bearer"}}},
    "paths": {
        "/things/{thingId}": {
            "post": {
                "operationId": "updateThing", "summary": "Update a thing", "security": [{"token": []}],
                "parameters": [
                    {"name": "thingId", "in": "path", "schema": {"type": "string"}},  # required though unsaid
                    {"name": "if", "in": "query", "description": "A keyword", "schema": {"type": "boolean"}},
                    {"name": "tags", "in": "query", "schema": {"type": "array", "items": {"type": "integer"}}},
                    {"name": "", "in": "header", "schema": {"type": ["string", "null"]}},  # nameless
                ],
                "requestBody": {"description": "The new thing", "content": {"application/json": {"schema": {
                    "type": "object", "required": ["thingId"],
                    "properties": {"thingId": {"type": "string", "description": "again: deduplicated"},
                                   "details": {"type": "object", "description": "More",
                                               "properties": {"colour": {"type": "string", "description": "Hue"},
                                                              "size": {"type": "number"}}},
                                   "rows": {"type": "array", "items": {"type": "object"}}}}}}},
                "responses": {"default": {"description": "error"},
                              "2XX": {"description": "range", "content": {"text/plain": {"schema": {"type": "string"}}}},
                              "201": {"description": "Made it", "content": {
                                  "text/plain": {"schema": {"type": "string"}},
                                  "application/json": {"schema": {"type": "object", "properties": {
                                      "id": {"type": "string", "description": "Its id"},
                                      "count": {"type": "integer"}}}}}},
                              "200": {"description": "ok, no content"}},
            },
            "put": {
                "operationId": "ReplaceTHINGNow", "description": "Replace it",
                "requestBody": {"content": {"application/json": {"schema": {
                    "oneOf": [{"type": "string"}, {"type": "integer"}]}}}},
                "responses": {"200": {"description": "Replaced", "content": {
                    "application/json": {"schema": {"type": "array", "items": {"type": "string"}}}}}},
            },
            "patch": {
                "requestBody": {"content": {"application/json": {"schema": {"type": "integer"}}}},
                "responses": {"204": {"description": "nothing back"}},
            },
        },
    },
}


def _specs() -> list[dict[str, Any]]:
    from openapi_pets import SPEC

    return [SPEC, EXTRA_SPEC]


def _parameter_row(param: Any) -> tuple[Any, ...]:
    return (param.original_name, str(getattr(param.param_location, "value", param.param_location)), param.py_name,
            param.required, param.description,
            param.param_schema.model_dump(mode="json", by_alias=True, exclude_none=True))


@pytest.mark.parametrize("preserve", [False, True])
@pytest.mark.parametrize("which", [0, 1])
def test_the_spec_parser_gives_google_adks_operations(which: int, preserve: bool) -> None:
    import copy

    from google.adk.tools.openapi_tool.openapi_spec_parser import OpenApiSpecParser as Theirs

    from adk_actors.tools.openapi_tool.openapi_spec_parser import OpenApiSpecParser as Ours

    spec = _specs()[which]
    theirs = Theirs(preserve_property_names=preserve).parse(copy.deepcopy(spec))
    ours = Ours(preserve_property_names=preserve).parse(copy.deepcopy(spec))
    assert len(theirs) >= 3
    assert [o.name for o in ours] == [o.name for o in theirs]
    for mine, their in zip(ours, theirs, strict=True):
        assert mine.description == their.description
        assert mine.endpoint.model_dump() == their.endpoint.model_dump()
        assert mine.operation.model_dump(mode="json", by_alias=True, exclude_none=True) == \
            their.operation.model_dump(mode="json", by_alias=True, exclude_none=True)
        assert [_parameter_row(p) for p in mine.parameters] == [_parameter_row(p) for p in their.parameters]
        their_scheme = their.auth_scheme.model_dump(mode="json", by_alias=True, exclude_none=True) \
            if their.auth_scheme is not None else None
        assert mine.auth_scheme == their_scheme


def _operations() -> list[Any]:
    """Every operation of both specs, resolved (google-adk's parser resolves them)."""
    import copy

    from google.adk.tools.openapi_tool.openapi_spec_parser import OpenApiSpecParser as Theirs

    return [parsed.operation for spec in _specs() for parsed in Theirs().parse(copy.deepcopy(spec))]


def _signature(parser: Any) -> Any:
    """The parser's signature parameters as text, or the error making them raised (a
    name kept as the spec has it, ``X-Request-Id``, is no Python name on either side)."""
    try:
        return [str(p) for p in parser.get_signature_parameters()]
    except ValueError as error:
        return type(error).__name__, str(error)


def test_the_operation_parser_gives_google_adks_function_parts() -> None:
    from google.adk.tools.openapi_tool.openapi_spec_parser.operation_parser import (
        OperationParser as Theirs,
    )

    from adk_actors.tools.openapi_tool.openapi_spec_parser import OperationParser as Ours

    operations = _operations()
    assert len(operations) >= 10
    for operation in operations:
        for given in (operation, operation.model_dump(by_alias=True, exclude_none=True),
                      operation.model_dump_json(by_alias=True, exclude_none=True)):
            for preserve in (False, True):
                their = Theirs(given, preserve_property_names=preserve)
                mine = Ours(given, preserve_property_names=preserve)
                where = (operation.operationId, preserve)
                assert mine.get_function_name() == their.get_function_name(), where
                assert [p.model_dump() for p in mine.get_parameters()] == \
                    [p.model_dump() for p in their.get_parameters()], where
                assert [(p.type_hint, p.type_value, p.required, str(p), p.to_arg_string(), p.to_dict_property(),
                         p.to_pydoc_string()) for p in mine.get_parameters()] == \
                    [(p.type_hint, p.type_value, p.required, str(p), p.to_arg_string(), p.to_dict_property(),
                      p.to_pydoc_string()) for p in their.get_parameters()], where
                assert mine.get_return_value().model_dump() == their.get_return_value().model_dump(), where
                assert mine.get_return_type_hint() == their.get_return_type_hint(), where
                assert mine.get_return_type_value() == their.get_return_type_value(), where
                assert mine.get_auth_scheme_name() == their.get_auth_scheme_name(), where
                assert mine.get_pydoc_string() == their.get_pydoc_string(), where
                assert mine.get_json_schema() == their.get_json_schema(), where
                assert mine.get_annotations() == their.get_annotations(), where
                assert _signature(mine) == _signature(their), where


def test_an_operation_parser_loaded_with_parameters_parses_nothing() -> None:
    from google.adk.tools.openapi_tool.common.common import ApiParameter as TheirParameter
    from google.adk.tools.openapi_tool.openapi_spec_parser import OperationParser as Theirs

    from adk_actors.tools.openapi_tool.common.common import ApiParameter as OurParameter
    from adk_actors.tools.openapi_tool.openapi_spec_parser.operation_parser import (
        OperationParser as Ours,
    )

    operation = {"operationId": "noop", "responses": {}}
    rows = []
    for parser, parameter in ((Theirs, TheirParameter), (Ours, OurParameter)):
        loaded = parser.load(operation, [parameter(original_name="x", param_location="query",
                                                   param_schema='{"type": "integer"}')])
        with pytest.raises(RuntimeError):
            loaded.get_return_value()
        rows.append([(p.py_name, p.type_hint) for p in loaded.get_parameters()])
        assert [p.py_name for p in parser(operation, should_parse=False).get_parameters()] == []
        with pytest.raises(ValueError, match="Operation ID is missing"):
            parser({"responses": {}}).get_function_name()
    assert rows[0] == rows[1] == [("x", "int")]


SCHEMAS: list[Any] = [
    {}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}, {"type": "string"}, {"type": "object"},
    {"type": "array"}, {"type": "array", "items": {"type": "string"}}, {"type": "array", "items": {"type": "object"}},
    {"type": "array", "items": {"type": "array"}}, {"type": "array", "items": {"type": ["integer", "null"]}},
    {"type": ["string", "null"]}, {"type": ["string", "integer"]}, {"type": "null"},
]


def test_type_hints_names_and_docs_are_google_adks() -> None:
    from fastapi.openapi.models import Response, Schema
    from google.adk.tools.openapi_tool.common import common as theirs

    from adk_actors.tools.openapi_tool.common import common as ours

    for raw in SCHEMAS:
        schema = Schema.model_validate(raw)
        assert ours.TypeHintHelper.get_type_hint(schema) == theirs.TypeHintHelper.get_type_hint(schema), raw
        assert ours.TypeHintHelper.get_type_value(schema) == theirs.TypeHintHelper.get_type_value(schema), raw
    for flag in (True, False):
        assert ours.TypeHintHelper.get_type_hint(flag) == theirs.TypeHintHelper.get_type_hint(flag) == "Any"
    for word in ("if", "class", "pets", "None", "match"):
        assert ours.rename_python_keywords(word) == theirs.rename_python_keywords(word)
        assert ours.rename_python_keywords(word, "kw_") == theirs.rename_python_keywords(word, "kw_")
    for name, location in (("petId", "path"), ("", "path"), ("", "query"), ("", "header"), ("", "cookie"),
                           ("", "body"), ("", "elsewhere"), ("for", "query"), ("X-Trace-ID", "header")):
        made = [side.ApiParameter(original_name=name, param_location=location,
                                  param_schema='{"type": "string", "description": "From the schema"}')
                for side in (ours, theirs)]
        assert made[0].model_dump() == made[1].model_dump()
        assert (made[0].py_name, made[0].description) == (made[1].py_name, made[1].description)
    responses: list[dict[str, Any]] = [
        {}, {"default": {"description": "x", "content": {"application/json": {"schema": {"type": "string"}}}}},
        {"200": {"description": "no content"}},
        {"204": {"description": " Listed ", "content": {"text/csv": {"schema": {"type": "array",
                                                                                 "items": {"type": "string"}}}}}},
        {"2XX": {"description": "range", "content": {"application/json": {"schema": {"type": "integer"}}}},
         "202": {"description": "accepted", "content": {"application/json": {"schema": {
             "type": "object", "properties": {"job": {"type": "string", "description": "The job"}}}}}}},
    ]
    for raw_responses in responses:
        given = {status: Response.model_validate(r) for status, r in raw_responses.items()}
        assert ours.PydocHelper.generate_return_doc(given) == theirs.PydocHelper.generate_return_doc(given)


def test_the_parser_package_names_are_google_adks() -> None:
    import typing

    import google.adk.tools.openapi_tool.openapi_spec_parser as theirs

    import adk_actors.tools.openapi_tool.openapi_spec_parser as ours
    from adk_actors.tools.openapi_tool.openapi_spec_parser import tool_auth_handler

    assert sorted(ours.__all__) == sorted(theirs.__all__)
    assert ours.ToolAuthHandler is tool_auth_handler.ToolAuthHandler
    assert typing.get_args(ours.AuthPreparationState) == typing.get_args(theirs.AuthPreparationState)
    assert typing.get_args(ours.UnauthorizedRecoveryState) == typing.get_args(theirs.UnauthorizedRecoveryState)


# -- the authenticated tools on a real host ----------------------------------------------------


@pytest.fixture
def system(provider: Provider, request: pytest.FixtureRequest) -> Any:
    """The actor system, started after the provider's URL is in the environment its run
    workers inherit (the ``provider`` fixture sets it)."""
    return request.getfixturevalue("actor_system")


def test_on_a_host_the_credential_is_asked_once_then_kept(provider: Provider, system: Any, tmp_path: Any) -> None:
    """On a host (tests/adk52_authenticated_agent.py in the run workers): the first call
    asks with ``adk_request_credential`` and answers google-adk's pending text; after
    the user's answer the same call runs again with the token; a later call of the
    other tool, sharing the config, gets the kept credential from the host's credential
    service without asking again and without a new token."""
    import copy

    from adk_actors.runtime import Host, HostConfig
    from adk_actors.types import Content, FunctionResponse, Part

    with Host(HostConfig(apps={"who": "adk52_authenticated_agent:who_agent"}, data_dir=str(tmp_path / "data")),
              system=system) as host:
        runner = host.runner("who")
        runner.create_session("ann", "s1")
        first = list(runner.run("ann", "s1", "call who_am_i"))
        [asked] = [c for e in first for c in e.get_function_calls() if c.name == REQUEST]
        [original] = [c for e in first for c in e.get_function_calls() if c.name == "who_am_i"]
        assert asked.args["functionCallId"] == original.id and provider.requests == []
        assert first[-1].content.function_responses[0].response == {"result": "Pending User Authorization."}

        config = copy.deepcopy(dict(asked.args["authConfig"]))
        oauth2 = config["exchangedAuthCredential"]["oauth2"]
        oauth2["authResponseUri"] = provider.sign_in(oauth2["authUri"], f"code-{uuid.uuid4().hex[:12]}")
        answer = Content(role="user", parts=[Part(function_response=FunctionResponse(
            name=REQUEST, id=asked.id, response=config))])
        second = list(runner.run("ann", "s1", answer))
        rerun = [r for e in second if e.author == "who" for r in e.get_function_responses()]
        assert [(r.id, r.response) for r in rerun] == [(original.id, {"token_number": 1})]

        third = list(runner.run("ann", "s1", "call who_else"))
        assert not [c for e in third for c in e.get_function_calls() if c.name == REQUEST]
        assert third[-1].content.text == 'who_else said: {"again": true, "token_number": 1}'
        assert [(r["method"], r["path"]) for r in provider.requests] == [
            ("POST", "/token"), ("GET", "/whoami"), ("GET", "/whoami")]
