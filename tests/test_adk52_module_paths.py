"""Issue 52: google-adk 2.13 names at google-adk's module paths, side by side with
google-adk where it has the behaviour (planners, example text, tool errors, memory
response, safe artifact parts, load_web_page)."""

from __future__ import annotations

import enum
import importlib
import inspect
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast
from urllib.parse import urlsplit

import pytest
from google.genai import types as gtypes
from pydantic import BaseModel

from adk_actors import Agent, types
from adk_actors._types import LlmRequest

#: google-adk passes its contexts here; neither planner reads them
NO_CONTEXT: Any = None

NAMES = [
    ("planners", "BasePlanner"), ("planners", "BuiltInPlanner"), ("planners", "PlanReActPlanner"),
    ("planners.base_planner", "BasePlanner"), ("planners.built_in_planner", "BuiltInPlanner"),
    ("planners.plan_re_act_planner", "PlanReActPlanner"),
    ("examples.example_util", "build_example_si"), ("examples.example_util", "convert_examples_to_text"),
    ("errors.tool_execution_error", "ToolExecutionError"), ("errors.tool_execution_error", "ToolErrorType"),
    ("tools.load_memory_tool", "LoadMemoryResponse"), ("tools.load_artifacts_tool", "as_safe_part_for_llm"),
    ("tools.set_model_response_tool", "SetModelResponseTool"), ("tools.load_web_page", "load_web_page"),
]


def parameters(obj: Any) -> list[tuple[str, Any, bool]]:
    """(name, kind, has a default) of each parameter: what a caller can pass."""
    return [(p.name, p.kind, p.default is not inspect.Parameter.empty) for p in inspect.signature(obj).parameters.values()]


@pytest.mark.parametrize(("module", "name"), NAMES)
def test_the_name_is_at_google_adks_path_with_its_parameters(module: str, name: str) -> None:
    ours = getattr(importlib.import_module(f"adk_actors.{module}"), name)
    theirs = getattr(importlib.import_module(f"google.adk.{module}"), name)
    assert callable(ours)
    if not (inspect.isclass(theirs) and issubclass(theirs, enum.Enum | BaseModel)):  # fields are checked below
        assert parameters(ours) == parameters(theirs)


def test_the_planners_package_reexports_its_submodules_classes() -> None:
    from adk_actors import planners
    from adk_actors.planners import base_planner, built_in_planner, plan_re_act_planner

    assert planners.BasePlanner is base_planner.BasePlanner
    assert planners.BuiltInPlanner is built_in_planner.BuiltInPlanner
    assert planners.PlanReActPlanner is plan_re_act_planner.PlanReActPlanner
    assert issubclass(planners.PlanReActPlanner, planners.BasePlanner)


def test_a_planner_without_its_two_steps_cannot_be_made_as_in_google_adk() -> None:
    from google.adk.planners import BasePlanner as TheirBase

    from adk_actors.planners import BasePlanner

    for base in (BasePlanner, TheirBase):
        with pytest.raises(TypeError):
            base()  # type: ignore[abstract]

        class OnlyOne(base):  # type: ignore[valid-type, misc]
            def build_planning_instruction(self, readonly_context: Any, llm_request: Any) -> str:
                return "plan"

        with pytest.raises(TypeError):
            OnlyOne()


def test_built_in_planner_adds_no_instruction_and_keeps_the_answer_and_sets_thinking() -> None:
    from google.adk.models.llm_request import LlmRequest as TheirRequest
    from google.adk.planners import BuiltInPlanner as TheirPlanner

    from adk_actors.planners import BuiltInPlanner

    config = gtypes.ThinkingConfig(include_thoughts=True, thinking_budget=128)
    ours, theirs = BuiltInPlanner(thinking_config=config), TheirPlanner(thinking_config=config)
    parts = [gtypes.Part(text="hi")]
    assert ours.build_planning_instruction(NO_CONTEXT, LlmRequest()) is theirs.build_planning_instruction(
        NO_CONTEXT, TheirRequest())
    assert ours.process_planning_response(NO_CONTEXT, []) is None
    assert theirs.process_planning_response(NO_CONTEXT, parts) is None

    request = LlmRequest(config={"thinking_config": {"thinking_budget": 1}, "temperature": 0.5})
    their_request = TheirRequest(config=gtypes.GenerateContentConfig(
        thinking_config=gtypes.ThinkingConfig(thinking_budget=1), temperature=0.5))
    ours.apply_thinking_config(request)
    theirs.apply_thinking_config(their_request)
    assert their_request.config.thinking_config is not None
    assert dict(request.config) == {"temperature": 0.5, "thinking_config": their_request.config.thinking_config.model_dump(
        exclude_none=True)}
    assert Agent(name="a", planner=ours).generate_config == {"thinking_config": {"include_thoughts": True,
                                                                                   "thinking_budget": 128}}
    with pytest.raises(TypeError):
        BuiltInPlanner()  # type: ignore[call-arg]  # google-adk's needs the config too


def test_plan_re_act_instruction_asks_for_google_adks_tags() -> None:
    from google.adk.models.llm_request import LlmRequest as TheirRequest
    from google.adk.planners import PlanReActPlanner as TheirPlanner

    from adk_actors.planners import PlanReActPlanner

    tags = ["/*PLANNING*/", "/*REPLANNING*/", "/*REASONING*/", "/*ACTION*/", "/*FINAL_ANSWER*/"]
    ours = PlanReActPlanner().build_planning_instruction(NO_CONTEXT, LlmRequest())
    theirs = TheirPlanner().build_planning_instruction(NO_CONTEXT, TheirRequest())
    assert [tag in ours for tag in tags] == [tag in theirs for tag in tags] == [True] * 5


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"function_call": {"name": name, "args": args}}


ANSWERS: list[list[dict[str, Any]]] = [
    [],
    [{"text": "/*PLANNING*/ 1. look it up /*ACTION*/"}, call("search", q="x"), call("fetch"),
     {"text": "after the calls"}, call("late")],
    [{"text": "/*REASONING*/ found it /*FINAL_ANSWER*/ 42"}],
    [{"text": "no tags at all"}, {"text": "ends with /*FINAL_ANSWER*/"}, {"text": "/*FINAL_ANSWER*/only answer"}],
    [call(""), {"text": "middle /*PLANNING*/ not leading"}, call("named"), call("")],
    [{"text": "a /*FINAL_ANSWER*/ b /*FINAL_ANSWER*/ c"}, {"inline_data": {"data": b"x", "mime_type": "image/png"}}],
]


def shown(parts: list[Any] | None) -> list[tuple[Any, ...]] | None:
    if parts is None:
        return None
    return [(p.text, bool(p.thought), p.function_call.name if p.function_call else None,
             dict(p.function_call.args or {}) if p.function_call else None, p.inline_data is not None) for p in parts]


@pytest.mark.parametrize("answer", ANSWERS)
def test_plan_re_act_processing_gives_google_adks_parts(answer: list[dict[str, Any]]) -> None:
    from google.adk.planners import PlanReActPlanner as TheirPlanner

    from adk_actors._types import Part
    from adk_actors.planners import PlanReActPlanner

    ours = PlanReActPlanner().process_planning_response(NO_CONTEXT, [Part.model_validate(p) for p in answer])
    theirs = TheirPlanner().process_planning_response(NO_CONTEXT, [gtypes.Part.model_validate(p) for p in answer])
    assert shown(ours) == shown(theirs)


def example_pairs() -> tuple[list[Any], list[Any]]:
    from google.adk.examples.example import Example as TheirExample

    from adk_actors.examples import Example

    contents = [(gtypes.UserContent("What is the weather in Paris?"), [
        gtypes.ModelContent([gtypes.Part(text="Let me check."),
                             gtypes.Part(function_call=gtypes.FunctionCall(name="weather", args={"city": "Paris", "days": 2}))]),
        gtypes.UserContent("and tomorrow?"), gtypes.ModelContent("Sunny both days.")]),
        (gtypes.Content(role="user", parts=[gtypes.Part(text="one"), gtypes.Part(text="two")]), [])]
    return ([Example(input=cast(Any, i), output=cast(Any, o)) for i, o in contents], [TheirExample(input=i, output=o) for i, o in contents])


@pytest.mark.parametrize("model", [None, "gemini-2.5-flash", "google.gemini-2.0", "gpt-4o"])
def test_build_example_si_gives_google_adks_text(model: str | None) -> None:
    from google.adk.examples import BaseExampleProvider as TheirProvider
    from google.adk.examples import example_util as theirs

    from adk_actors.examples import BaseExampleProvider
    from adk_actors.examples import example_util as ours

    mine, their = example_pairs()
    text = theirs.build_example_si(their, "q", model)
    assert ours.build_example_si(mine, "q", model) == text
    assert ours.convert_examples_to_text(mine, model) == theirs.convert_examples_to_text(their, model)
    asked: list[str] = []

    class Mine(BaseExampleProvider):
        def get_examples(self, query: str) -> list[Any]:
            asked.append(query)
            return mine[:1] if query == "weather" else mine

    class Their(TheirProvider):
        def get_examples(self, query: str) -> list[Any]:
            return their[:1] if query == "weather" else their

    assert ours.build_example_si(Mine(), "weather", model) == theirs.build_example_si(Their(), "weather", model)
    assert asked == ["weather"]
    with pytest.raises(ValueError, match="Invalid example configuration"):
        ours.build_example_si("not examples", "q", model)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Invalid example configuration"):
        theirs.build_example_si("not examples", "q", model)  # type: ignore[arg-type]


@pytest.mark.parametrize("error_type", ["REQUEST_TIMEOUT", "500", None, "enum"])
def test_tool_execution_error_keeps_message_and_type_as_google_adks(error_type: str | None) -> None:
    from google.adk.errors import tool_execution_error as theirs

    from adk_actors.errors import tool_execution_error as ours

    assert [(t.name, t.value) for t in ours.ToolErrorType] == [(t.name, t.value) for t in theirs.ToolErrorType]
    mine = ours.ToolErrorType.BAD_GATEWAY if error_type == "enum" else error_type
    their = theirs.ToolErrorType.BAD_GATEWAY if error_type == "enum" else error_type
    a, b = ours.ToolExecutionError("it broke", mine), theirs.ToolExecutionError("it broke", their)
    assert (a.message, a.error_type, str(a), a.args) == (b.message, b.error_type, str(b), b.args)
    assert ours.ToolErrorType("NOT_FOUND") == "NOT_FOUND"
    assert str(ours.ToolErrorType.NOT_FOUND) == str(theirs.ToolErrorType.NOT_FOUND)


def test_load_memory_response_has_google_adks_shape() -> None:
    from google.adk.memory.memory_entry import MemoryEntry as TheirEntry
    from google.adk.tools.load_memory_tool import LoadMemoryResponse as TheirResponse

    from adk_actors.memory.memory_entry import MemoryEntry
    from adk_actors.tools.load_memory_tool import LoadMemoryResponse

    assert LoadMemoryResponse().model_dump() == TheirResponse().model_dump() == {"memories": []}
    fields: dict[str, Any] = {"author": "user", "id": "e1", "timestamp": "2026-01-01T00:00:00+00:00", "custom_metadata": {"k": 1}}
    mine = LoadMemoryResponse(memories=[MemoryEntry(content=types.UserContent("I like tea"), **fields)])
    theirs = TheirResponse(memories=[TheirEntry(content=gtypes.UserContent("I like tea"), **fields)])
    assert mine.model_dump(mode="json", exclude_none=True) == theirs.model_dump(mode="json", exclude_none=True)
    assert mine.memories[0].content.parts[0].text == "I like tea"


@pytest.mark.parametrize(("data", "mime", "name"), [
    (b"\x89PNG", "image/png", "pic.png"), (b"a,b\n1,2", "text/csv", "t.csv"), (b'{"a": 1}', "application/json", "x"),
    (b"plain", "application/octet-stream", "notes.txt"), (b"caf\xc3\xa9", "text/plain; charset=utf-8", "c")])
def test_as_safe_part_for_llm_passes_media_and_turns_text_files_into_text(data: bytes, mime: str, name: str) -> None:
    from google.adk.tools.load_artifacts_tool import as_safe_part_for_llm as theirs

    from adk_actors.tools.load_artifacts_tool import as_safe_part_for_llm

    part = gtypes.Part.from_bytes(data=data, mime_type=mime)
    mine, their = as_safe_part_for_llm(part, name), theirs(part, name)
    assert mine.text == their.text
    assert (mine.inline_data is None) == (their.inline_data is None)
    if their.inline_data is not None:
        assert mine.inline_data is not None and mine.inline_data.data == their.inline_data.data
    plain = types.Part(text="just text")
    assert as_safe_part_for_llm(plain, "n") is plain


def test_an_unknown_binary_artifact_becomes_a_line_naming_it() -> None:
    from adk_actors.tools.load_artifacts_tool import as_safe_part_for_llm

    line = as_safe_part_for_llm(types.Part(inline_data=types.Blob(data=b"\0" * 2048, mime_type="application/zip")),
                                "a.zip").text
    assert line is not None and "a.zip" in line and "application/zip" in line and "2.0 KB" in line


def test_set_model_response_tool_is_the_class_the_flow_uses() -> None:
    from adk_actors.engine import _flow_request
    from adk_actors.tools.set_model_response_tool import SetModelResponseTool

    assert getattr(_flow_request, "SetModelResponseTool") is SetModelResponseTool  # noqa: B009
    assert SetModelResponseTool.__module__ == "adk_actors.tools._set_model_response"
    assert SetModelResponseTool(output_schema={"type": "object"}).name == "set_model_response"


PAGE = b"""<!DOCTYPE html><html><head><title>A page about the quiet sea</title>
<style>body { color: red; and more words here }</style>
<script>var a = "this script has many words in it";</script></head>
<body><h1>Short title</h1><!-- a comment with many words in it -->
<p>The first paragraph has &amp; several words in it.</p>
<div>Two words<br/>then a line that is long enough</div>
<p>Multi line text that spans
across two lines of the source file</p><ul><li>one two three</li><li>one two three four</li></ul>
<template><p>a template with many words inside</p></template>
</body></html>"""


LATIN_TEXT = "Crème brûlée à la façon du café"
LATIN_1_PAGES = {
    "/latin1": ('<html><head><meta charset="iso-8859-1"></head><body><p>' + LATIN_TEXT
                + "</p></body></html>").encode("latin-1"),
    "/latin1-http-equiv": ('<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1252">'
                           "</head><body><p>" + LATIN_TEXT + "</p></body></html>").encode("cp1252"),
}


class _Pages(BaseHTTPRequestHandler):
    """The site, also as an HTTP proxy in front of it (a request's target in absolute form)."""

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == "/page":
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)
        elif path in LATIN_1_PAGES:
            body = LATIN_1_PAGES[path]
            self.send_response(200)
            self.send_header("Content-Type", "text/html")  # no charset: the page's <meta> names it
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/page")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def site(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The pages' site as a model would name it, reached through an HTTP proxy on
    127.0.0.1 (the environment names it, as httpx reads it): loopback itself is refused."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{server.server_address[1]}")
    try:
        yield "http://pages.example.test"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


EXPECTED_TEXT = ("A page about the quiet sea\nThe first paragraph has & several words in it.\n"
                 "then a line that is long enough\nMulti line text that spans\n"
                 "across two lines of the source file\none two three four")


def test_load_web_page_returns_the_pages_text_lines_of_more_than_three_words(site: str) -> None:
    from adk_actors.tools.load_web_page import load_web_page

    assert load_web_page(f"{site}/page") == EXPECTED_TEXT


@pytest.mark.parametrize("path", ["/page", *sorted(LATIN_1_PAGES)])
def test_load_web_page_gives_google_adks_text_for_the_same_page(site: str, path: str) -> None:
    from google.adk.tools import load_web_page as theirs

    from adk_actors.tools.load_web_page import load_web_page

    assert load_web_page(f"{site}{path}") == theirs.load_web_page(f"{site}{path}")  # both through the proxy


@pytest.mark.parametrize("path", sorted(LATIN_1_PAGES))
def test_load_web_page_reads_a_page_in_the_charset_its_meta_names(site: str, path: str) -> None:
    from adk_actors.tools.load_web_page import load_web_page

    assert load_web_page(f"{site}{path}") == LATIN_TEXT


@pytest.mark.parametrize("path", ["/moved", "/missing"])
def test_load_web_page_says_it_failed_on_a_redirect_or_an_error_status(site: str, path: str) -> None:
    from google.adk.tools.load_web_page import _failed_to_fetch_message

    from adk_actors.tools.load_web_page import load_web_page

    url = f"{site}{path}"
    assert load_web_page(url) == _failed_to_fetch_message(url) == f"Failed to fetch url: {url}"


def test_load_web_page_says_it_failed_when_nothing_listens(monkeypatch: pytest.MonkeyPatch) -> None:
    from adk_actors.tools.load_web_page import load_web_page

    closed = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{closed.server_address[1]}")
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{closed.server_address[1]}")
    closed.server_close()
    url = "http://pages.example.test/page"
    assert load_web_page(url) == f"Failed to fetch url: {url}"
    assert load_web_page("not a url") == "Failed to fetch url: not a url"


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:{port}/page", "http://localhost:{port}/page", "http://[::1]:{port}/page",
    "http://10.1.2.3/page", "http://169.254.169.254/computeMetadata/v1/", "http://metadata.google.internal/",
    "http://printer.local/", "http://[::ffff:127.0.0.1]:{port}/page", "http://[64:ff9b::a01:203]/page",
    "http://loopback.example.test/page",
])
def test_load_web_page_refuses_what_a_model_must_not_reach_from_the_host(
        url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Loopback (a page really served there), private and metadata addresses, internal
    names, IPv6 forms carrying such an IPv4 address, a name resolving to loopback: each
    "Failed to fetch", the page never asked for, directly or through a proxy."""
    from adk_actors.tools.load_web_page import load_web_page

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    asked: list[str] = []
    server.RequestHandlerClass = type("_Recorded", (_Pages,), {
        "do_GET": lambda self: (asked.append(self.path), _Pages.do_GET(self))})
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    real_lookup = socket.getaddrinfo
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, *args, **kwargs: real_lookup(
        "127.0.0.1" if host == "loopback.example.test" else host, *args, **kwargs))
    try:
        target = url.format(port=server.server_address[1])
        for proxy in ("", f"http://127.0.0.1:{server.server_address[1]}"):
            for name in ("HTTP_PROXY", "http_proxy"):
                monkeypatch.setenv(name, proxy)
            assert load_web_page(target) == f"Failed to fetch url: {target}"
        assert asked == []
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
