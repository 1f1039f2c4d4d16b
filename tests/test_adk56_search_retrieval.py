"""Vertex AI Search and the retrieval tools, side by side with google-adk 2.13 (issue 56).

Each case is a small google-adk program, run on google-adk as written and on ours with
its imports rewritten (``google.adk`` -> ``adk_actors``, tests/google_adk_harness.py),
against ONE Gemini REST stand-in on 127.0.0.1 named by google-genai's environment
variables: as Vertex AI (a project, a location and a service account's key whose
token endpoint is the stand-in too: ours fetches a token first, google-genai posts to
a custom base URL without one), or as the Gemini API.

Compared: each model request's Gemini tool entries (``retrieval`` with
``vertex_ai_search`` / ``vertex_rag_store``, as google-genai sends them), the
declared functions (their parameter descriptions left out: their words differ by
rule) and contents; the events (the harness's rows); and the errors of bad arguments,
of a model that is not Gemini's and of the Gemini API (which takes no retrieval).

``LlamaIndexRetrieval`` runs on a stand-in retriever (llama_index is not installed):
the same declaration, call and answer on both sides. What needs Google Cloud or
llama_index (Discovery Engine's search, Vertex AI RAG's API on a model that is not
Gemini's, ``FilesRetrieval``) is a typed error here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import google_adk_harness as harness
import pytest
from google_adk_harness import _contents, event_rows, rewritten, run_program

from adk_actors.errors import ServiceUnavailableError
from adk_actors.testing import StubResponse, StubServer, gemini_response

pytest.importorskip("google.adk")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

stand_in, gemini = harness.stand_in, harness.gemini

DATA_STORE = "projects/p/locations/global/collections/default_collection/dataStores/manuals"
ENGINE = "projects/p/locations/global/collections/default_collection/engines/support"
CORPUS = "projects/p/locations/us-central1/ragCorpora/42"


@pytest.fixture
def vertex(gemini: StubServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> StubServer:
    """The stand-in as Vertex AI, by google-genai's variables (as in
    test_google_adk_models): application default credentials from a service account's
    key made for the test, whose token endpoint is the stand-in."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    credentials = tmp_path / "adc.json"
    credentials.write_text(json.dumps({"type": "service_account", "project_id": "p", "private_key_id": "k1",
                                       "private_key": key, "client_email": "agent@p.iam.gserviceaccount.com",
                                       "client_id": "1", "token_uri": gemini.url + "/token"}))
    monkeypatch.delenv("GOOGLE_API_KEY")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(credentials))
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "p")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", gemini.url)
    return gemini


TOKEN = StubResponse(json={"access_token": "ya29.test", "expires_in": 3600, "token_type": "Bearer"})


def _declaration(declared: dict[str, Any]) -> dict[str, Any]:
    """A declared function without its parameters' descriptions (our words differ)."""
    schema = json.loads(json.dumps(declared.get("parameters_json_schema") or declared.get("parametersJsonSchema")
                                   or declared.get("parameters") or {}))
    for prop in (schema.get("properties") or {}).values():
        prop.pop("description", None)
    return {"name": declared["name"], "description": declared.get("description"), "schema": schema}


def requests(server: StubServer) -> list[dict[str, Any]]:
    """The model requests (a token request left out): contents, Gemini's own tool
    entries in order, the declared functions."""
    out = []
    for request in server.requests:
        if request.path == "/token":
            continue
        tools = request.body.get("tools", [])
        out.append({"contents": _contents(request.body["contents"]),
                    "builtin": [t for t in tools if "functionDeclarations" not in t],
                    "functions": [_declaration(d) for t in tools for d in t.get("functionDeclarations", [])]})
    return out


def both(source: str, answers: list[StubResponse], server: StubServer, *, token: bool) -> dict[str, Any]:
    """``main(["..."])`` of ``source`` on google-adk, then on ours (a token answer first
    when ``token``): the same requests and events, each side using its whole script.
    google-adk's requests and events."""
    _, events = run_program(source, answers, server, ["Where is the reset button?"])
    theirs = {"requests": requests(server), "events": event_rows(events), "unused": len(server.responses)}
    _, events = run_program(rewritten(source), [*([TOKEN] if token else []), *answers], server,
                            ["Where is the reset button?"])
    ours = {"requests": requests(server), "events": event_rows(events), "unused": len(server.responses)}
    assert theirs["unused"] == 0, "the case must use its script on google-adk"
    assert ours == theirs
    return theirs


def raised(source: str, server: StubServer) -> tuple[BaseException, BaseException]:
    """What ``main(["hi"])`` raises on google-adk, and on ours."""
    found = []
    for program in (source, rewritten(source)):
        with pytest.raises(Exception) as info:  # which one: compared by the caller
            run_program(program, [gemini_response("unused")], server, ["hi"])
        found.append(info.value)
    return found[0], found[1]


RUN = '''
async def main(turns):
    runner = InMemoryRunner(agent=root_agent, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="ann",
                                                          state={"team": "support"})
    seen = []
    for text in turns:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(user_id="ann", session_id=session.id, new_message=message):
            seen.append(event)
    await runner.close()
    return seen
'''

HEAD = '''
from google.adk.agents import Agent
from google.adk.runners import InMemoryRunner
from google.genai import types
'''

# -- VertexAiSearchTool ----------------------------------------------------------------------

SEARCH = HEAD + '''
from google.adk.tools import VertexAiSearchTool

root_agent = Agent(name="helper", model="gemini-2.5-flash", instruction="Answer from the manuals.",
                   tools=[VertexAiSearchTool({settings})])
''' + RUN

GROUNDED = StubResponse(json={"candidates": [{
    "content": {"role": "model", "parts": [{"text": "Hold it for five seconds."}]}, "finishReason": "STOP",
    "index": 0, "groundingMetadata": {
        "retrievalQueries": ["reset button"],
        "groundingChunks": [{"retrievedContext": {"uri": "gs://manuals/router.pdf", "title": "Router manual",
                                                  "text": "Hold reset for five seconds."}}]}}],
    "modelVersion": "gemini-test", "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 5,
                                                     "totalTokenCount": 14}})


@pytest.mark.parametrize(("settings", "entry"), [
    (f"data_store_id={DATA_STORE!r}", {"datastore": DATA_STORE}),
    (f"data_store_id={DATA_STORE!r}, filter='lang: ANY(\"en\")', max_results=4",
     {"datastore": DATA_STORE, "filter": 'lang: ANY("en")', "max_results": 4}),
    (f"search_engine_id={ENGINE!r}, data_store_specs=[types.VertexAISearchDataStoreSpec("
     f"data_store={DATA_STORE!r}, filter='year > 2020')]",
     {"engine": ENGINE, "data_store_specs": [{"data_store": DATA_STORE, "filter": "year > 2020"}]}),
])
def test_vertex_ai_search_is_the_same_retrieval_entry_on_vertex_ai(vertex: StubServer, settings: str,
                                                                    entry: dict[str, Any]) -> None:
    theirs = both(SEARCH.replace("{settings}", settings), [GROUNDED], vertex, token=True)
    assert theirs["requests"][0]["builtin"] == [{"retrieval": {"vertex_ai_search": entry}}]
    assert theirs["requests"][0]["functions"] == []  # not declared as a function
    assert theirs["events"][0]["text"] == "Hold it for five seconds." and theirs["events"][0]["final"]


STATE_FILTER = HEAD + '''
from google.adk.tools import VertexAiSearchTool


class TeamSearch(VertexAiSearchTool):
    def _build_vertex_ai_search_config(self, ctx):
        return types.VertexAISearch(datastore=self.data_store_id, filter="team = " + ctx.state["team"],
                                    max_results=2)


root_agent = Agent(name="helper", model="gemini-2.5-flash", instruction="Answer from the manuals.",
                   tools=[TeamSearch(data_store_id="''' + DATA_STORE + '''")])
''' + RUN


def test_a_subclass_builds_the_search_settings_from_the_sessions_state(vertex: StubServer) -> None:
    theirs = both(STATE_FILTER, [GROUNDED], vertex, token=True)
    assert theirs["requests"][0]["builtin"] == [{"retrieval": {"vertex_ai_search": {
        "datastore": DATA_STORE, "filter": "team = support", "max_results": 2}}}]


def test_vertex_ai_search_on_the_gemini_api_is_refused_before_sending_by_both(gemini: StubServer) -> None:
    """google-genai refuses ``retrieval`` in the Gemini API's mode; ours in the same
    place, the model call (``ModelRaised`` naming the InvalidRequestError)."""
    theirs, ours = raised(SEARCH.replace("{settings}", f"data_store_id={DATA_STORE!r}"), gemini)
    assert isinstance(theirs, ValueError) and "retrieval" in str(theirs)
    assert type(ours).__name__ == "ModelRaised" and ours.error_type == "InvalidRequestError"  # type: ignore[attr-defined]
    assert "Vertex AI" in str(ours)
    assert not gemini.requests


@pytest.mark.parametrize("arguments", [
    {},
    {"data_store_id": DATA_STORE, "search_engine_id": ENGINE},
    {"data_store_id": DATA_STORE, "data_store_specs": [{"data_store": DATA_STORE}]},
])
def test_bad_arguments_are_a_value_error_on_both_sides(arguments: dict[str, Any]) -> None:
    from google.adk.tools import VertexAiSearchTool as Theirs

    from adk_actors.tools import VertexAiSearchTool as Ours

    for tool in (Theirs, Ours):
        with pytest.raises(ValueError, match="search_engine_id"):
            tool(**arguments)


NOT_GEMINI = HEAD + '''
from google.adk.tools.vertex_ai_search_tool import VertexAiSearchTool


class ElsewhereSearch(VertexAiSearchTool):
    async def process_llm_request(self, *, tool_context, llm_request):
        llm_request.model = "claude-sonnet-4"
        await super().process_llm_request(tool_context=tool_context, llm_request=llm_request)


root_agent = Agent(name="helper", model="gemini-2.5-flash", instruction="Search.",
                   tools=[ElsewhereSearch(data_store_id="''' + DATA_STORE + '''")])
''' + RUN


def test_a_model_that_is_not_geminis_is_refused_the_search_by_both(gemini: StubServer) -> None:
    theirs, ours = raised(NOT_GEMINI, gemini)
    assert isinstance(theirs, ValueError) and isinstance(ours, ValueError)
    for error in (theirs, ours):
        assert "claude-sonnet-4" in str(error)
    assert not gemini.requests


WITH_SUB_AGENT = HEAD + '''
from google.adk.tools import VertexAiSearchTool

helper = Agent(name="billing", model="gemini-2.5-flash", instruction="Bills.")
root_agent = Agent(name="helper", model="gemini-2.5-flash", instruction="Search.", sub_agents=[helper],
                   tools=[VertexAiSearchTool(data_store_id="''' + DATA_STORE + '''")])
''' + RUN


def test_the_search_next_to_sub_agents_on_gemini_2_is_refused_by_both(gemini: StubServer) -> None:
    theirs, ours = raised(WITH_SUB_AGENT, gemini)
    assert isinstance(theirs, ValueError) and isinstance(ours, ValueError)
    for error in (theirs, ours):
        assert "bypass_multi_tools_limit" in str(error)
    assert not gemini.requests


def test_bypass_multi_tools_limit_needs_discovery_engine_which_is_refused_here(gemini: StubServer) -> None:
    """In an agent with other tools google-adk swaps in DiscoveryEngineSearchTool
    (google-cloud-discoveryengine, not installed: an ImportError there); ours says
    that it needs Google Cloud's Discovery Engine (ServiceUnavailableError)."""
    source = HEAD + '''
from google.adk.tools import VertexAiSearchTool


def get_time() -> str:
    """The time."""
    return "noon"


root_agent = Agent(name="helper", model="gemini-2.5-flash", instruction="Search.",
                   tools=[VertexAiSearchTool(data_store_id="''' + DATA_STORE + '''",
                                             bypass_multi_tools_limit=True), get_time])
''' + RUN
    theirs, ours = raised(source, gemini)
    assert isinstance(theirs, ImportError) and "discoveryengine" in str(theirs)
    assert isinstance(ours, ServiceUnavailableError) and isinstance(ours, NotImplementedError)
    assert "Discovery Engine" in str(ours)
    assert not gemini.requests


def test_search_result_mode_and_the_discovery_engine_tool_are_at_google_adks_paths() -> None:
    """google-adk's module needs google-cloud-discoveryengine to import (not installed:
    its enum's members are those of its source, CHUNKS and DOCUMENTS)."""
    from adk_actors.tools import DiscoveryEngineSearchTool, SearchResultMode
    from adk_actors.tools.discovery_engine_search_tool import SearchResultMode as SameMode

    assert SameMode is SearchResultMode
    assert [(m.name, m.value) for m in SearchResultMode] == [("CHUNKS", "CHUNKS"), ("DOCUMENTS", "DOCUMENTS")]
    with pytest.raises(ServiceUnavailableError, match="Discovery Engine"):
        DiscoveryEngineSearchTool(data_store_id=DATA_STORE, search_result_mode=SearchResultMode.DOCUMENTS)


# -- retrieval ---------------------------------------------------------------------------------

SHELF = '''
class Node:
    def __init__(self, text):
        self.text = text


class Shelf:
    """A stand-in for a llama_index retriever: the pages naming the query, best first."""

    def __init__(self, pages):
        self.pages = pages
        self.asked = []

    def retrieve(self, query):
        self.asked.append(query)
        return [Node(page) for page in self.pages if query.lower() in page.lower()]


shelf = Shelf(["The reset button is behind the router.", "Reset clears the settings."])
'''

LLAMA = HEAD + SHELF + '''
from google.adk.tools.retrieval import LlamaIndexRetrieval

root_agent = Agent(name="helper", model="gemini-2.5-flash", instruction="Look things up.",
                   tools=[LlamaIndexRetrieval(name="manuals", description="Searches the router manuals.",
                                              retriever=shelf)])
''' + RUN


def test_llama_index_retrieval_is_declared_called_and_answers_as_on_google_adk(gemini: StubServer) -> None:
    answers = [harness.calls(("manuals", {"query": "reset"})), gemini_response("Behind the router.")]
    theirs = both(LLAMA, answers, gemini, token=False)
    first, second = theirs["requests"]
    assert first["functions"] == [{"name": "manuals", "description": "Searches the router manuals.",
                                   "schema": {"type": "object", "properties": {"query": {"type": "string"}}}}]
    assert first["builtin"] == []
    answered = second["contents"][-1]["parts"][0]["functionResponse"]
    assert answered == {"name": "manuals", "response": {"result": "The reset button is behind the router."}}
    assert theirs["events"][-1]["text"] == "Behind the router."


def test_llama_index_retrieval_that_finds_nothing_says_so_naming_the_query() -> None:
    """The same retriever on both sides: found, the first node's text; nothing found,
    a sentence naming the query (in each side's words)."""
    import asyncio

    from google.adk.tools.retrieval import LlamaIndexRetrieval as Theirs

    from adk_actors.tools.retrieval import LlamaIndexRetrieval as Ours

    namespace: dict[str, Any] = {}
    exec(SHELF, namespace)
    answers = []
    for tool_class in (Theirs, Ours):
        tool = tool_class(name="manuals", description="Manuals.", retriever=namespace["shelf"])
        answers.append([asyncio.run(tool.run_async(args={"query": q}, tool_context=None))  # type: ignore[arg-type]
                        for q in ("settings", "warranty")])
    theirs, ours = answers
    assert ours[0] == theirs[0] == "Reset clears the settings."
    assert "warranty" in theirs[1] and "warranty" in ours[1]
    assert namespace["shelf"].asked == ["settings", "warranty"] * 2


RAG = HEAD + '''
from google.adk.tools.retrieval import VertexAiRagRetrieval

root_agent = Agent(name="helper", model="gemini-2.5-flash", instruction="Answer from the corpus.",
                   tools=[VertexAiRagRetrieval(name="manuals", description="The manuals corpus.", {settings})])
''' + RUN


@pytest.mark.parametrize(("settings", "store"), [
    (f"rag_corpora=[{CORPUS!r}], similarity_top_k=3, vector_distance_threshold=0.4",
     {"rag_corpora": [CORPUS], "similarity_top_k": 3, "vector_distance_threshold": 0.4}),
    (f"rag_resources=[types.VertexRagStoreRagResource(rag_corpus={CORPUS!r}, rag_file_ids=['f1', 'f2']), "
     f"{{'rag_corpus': {CORPUS!r}}}]",
     {"rag_resources": [{"rag_corpus": CORPUS, "rag_file_ids": ["f1", "f2"]}, {"rag_corpus": CORPUS}]}),
])
def test_vertex_ai_rag_retrieval_on_gemini_is_the_same_retrieval_entry(vertex: StubServer, settings: str,
                                                                        store: dict[str, Any]) -> None:
    theirs = both(RAG.replace("{settings}", settings), [GROUNDED], vertex, token=True)
    assert theirs["requests"][0]["builtin"] == [{"retrieval": {"vertex_rag_store": store}}]
    assert theirs["requests"][0]["functions"] == []  # Gemini retrieves: no function declared


def test_vertex_ai_rag_retrieval_refuses_a_resource_that_names_no_corpus_as_google_adk_does() -> None:
    from google.adk.tools.retrieval import VertexAiRagRetrieval as Theirs

    from adk_actors.tools.retrieval import VertexAiRagRetrieval as Ours

    for tool_class in (Theirs, Ours):
        with pytest.raises(TypeError, match="rag_corpus"):
            tool_class(name="manuals", description="d", rag_resources=[42])


def test_vertex_ai_rag_retrieval_on_a_model_that_is_not_geminis_needs_google_cloud() -> None:
    """google-adk declares it and calls Vertex AI RAG's API when the model calls it;
    this project has no such client: the request is refused before the model call."""
    import asyncio

    from adk_actors._types import FunctionDeclaration, LlmRequest
    from adk_actors.tools.retrieval import VertexAiRagRetrieval

    tool = VertexAiRagRetrieval(name="manuals", description="d", rag_corpora=[CORPUS])
    request = LlmRequest(model="claude-sonnet-4", tools=[tool.declaration()])
    assert isinstance(request.tools[0], FunctionDeclaration)
    with pytest.raises(ServiceUnavailableError, match="Vertex AI RAG"):
        asyncio.run(tool.process_llm_request(tool_context=None, llm_request=request))  # type: ignore[arg-type]
    with pytest.raises(ServiceUnavailableError, match="Gemini model"):
        asyncio.run(tool.run_async(args={"query": "reset"}, tool_context=None))  # type: ignore[arg-type]


def test_files_retrieval_without_llama_index_is_an_import_error_naming_the_package(tmp_path: Path) -> None:
    from adk_actors.tools.retrieval import FilesRetrieval

    with pytest.raises(ImportError, match="llama-index-core"):
        FilesRetrieval(name="docs", description="The docs.", input_dir=str(tmp_path))


def test_the_retrieval_names_are_at_google_adks_paths() -> None:
    import importlib

    for module, names in {
        "tools.retrieval": ("BaseRetrievalTool", "FilesRetrieval", "LlamaIndexRetrieval", "VertexAiRagRetrieval"),
        "tools.retrieval.base_retrieval_tool": ("BaseRetrievalTool",),
        "tools.retrieval.llama_index_retrieval": ("LlamaIndexRetrieval",),
        "tools.retrieval.files_retrieval": ("FilesRetrieval",),
        "tools.retrieval.vertex_ai_rag_retrieval": ("RagResourceLike", "VertexAiRagRetrieval"),
        "tools.vertex_ai_search_tool": ("VertexAiSearchTool",),
        "tools": ("VertexAiSearchTool", "SearchResultMode", "DiscoveryEngineSearchTool"),
    }.items():
        ours = importlib.import_module(f"adk_actors.{module}")
        for name in names:
            assert getattr(ours, name) is not None, f"adk_actors.{module}.{name}"


ENTERPRISE = HEAD + '''
from google.adk.tools import enterprise_web_search

root_agent = Agent(name="helper", model="gemini-2.5-flash", instruction="Search.", tools=[enterprise_web_search])
''' + RUN


def test_enterprise_web_search_goes_to_gemini_on_vertex_ai_as_on_google_adk(vertex: StubServer) -> None:
    """The Gemini API refuses it (test_gemini_builtin_tools); Vertex AI takes it."""
    theirs = both(ENTERPRISE, [GROUNDED], vertex, token=True)
    assert theirs["requests"][0]["builtin"] == [{"enterpriseWebSearch": {}}]
