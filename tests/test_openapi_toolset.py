"""OpenAPIToolset and RestApiTool, side by side with google-adk 2.13's (issue 56).

A real pet store (``http.server`` on 127.0.0.1, a free port, a thread) serves an
OpenAPI 3 API with path, query, header, cookie and body parameters, an API key on most
operations, a 404 for a missing pet and a 500 that echoes the caller's key back (as
careless servers do). Both toolsets are built from the same spec and compared:

* the tools' names and function declarations, as JSON, for the spec given as a dict,
  as JSON text and as YAML text, with ``preserve_property_names``, with a prefix and a
  filter;
* each call's result and the request the server received (method, path, query,
  headers, cookies, body; only the User-Agent differs by design), for good calls,
  bad path arguments, missing arguments, a 404, a 500, a text answer, and each auth
  shape (API key in a header and in the query, bearer token, basic, google-adk's own
  credential objects), a client factory with default headers, and a private target
  refused by default;
* ours alone: a multipart body (google-adk's fails on it), and a checked target called
  at the address that was checked;
* then ours alone, in an agent run (InMemoryRunner, ScriptedModel): the model's calls
  reach the server, the server's answers come back in the function-response events
  and to the model, a server error comes back as google-adk's error, no secret is in
  any event, error text or log line, and a scheme without a credential ends the turn
  with an auth request;
* on a host (the agent imported by path in a run worker, tests/openapi_agents.py): the
  first call asks for the key, the key stored in the credential service is then used,
  and no secret is in the stored session or the logs;
* a spec that cannot be read is an OpenApiSpecError (a ValueError, as google-adk's
  errors are) naming the place, at build time.
"""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import httpx
import pytest
import yaml
from openapi_pets import API_KEY, TOKEN, spec_at
from pydantic import SecretStr

from adk_actors import Content, LlmAgent, Part
from adk_actors.models import ScriptedModel, call
from adk_actors.runners import InMemoryRunner
from adk_actors.runtime import Host, HostConfig
from adk_actors.runtime._service_calls import Credential
from adk_actors.tools.openapi_tool import OpenApiSpecError, OpenAPIToolset, RestApiTool, _network
from adk_actors.tools.openapi_tool.auth import (
    AuthCredential,
    AuthCredentialTypes,
    HttpAuth,
    HttpCredentials,
)
from adk_actors.tools.openapi_tool.auth.auth_helpers import token_to_scheme_credential
from adk_actors.tools.openapi_tool.openapi_spec_parser.openapi_toolset import (
    OpenAPIToolset as ByAdkPath,
)
from adk_actors.tools.openapi_tool.openapi_spec_parser.rest_api_tool import (
    RestApiTool as ToolByAdkPath,
)

pytest.importorskip("google.adk")

from google.adk.auth.auth_credential import (
    AuthCredential as TheirCredential,  # dev dependency, checked above
)
from google.adk.auth.auth_credential import AuthCredentialTypes as TheirTypes
from google.adk.auth.auth_credential import HttpAuth as TheirHttpAuth
from google.adk.auth.auth_credential import HttpCredentials as TheirHttpCredentials
from google.adk.tools.openapi_tool import OpenAPIToolset as TheirToolset
from google.adk.tools.openapi_tool.auth.auth_helpers import (
    token_to_scheme_credential as their_token_helper,
)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

# -- the pet store --------------------------------------------------------------------------


class PetStore:
    """A real HTTP pet store on 127.0.0.1. Every request is recorded as the server
    read it; most routes need ``X-Api-Key``, ``Authorization: Bearer`` or basic auth."""

    def __init__(self) -> None:
        self.pets: dict[int, dict[str, Any]] = {1: {"id": 1, "name": "Rex", "tag": "dog"},
                                                 2: {"id": 2, "name": "Tom", "tag": "cat"}}
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        store = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def handle_one(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                split = urlsplit(self.path)
                seen = {"method": self.command, "path": split.path, "query": parse_qs(split.query),
                        "headers": {k.lower(): v for k, v in self.headers.items()
                                    if k.lower() not in ("host", "accept", "accept-encoding", "connection",
                                                         "user-agent")},
                        "body": raw.decode(), "host": self.headers.get("Host")}
                with store.lock:
                    store.requests.append(seen)
                    status, answer = store.answer(self.command, unquote(split.path), parse_qs(split.query),
                                                  {k.lower(): v for k, v in self.headers.items()}, raw)
                body = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/plain" if isinstance(answer, bytes) else "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = handle_one

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, method: str, path: str, query: dict[str, list[str]], headers: dict[str, str],
               raw: bytes) -> tuple[int, Any]:
        authorized = headers.get("x-api-key") == API_KEY or query.get("api_key") == [API_KEY] or \
            headers.get("authorization") in (f"Bearer {TOKEN}", "Basic " + base64.b64encode(b"ann:pw").decode())
        parts = path.split("/")[2:]  # /api/<parts>
        if parts == ["boom"]:
            return 500, {"message": f"database on fire (key {headers.get('x-api-key')})"}
        if method == "DELETE" and len(parts) == 2:
            return (204, b"") if self.pets.pop(int(parts[1]), None) else (404, {"detail": "no such pet"})
        if not authorized:
            return 401, {"detail": "who are you?"}
        if parts == ["pets"] and method == "GET":
            limit = int(query.get("limit", ["20"])[0])
            return 200, {"pets": list(self.pets.values())[:limit], "class": query.get("class", [None])[0],
                         "request_id": headers.get("x-request-id"), "cookie": headers.get("cookie")}
        if parts == ["pets"] and method == "POST":
            pet = {**json.loads(raw), "id": max(self.pets) + 1}
            self.pets[pet["id"]] = pet
            return 201, pet
        if len(parts) == 2 and parts[1].isdigit() and method == "GET":
            pet = self.pets.get(int(parts[1]))
            return (200, pet) if pet else (404, {"detail": f"no pet {parts[1]}"})
        if len(parts) == 2 and method == "PUT":
            pet = self.pets[int(parts[1])]
            pet["tags"] = json.loads(raw)
            return 200, pet
        if len(parts) == 3 and parts[2] == "note" and method == "POST":
            return 200, f"noted: {raw.decode()}".encode()
        if len(parts) == 3 and parts[2] == "photo" and method == "POST":
            return 200, {"content_type": headers.get("content-type"), "body": raw.decode()}
        return 404, {"detail": f"no route {method} {path}"}

    def spec(self) -> dict[str, Any]:
        return spec_at(self.url)


@pytest.fixture
def store() -> Iterator[PetStore]:
    server = PetStore()
    server.thread.start()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()
        server.thread.join(5)


def _their_declaration(tool: Any) -> str:
    declared = tool._get_declaration().model_dump(mode="json", exclude_none=True)
    declared["parameters"] = declared.pop("parameters_json_schema")
    return json.dumps(declared, sort_keys=True)


def _our_declaration(tool: Any) -> str:
    return json.dumps(tool.declaration().model_dump(mode="json", exclude_none=True), sort_keys=True)


def _run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


# -- declarations ---------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["dict", "json", "yaml", "preserved names"])
def test_names_and_declarations_are_google_adks(store: PetStore, form: str) -> None:
    spec = store.spec()
    given: dict[str, Any] = {
        "dict": {"spec_dict": spec},
        "preserved names": {"spec_dict": spec, "preserve_property_names": True},
        "json": {"spec_str": json.dumps(spec), "spec_str_type": "json"},
        "yaml": {"spec_str": yaml.safe_dump(spec, sort_keys=False), "spec_str_type": "yaml"},
    }[form]

    async def both() -> tuple[list[Any], list[Any]]:
        return await TheirToolset(**given).get_tools(), await OpenAPIToolset(**given).get_tools()

    theirs, ours = _run(both())
    assert [t.name for t in ours] == [t.name for t in theirs] == [
        "list_pets", "create_pet", "show_pet_by_id", "pets_pet_id_put", "delete_pet",
        "a_very_long_operation_identifier_that_is_cut_at_sixty_chars", "a_very_long_operation_identifier_that_is_cut_at_sixty_char_2",
        "upload_photo", "break_things"]
    for their, our in zip(theirs, ours, strict=True):
        assert _our_declaration(our) == _their_declaration(their), our.name
    declared = json.loads(_our_declaration(ours[0]))["parameters"]
    assert sorted(declared["properties"]) == (["X-Request-Id", "limit", "param_class", "session"]
                                              if form == "preserved names" else
                                              ["limit", "param_class", "session", "x_request_id"])
    body = json.loads(_our_declaration(ours[1]))["parameters"]
    assert body["required"] == ["name"] and body["properties"]["tag"]["type"] == "string"
    assert body["properties"]["owner"]["properties"]["first_name"] == {"type": "string"}


def test_prefix_filter_and_google_adks_import_paths(store: PetStore) -> None:
    assert ByAdkPath is OpenAPIToolset and ToolByAdkPath is RestApiTool

    async def both() -> tuple[list[Any], list[Any]]:
        kept = ["list_pets", "create_pet"]
        theirs = TheirToolset(spec_dict=store.spec(), tool_filter=kept, tool_name_prefix="store")
        ours = ByAdkPath(spec_dict=store.spec(), tool_filter=kept, tool_name_prefix="store")
        return await theirs.get_tools_with_prefix(), await ours.get_tools_with_prefix()

    theirs, ours = _run(both())
    assert [t.name for t in ours] == [t.name for t in theirs] == ["store_list_pets", "store_create_pet"]
    assert [_our_declaration(t) for t in ours] == [_their_declaration(t) for t in theirs]
    assert OpenAPIToolset(spec_dict=store.spec()).get_tool("show_pet_by_id") is not None


# -- calls ----------------------------------------------------------------------------------

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("list_pets", {"limit": 1, "param_class": "mammal", "x_request_id": 7, "session": True}),
    ("list_pets", {"limit": None}),  # None left out of the query
    ("create_pet", {"name": "Nemo", "tag": "cat", "owner": {"first_name": "Ann", "age": 9}}),
    ("show_pet_by_id", {"pet_id": 2}),
    ("show_pet_by_id", {"pet_id": 404}),  # the server's 404
    ("show_pet_by_id", {"pet_id": "1/../../admin"}),  # a dot-segment: refused before sending
    ("show_pet_by_id", {"pet_id": "a/b?c#d"}),  # reserved characters: percent-encoded
    ("show_pet_by_id", {}),  # a missing path argument
    ("pets_pet_id_put", {"pet_id": 1, "array": ["good", "old"]}),
    ("a_very_long_operation_identifier_that_is_cut_at_sixty_chars", {"pet_id": 1, "body": "likes fish"}),
    ("break_things", {}),  # the server's 500
    ("delete_pet", {"pet_id": "2", "ignored": "not a parameter"}),
]


def _results_and_requests(toolset: Any, store: PetStore) -> list[tuple[Any, list[dict[str, Any]]]]:
    async def go() -> list[tuple[Any, list[dict[str, Any]]]]:
        tools = {tool.name: tool for tool in await toolset.get_tools()}
        seen = []
        for name, args in CALLS:
            store.requests.clear()
            result = await tools[name].run_async(args=dict(args), tool_context=None)
            seen.append((result, list(store.requests)))
        return seen

    return list(_run(go()))


def test_calls_send_and_answer_what_google_adks_do(store: PetStore) -> None:
    scheme, credential = their_token_helper("apikey", "header", "X-Api-Key", API_KEY)
    theirs = _results_and_requests(TheirToolset(spec_dict=store.spec(), auth_scheme=scheme, auth_credential=credential,
                                                allow_private_network_access=True), store)
    store.pets = {1: {"id": 1, "name": "Rex", "tag": "dog"}, 2: {"id": 2, "name": "Tom", "tag": "cat"}}
    ours = _results_and_requests(OpenAPIToolset(spec_dict=store.spec(), auth_scheme=scheme,
                                                auth_credential=credential, allow_private_network_access=True),
                                 store)
    for (name, args), (their_result, their_requests), (our_result, our_requests) in zip(
            CALLS, theirs, ours, strict=True):
        # the 500 echoes the key: ours blanks it out of the error, google-adk's does not
        assert our_result == json.loads(json.dumps(their_result).replace(API_KEY, "***")), (name, args)
        assert our_requests == their_requests, (name, args)
    results = [result for result, _ in ours]
    assert results[0]["pets"] == [{"id": 1, "name": "Rex", "tag": "dog"}] and results[0]["class"] == "mammal"
    assert results[0]["request_id"] == "7" and results[0]["cookie"] == "session=true"
    assert ours[1][1][0]["query"] == {}
    assert results[2] == {"id": 3, "name": "Nemo", "tag": "cat", "owner": {"first_name": "Ann", "age": 9}}
    assert results[3] == {"id": 2, "name": "Tom", "tag": "cat"}
    assert results[4]["error"].endswith('Status Code: 404, {"detail": "no pet 404"}')
    assert "must not contain current-directory or parent-directory segments" in results[5]["error"]
    assert ours[5][1] == [] and ours[7][1] == []  # refused before anything was sent
    assert ours[6][1][0]["path"] == "/api/pets/a%2Fb%3Fc%23d"
    assert "Missing required path parameter 'pet_id'" in results[7]["error"]
    assert results[8]["tags"] == ["good", "old"]
    assert results[9] == {"text": "noted: likes fish"}
    assert results[10] == {"error": "Tool break_things execution failed. Analyze this execution error and your "
                                    "inputs. Retry with adjustments if applicable. But make sure don't retry more "
                                    "than 3 times. Execution Error: Status Code: 500, "
                                    '{"message": "database on fire (key ***)"}'}
    assert API_KEY not in json.dumps(results)
    # a toolset's auth scheme is every tool's, as google-adk's: also the one whose spec says security: []
    assert ours[11][1][0]["headers"].get("x-api-key") == API_KEY


def test_a_multipart_body_sends_files_and_fields(store: PetStore) -> None:
    """Ours only: google-adk hands the arguments to httpx's ``files`` as they are, which
    fails on any value that is not a file (AttributeError); ours sends the ``binary``
    property as a file part and the others as fields."""
    toolset = OpenAPIToolset(spec_dict=store.spec(), auth_credential={"auth_type": "apiKey", "api_key": API_KEY},
                             allow_private_network_access=True)
    result, requests = _one_call(toolset, "upload_photo", {"pet_id": 1, "file": "PNG-bytes", "caption": "Rex, asleep",
                                                           "meta": {"w": 2}}, store)
    assert result["content_type"].startswith("multipart/form-data; boundary=")
    body = result["body"]
    assert 'name="file"; filename="file"' in body and "PNG-bytes" in body
    assert 'name="caption"\r\n\r\nRex, asleep' in body and 'name="meta"\r\n\r\n{"w": 2}' in body
    assert requests[0]["path"] == "/api/pets/1/photo"


def test_a_client_factory_is_used_as_google_adks(store: PetStore) -> None:
    def factory() -> httpx.AsyncClient:
        return httpx.AsyncClient(headers={"X-Through": "factory"}, timeout=10)

    def both(cls: Any) -> tuple[Any, list[dict[str, Any]]]:
        toolset = cls(spec_dict=store.spec(), auth_credential=TheirCredential(auth_type=TheirTypes.API_KEY,
                                                                               api_key=API_KEY),
                      httpx_client_factory=factory, allow_private_network_access=True)
        toolset.get_tool("list_pets").set_default_headers({"X-Default": "d", "X-Request-Id": "default"})
        return _one_call(toolset, "list_pets", {"x_request_id": "given"}, store)

    their_result, their_requests = both(TheirToolset)
    our_result, our_requests = both(OpenAPIToolset)
    assert our_result == their_result and our_requests == their_requests
    assert our_requests[0]["headers"]["x-through"] == "factory" and our_requests[0]["headers"]["x-default"] == "d"
    assert our_requests[0]["headers"]["x-request-id"] == "given"  # an argument wins over a default header


def _one_call(toolset: Any, name: str, args: dict[str, Any], store: PetStore) -> tuple[Any, list[dict[str, Any]]]:
    async def go() -> Any:
        store.requests.clear()
        return await toolset.get_tool(name).run_async(args=args, tool_context=None)

    return _run(go()), list(store.requests)


@pytest.mark.parametrize("shape", ["api key in the query", "bearer token", "basic", "google-adk's objects",
                                   "scheme as a dict"])
def test_auth_shapes_as_google_adks(store: PetStore, shape: str) -> None:
    spec = store.spec()
    del spec["security"]  # the scheme comes from the toolset here
    if shape == "api key in the query":
        theirs_given = their_token_helper("apikey", "query", "api_key", API_KEY)
        ours_given: tuple[Any, Any] = token_to_scheme_credential("apikey", "query", "api_key", API_KEY)
    elif shape == "bearer token":
        theirs_given = their_token_helper("oauth2Token", "header", "Authorization", TOKEN)
        ours_given = token_to_scheme_credential("oauth2Token", "header", "Authorization", TOKEN)
    elif shape == "basic":
        their_basic = TheirCredential(auth_type=TheirTypes.HTTP, http=TheirHttpAuth(
            scheme="basic", credentials=TheirHttpCredentials(username="ann", password="pw")))
        theirs_given = ({"type": "http", "scheme": "basic"}, their_basic)
        ours_given = ({"type": "http", "scheme": "basic"}, AuthCredential(
            auth_type=AuthCredentialTypes.HTTP, http=HttpAuth(scheme="basic", credentials=HttpCredentials(
                username="ann", password="pw"))))
    elif shape == "google-adk's objects":  # google-adk's own scheme and credential, given to ours
        theirs_given = their_token_helper("oauth2Token", "header", "Authorization", TOKEN)
        ours_given = theirs_given
    else:
        theirs_given = ({"type": "apiKey", "in": "header", "name": "X-Api-Key"},
                        TheirCredential(auth_type=TheirTypes.API_KEY, api_key=API_KEY))
        ours_given = ({"type": "apiKey", "in": "header", "name": "X-Api-Key"},
                      {"auth_type": "apiKey", "api_key": API_KEY})
    their_result, their_requests = _one_call(TheirToolset(
        spec_dict=spec, auth_scheme=theirs_given[0], auth_credential=theirs_given[1],
        allow_private_network_access=True), "show_pet_by_id", {"pet_id": 1}, store)
    our_result, our_requests = _one_call(OpenAPIToolset(
        spec_dict=spec, auth_scheme=ours_given[0], auth_credential=ours_given[1],
        allow_private_network_access=True), "show_pet_by_id", {"pet_id": 1}, store)
    assert our_result == their_result == {"id": 1, "name": "Rex", "tag": "dog"}
    assert our_requests == their_requests


def test_a_credential_without_a_scheme_sends_nothing_as_google_adks(store: PetStore) -> None:
    """google-adk applies a credential only under a scheme: the spec here names none."""
    spec = store.spec()
    del spec["security"]
    credential = {"auth_type": "apiKey", "api_key": API_KEY}
    their_result, their_requests = _one_call(TheirToolset(
        spec_dict=spec, auth_credential=TheirCredential.model_validate(credential),
        allow_private_network_access=True), "show_pet_by_id", {"pet_id": 1}, store)
    our_result, our_requests = _one_call(OpenAPIToolset(
        spec_dict=spec, auth_credential=credential, allow_private_network_access=True),
        "show_pet_by_id", {"pet_id": 1}, store)
    assert our_result == their_result and "Status Code: 401" in our_result["error"]
    assert our_requests == their_requests and "x-api-key" not in our_requests[0]["headers"]


def test_private_targets_are_refused_by_default_as_google_adks(store: PetStore) -> None:
    scheme, credential = their_token_helper("apikey", "header", "X-Api-Key", API_KEY)
    their_result, their_requests = _one_call(TheirToolset(spec_dict=store.spec(), auth_scheme=scheme,
                                                          auth_credential=credential),
                                             "show_pet_by_id", {"pet_id": 1}, store)
    our_result, our_requests = _one_call(OpenAPIToolset(spec_dict=store.spec(), auth_scheme=scheme,
                                                        auth_credential=credential),
                                         "show_pet_by_id", {"pet_id": 1}, store)
    assert our_result == their_result
    assert our_result["error"].endswith("Execution Error: Blocked host: 127.0.0.1")
    assert our_requests == their_requests == []
    for url in ("http://localhost:1/", "http://metadata.google.internal/", "http://[::ffff:10.0.0.1]/",
                "http://169.254.169.254/", "file:///etc/passwd"):
        spec = store.spec()
        spec["servers"] = [{"url": url}]
        result, _ = _one_call(OpenAPIToolset(spec_dict=spec), "delete_pet", {"pet_id": "1"}, store)
        assert "Execution Error: " in result["error"] and ("Blocked host" in result["error"]
                                                           or "Unsupported url scheme" in result["error"]), url


def test_a_checked_target_is_called_at_the_address_that_was_checked(store: PetStore,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ``allow_private_network_access`` a name is resolved and checked once, and
    the request goes to that address with the name in its Host header (so a second
    lookup cannot move it). The store's loopback address stands in for a public one."""
    resolved: list[str] = []

    def resolve(host: str) -> tuple[Any, ...]:
        resolved.append(host)
        return (ipaddress.ip_address("127.0.0.1"),)

    monkeypatch.setattr(_network, "_addresses", resolve)
    monkeypatch.setattr(_network, "not_public", lambda address: str(address) != "127.0.0.1")
    spec = store.spec()
    port = store.server.server_address[1]
    spec["servers"] = [{"url": f"http://pets.example:{port}/api"}]
    toolset = OpenAPIToolset(spec_dict=spec, auth_credential={"auth_type": "apiKey", "api_key": API_KEY})
    result, requests = _one_call(toolset, "show_pet_by_id", {"pet_id": 2}, store)
    assert result == {"id": 2, "name": "Tom", "tag": "cat"}
    assert resolved == ["pets.example"] and requests[0]["host"] == f"pets.example:{port}"


# -- in an agent run ------------------------------------------------------------------------


def _answer_after_tools(request: Any) -> Any:
    """The scripted model's last turn: what the tools said, as JSON."""
    responses = request.contents[-1].function_responses
    return "tools said: " + json.dumps([r.response for r in responses], sort_keys=True)


def _agent_run(toolset: Any, script: list[Any]) -> tuple[list[Any], ScriptedModel]:
    model = ScriptedModel(script, fallback=_answer_after_tools)
    agent = LlmAgent(name="pets", model=model, instruction="Help with pets.", tools=[toolset])

    async def go() -> list[Any]:
        runner = InMemoryRunner(agent=agent, app_name="pets")
        try:
            session = await runner.session_service.create_session(app_name="pets", user_id="ann")
            return [event async for event in runner.run_async(
                user_id="ann", session_id=session.id,
                new_message=Content(role="user", parts=[Part(text="Show me pet 2, then add Nemo.")]))]
        finally:
            await runner.close()

    return _run(go()), model


def test_an_agent_run_calls_the_server_and_gets_its_answers(store: PetStore, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    toolset = OpenAPIToolset(spec_str=yaml.safe_dump(store.spec(), sort_keys=False), spec_str_type="yaml",
                             auth_credential=AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key=API_KEY),
                             header_provider=lambda context: {"X-Invocation": context.invocation_id},
                             allow_private_network_access=True)
    events, model = _agent_run(toolset, [
        call("show_pet_by_id", pet_id=2),
        call("create_pet", name="Nemo", tag="cat"),
        call("break_things"),
    ])
    declared = {tool.name for tool in model.requests[0].tools}
    assert {"list_pets", "create_pet", "show_pet_by_id", "break_things"} <= declared
    responses = [part.function_response for event in events for part in (event.content.parts if event.content else [])
                 if part.function_response is not None]
    assert [r.name for r in responses] == ["show_pet_by_id", "create_pet", "break_things"]
    assert responses[0].response == {"id": 2, "name": "Tom", "tag": "cat"}  # the server's own answer
    assert responses[1].response == {"id": 3, "name": "Nemo", "tag": "cat"}
    assert store.pets[3] == {"id": 3, "name": "Nemo", "tag": "cat"}  # the server really changed
    assert [(r["method"], r["path"], r["headers"].get("x-api-key")) for r in store.requests] == [
        ("GET", "/api/pets/2", API_KEY), ("POST", "/api/pets", API_KEY), ("GET", "/api/boom", API_KEY)]
    assert {r["headers"]["x-invocation"] for r in store.requests} == {events[0].invocation_id}  # header_provider
    # the server error goes back to the model as google-adk's error, the echoed key blanked out
    assert responses[2].response == {"error": "Tool break_things execution failed. Analyze this execution error and "
                                              "your inputs. Retry with adjustments if applicable. But make sure "
                                              "don't retry more than 3 times. Execution Error: Status Code: 500, "
                                              '{"message": "database on fire (key ***)"}'}
    assert model.requests[3].contents[-1].function_responses[0].response == responses[2].response
    assert events[-1].content.parts[0].text.startswith("tools said: ")
    everything = json.dumps([event.model_dump(mode="json") for event in events]) + caplog.text + repr(toolset) + \
        repr(toolset.get_tool("list_pets")) + repr(toolset.get_tool("list_pets").auth_credential)
    assert API_KEY not in everything


def test_a_scheme_without_a_credential_asks_for_one(store: PetStore) -> None:
    """The tool does not call: it answers google-adk's pending result, and the turn ends
    with an auth request naming the scheme."""
    events, _ = _agent_run(OpenAPIToolset(spec_dict=store.spec(), allow_private_network_access=True,
                                          credential_key="pet_store"),
                           [call("show_pet_by_id", pet_id=1)])
    responses = [part.function_response for event in events for part in (event.content.parts if event.content else [])
                 if part.function_response is not None]
    assert [r.response for r in responses] == [{"pending": True, "message": "Needs your authorization to access "
                                                                            "your data."}]
    config = adk_request_credential(events)  # the turn ends asking for the credential (google-adk's call)
    assert config["credentialKey"] == "pet_store"
    assert config["authScheme"] == {"type": "apiKey", "in": "header", "name": "X-Api-Key"}
    assert store.requests == []


def adk_request_credential(events: list[Any]) -> dict[str, Any]:
    """The ``authConfig`` of the one ``adk_request_credential`` call the turn ended with."""
    [asked] = [c for e in events for c in e.get_function_calls() if c.name == "adk_request_credential"]
    assert asked.id in next(e for e in events if asked in e.get_function_calls()).long_running_tool_ids
    assert not any(e.content is not None and e.content.text for e in events[-2:])  # no answer after it
    return dict(asked.args["authConfig"])


# -- bad specs ------------------------------------------------------------------------------

BAD_SPECS: list[tuple[dict[str, Any], str]] = [
    ({"spec_str": '{"openapi": "3.0.0", "paths": {', "spec_str_type": "json"}, "not valid JSON: Expecting"),
    ({"spec_str": "openapi: 3.0.0\npaths: [unclosed", "spec_str_type": "yaml"}, "not valid YAML"),
    ({"spec_str": "[1, 2]"}, "must be an object, not list"),
    ({"spec_str": "{}", "spec_str_type": "toml"}, "spec_str_type is 'json' or 'yaml', not 'toml'"),
    ({"spec_dict": {"swagger": "2.0", "paths": {"/pets": {"post": {"parameters": [
        {"name": "pet", "in": "body", "schema": {"type": "object"}}], "responses": {}}}}}},
     "Swagger 2.0 spec is not OpenAPI 3"),
    ({"spec_dict": {"openapi": "3.0.0", "paths": {"/pets": {"post": {"parameters": [
        {"name": "pet", "in": "body", "schema": {"type": "object"}}], "responses": {}}}}}},
     "paths./pets.post: parameters.0"),
    ({"spec_dict": {"openapi": "3.0.0", "paths": {"/pets": {"get": {"parameters": [
        {"$ref": "other.yaml#/components/parameters/Limit"}], "responses": {}}}}}},
     "external references are not supported: other.yaml#/components/parameters/Limit"),
    ({"spec_dict": {"openapi": "3.0.0", "paths": {"/pets": {"get": {"parameters": [
        {"name": "q", "in": "query", "schema": False}], "responses": {}}}}}},
     "paths./pets.get: parameters.0.Parameter.schema"),
    ({"spec_dict": {"openapi": "3.0.0", "paths": {"/pets": {"post": {"requestBody": {"content": {
        "application/json": {"schema": {"type": "object", "properties": {"x": False}}}}}, "responses": {}}}}}},
     "paths./pets.post: request body property 'x' has the schema false"),
]


@pytest.mark.parametrize(("given", "words"), BAD_SPECS, ids=[w.split(":")[0][:30] for _, w in BAD_SPECS])
def test_a_bad_spec_is_a_typed_error_at_build(given: dict[str, Any], words: str) -> None:
    with pytest.raises(OpenApiSpecError) as raised:
        OpenAPIToolset(**given)
    assert words in str(raised.value)
    assert isinstance(raised.value, ValueError)  # as google-adk's errors for the same specs
    if "spec_str_type" not in given or given["spec_str_type"] in ("json", "yaml"):
        with pytest.raises((ValueError, TypeError, yaml.YAMLError)):
            TheirToolset(**given)


def test_no_spec_at_all_is_a_typed_error() -> None:
    with pytest.raises(OpenApiSpecError, match="needs spec_dict or spec_str"):
        OpenAPIToolset()


# -- on a host: the agent by import path in a run worker, the key from the credential service --


@pytest.fixture
def pets_host(store: PetStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
              request: pytest.FixtureRequest) -> Iterator[Host]:
    """A host serving ``openapi_agents:pets_agent``; its actor system is started after
    the store's URL is in the environment its run workers inherit."""
    monkeypatch.setenv("ADK_TEST_PETSTORE_URL", store.url)
    system = request.getfixturevalue("actor_system")
    with Host(HostConfig(apps={"pets": "openapi_agents:pets_agent"}, data_dir=str(tmp_path / "data")),
              system=system) as running:
        yield running


def test_on_a_host_the_key_comes_from_the_credential_service(pets_host: Host, store: PetStore,
                                                             tmp_path: Path) -> None:
    runner = pets_host.runner("pets")
    runner.create_session("ann", "s1")
    first = list(runner.run("ann", "s1", 'call show_pet_by_id {"pet_id": 1}'))
    config = adk_request_credential(first)  # no key yet: the user is asked
    assert config["credentialKey"] == "pet_store"
    assert store.requests == []
    runner.put_credential("ann", "pet_store", Credential(kind="api_key", api_key=SecretStr(API_KEY)))
    second = list(runner.run("ann", "s1", 'call show_pet_by_id {"pet_id": 1}'))
    assert second[-1].content.text == 'show_pet_by_id said: {"id": 1, "name": "Rex", "tag": "dog"}'
    assert [(r["path"], r["headers"].get("x-api-key")) for r in store.requests] == [("/api/pets/1", API_KEY)]
    third = list(runner.run("ann", "s1", "call break_things"))  # the 500 echoes the key back
    assert third[-1].content.text.endswith('Status Code: 500, {\\"message\\": \\"database on fire (key ***)\\"}"}')
    everything = "".join(event.to_json() for event in runner.get_session("ann", "s1").events)
    logs = "".join(path.read_text(errors="replace") for path in tmp_path.rglob("*.log"))
    assert API_KEY not in everything and API_KEY not in logs
