"""google-adk's public names, and which resolve here at the same path (issue 52).

``python tests/google_adk_name_table.py`` writes docs/google-adk.md: for every public
module of google-adk (no ``_``-prefixed part) that imports with the dev dependencies,
each public name (its ``__all__``, else the classes and functions it defines), whether
``adk_actors.<same path>`` has it, and, for each area of google-adk, why what is missing
is missing. ``tests/test_google_adk_name_table.py`` checks that the page is current.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import os
import pkgutil
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

__all__ = ["AREA_REASONS", "GoogleNames", "Row", "cached_google_names", "google_adk_version", "google_key", "google_names",
           "name_rows", "page"]

PAGE = Path(__file__).resolve().parents[1] / "docs" / "google-adk.md"

#: Why an area's names are missing here (the area: google-adk's first package level).
AREA_REASONS: dict[str, str] = {
    "(root)": "the package's own names",
    "a2a": "A2A is here as `adk_actors.a2a` (a2a-sdk 1.x); at google-adk's paths (issue 52): `RemoteA2aAgent` with `A2aRemoteAgentConfig` (request and card interceptors, metadata, the session id as the context id), `a2a.agent.utils`, `a2a.utils` (`to_a2a` on an in-process runner, `AgentCardBuilder`), `a2a.executor` (`A2aAgentExecutor` on our RunnerExecutor, its config with interceptors only, `ExecutorContext`, `executor.utils`, `include_artifacts_in_a2a_event_interceptor`, `TaskResultAggregator`), google-adk's `a2a.converters` (parts, events both ways, long-running calls, requests; on our parts and events, which carry no A2A part metadata, `tool_call`/`tool_response` or media-control fields) and `a2a.logs.log_utils` (log text in our words); our server and `RemoteA2aAgent` keep their own A2A shapes, sharing the part rules",
    "agents": "here (issue 52): the agent kinds, `Context`, `InvocationContext`, `LiveRequestQueue`, `RunConfig`, the agent-state and live data types, the (deprecated) YAML config classes and `config_agent_utils.from_config` on the one loader `root_agent.yaml` uses; `BaseAgent.from_config`/`_parse_config` and a custom `agent_class` in a file; `McpInstructionProvider` (an MCP prompt as the instruction, its arguments from the state, google-adk's error kinds); `LangGraphAgent` on the `langgraph` extra (issue 56); not built: `ManagedAgent` (google-adk's Managed Agents API)",
    "apps": "here (issue 52): `App` with `events_compaction_config` (google-adk's sliding window after an invocation, token threshold before a model request and after an invocation, `BaseEventsSummarizer` / `LlmEventSummarizer`; in the in-process Runner and a host's runs, the summary kept in the session and not streamed, as google-adk's Runner) and `resumability_config` (accepted and kept: durable runs here are `Runner.resume` and `App(resume_interrupted=...)`; google-adk's agent-state checkpoint events are not made)",
    "artifacts": "the services are here (issue 52; `GcsArtifactService` refused when made: no Google Cloud client), with `artifact_util`'s `artifact://` references (built, parsed, checked on save and followed on load by `InMemoryArtifactService`, as google-adk's); `FileArtifactVersion` and version metadata on every service, a host's artifacts actor too",
    "auth": "here (issue 56): `AuthConfig`, `AuthHandler`, the credential kinds and google-adk's `adk_request_credential` round trip (`tool_context.request_credential` / `get_auth_response`, PKCE for a public client); and `CredentialManager` (its `get_auth_credential` and `request_credential`, the credential kept by the host's credential service); google-adk's auth providers, exchanger and refresher registries and OAuth2 discovery; not built: google-adk's credential services (credentials are kept here by the host's credential service: `tool_context.get_credential`)",
    "cli": "google-adk's CLI internals; the CLI here is `adk-actors` (web, api_server, run, eval); here (issue 52): `cli.fast_api.get_fast_api_app`, the deploy docs' `main.py` shape, on a host started for the app's lifetime (parameters it cannot honour refused by name); `cli.service_registry` (`ServiceRegistry`, `get_service_registry`, `load_services_module`: custom session, artifact and memory schemes in code or a `services.py` / `services.yaml`, used by `adk-actors run AGENT_DIR` and `cli.utils.service_factory`'s `create_*_service_from_options`; a host refuses a registered scheme by name: its store actors cannot use a service made in the calling process), `cli.utils.agent_loader.AgentLoader` / `base_agent_loader.BaseAgentLoader` on the one agent-folder loader and `cli.utils.envs.load_dotenv_for_agent` on its `.env` rule; `cli.cli` (`run_cli`, `run_once_cli`, `run_input_file`, `run_interactively`, `InputFile`: `adk run`'s modes as functions, driving `adk-actors run AGENT_DIR`: the same transcript, `--replay` files and saved sessions), `cli.cli_eval` (`get_app_or_root_agent`, `get_root_agent`, `try_get_reset_func` on the one agent-folder loader, `parse_and_get_evals_to_run` on `adk-actors eval`'s reading, `pretty_print_eval_result` in `adk-actors eval`'s wording, `get_eval_sets_manager` local only), `cli.agent_graph` (`build_graph`, `get_agent_graph` on the console's agent drawing, a `graphviz` graph when that package is installed), `cli.agent_test_runner`'s helpers (`MockModel` on `ScriptedModel`, `InMemoryRunner`, `get_test_files`, `normalize_events`, `make_sort_key`; not built: `test_agent_replay` / `rebuild_tests`, which compare google-adk's own event fields such as node paths with run ids); `cli.api_server` / `cli.dev_server`: the HTTP API's request and answer models, validated and dumped as google-adk's (`CreateSessionRequest`, `UpdateMemoryRequest`, `UpdateSessionRequest`, `AddSessionToEvalSetRequest`, `CreateEvalSetRequest` are the host's own route bodies), `ApiServer` / `DevServer` (`get_fast_api_app()` on a host for an `AgentLoader` of `agents_dir` and store URIs; service objects, observer and span-processor callbacks refused by name; no `runner_dict` / `get_runner_async`), the span exporters `ApiServerSpanExporter` and `InMemoryExporter`; not built: the click options, triggers (Pub/Sub, Eventarc), deploy, conformance, the built-in agent builder, local-storage and GCS helpers",
    "code_executors": "here: the local, sandboxed and built-in executors and `CodeExecutorContext` (issue 56); not built: the container, GKE, Vertex AI and Agent Engine sandbox executors (Google Cloud and Docker)",
    "errors": "here: `StaleSessionError` (raised by the in-process database session services, as google-adk's; a host's sessions have one writer and never raise it) and `ToolExecutionError` / `ToolErrorType` (google-adk's messages and labels; as in google-adk, no special tool response comes of them)",
    "evaluation": "`AgentEvaluator` and the eval sets, configs and metrics at google-adk's paths (`adk_actors.evaluation`, on `adk_actors.evals`); custom metrics (`custom_metrics`) and the judge-scored multi-turn metrics; `LocalEvalService` and its request and result types, the eval-set and result managers (local, in memory), the invocation and judge helpers, the built-in and rubric-based evaluator classes and the user simulators (issue 56); the extension points: `Evaluator`, `LlmAsJudge`, `RubricBasedEvaluator` and its parser/aggregator/summarizer, the metric evaluator registry (the one the eval runs consult) and its info providers, personas, the simulator's prompts and `register_user_simulator` (issues 52/56); not built: the GCS managers, the Vertex-scored metrics (`safety_v1`, `response_evaluation_score`, `multi_turn_*_v1`: a typed error says so; their evaluator classes are not here), the audio simulator",
    "events": "here (issue 52): `Event`, `EventActions`, `EventCompaction` (google-adk's summary shape; a store keeping events as JSON keeps only our `Compaction` fields of it), `RequestInput`, `UiWidget` (the model only: `EventActions.render_ui_widgets` is not built)",
    "environment": "google-adk's execution environments (experimental): not built",
    "examples": "here (issue 52): `Example`, `BaseExampleProvider` and `example_util` (`build_example_si`, `convert_examples_to_text`, google-adk's text for the same examples, tool results as JSON); not built: `VertexAiExampleStore` (Google Cloud)",
    "features": "google-adk's experimental feature flags: nothing here to switch",
    "flows": "google-adk's request pipeline; the compiler (`adk_actors.compiler`, seeds 000/003) does this here",
    "integrations": "here: the OpenAI integration (`OpenAILlm`, `OpenAIResponsesLlm`, `AzureOpenAIResponsesLlm`, issue 56); `LangchainTool` / `LangchainToolConfig` and `CrewaiTool` / `CrewaiToolConfig` on the `langchain` / `crewai` extras (issue 56; crewai itself is not a dev dependency: its 1.x pins mcp<2 and pydantic<2.13, so `CrewaiTool` is tested on a stand-in of its `BaseTool`); `GCPSkillRegistry` refused when made; the Google Cloud integrations (BigQuery, Application Integration, ...): out of scope",
    "labs": "google-adk's experiments: out of scope",
    "live": "`LiveRequestQueue` and `LiveRequest` are here (the same classes as `adk_actors.agents`); live runs are `Runner.run_live` and `/run_live`; not built: google-adk's cascade pipeline (`CascadeLive`, its speech-to-text and text-to-speech stages and their events)",
    "memory": "the services are here (issue 52; the Vertex AI ones refused when made: no Google Cloud client)",
    "models": "models are `adk_actors.models` (Gemini, Anthropic, OpenAI wire formats; `Gemini` on the Gemini API and Vertex AI, `AnthropicLlm`, `Claude`, `Gemma`, `OpenAILlm`, `LiteLlm` on the `litellm` extra, `ApigeeLlm` (Gemini API, Vertex AI and Chat Completions behind the proxy), `Gemma3Ollama` on the `litellm` extra, `BaseLlm`, `LLMRegistry`, context caching through `ContextCacheConfig`); here (issue 56): `apigee_llm.CompletionsHTTPClient` (Chat Completions behind the proxy on our HTTP model loop, our typed errors) and `ChatCompletionsResponseHandler` (google-adk's parsed answers, whole and streamed; logprobs and custom metadata kept on the handler, not on our `LlmResponse`), `lite_llm`'s stream-piece classes (`TextChunk`, `FunctionChunk`, `ReasoningChunk`, `UsageMetadataChunk`, `ChatCompletionFileUrlObject`: the data classes; our `LiteLlm` does not make them), `gemma_llm.GemmaFunctionCallingMixin` (Gemma 3's shim as in-place steps); not built: the Interactions API (`interactions_utils`: Google's hosted Interactions API, which `Gemini(use_interactions_api=True)` refuses with ModelError `unsupported`), the live connection classes (`BaseLlmConnection`, `GeminiLlmConnection`: a live model here gives a `LiveConnection` from `connect()`, a different protocol the live engine drives), `GeminiContextCacheManager` (google.genai client internals; context caching is the Gemini connector's own)",
    "optimization": "google-adk's prompt optimization (experimental): not built",
    "planners": "here (issue 52): `BasePlanner`, `BuiltInPlanner` (its thinking config into the request) and `PlanReActPlanner` (its instruction in our words, its answer processing as google-adk's), at google-adk's module paths; a planner's instruction and answer processing run in the flow where google-adk runs them (not yet in live runs)",
    "platform": "google-adk's platform shims (thread pools, time): nothing to mirror",
    "plugins": "here: `BasePlugin`, `PluginManager` (google-adk's registry and `run_*_callback` methods on the engine's one plugin pipeline: `Runner.plugin_manager`, `ctx.plugin_manager`, in process and in a host's runs) and the built-in logging, debug-logging, reflect-and-retry (tools and model), tool-call integrity, force-escalation, model-consult observability, multimodal tool results, global-instruction, save-files-as-artifacts and context-filter plugins (issue 52) and the auto-tracing plugin (`AutoTracingPlugin`, `auto_tracing_helpers`: a span per call of the agent's own modules' functions, in the process that runs the agent's code)",
    "runners": "here (issue 52): `Runner` and `InMemoryRunner`, in process on the same engine as a host; a host's client is `adk_actors.runtime.Runner`",
    "sessions": "the session services are here (issue 52; `VertexAiSessionService` refused when made: no Google Cloud client)",
    "skills": "here (issue 52): Agent Skills (the models, the `SKILL.md` folder loaders and their async forms, `SkillRegistry`, `format_skills_as_xml`) and `tools.skill_toolset` (`SkillToolset` and its six tools, its discovery and lifecycle modes; a skill's scripts run through a code executor, never in the run worker); refused when called: the Google Cloud Storage loaders",
    "telemetry": "here (issue 52): `adk_actors.telemetry` (the engine's telemetry events: `attach`, `span`, `in_session`; `adk_actors.otel` turns them into OpenTelemetry spans) is a package at google-adk's paths: its tracing helpers for user code (`telemetry.tracing`: `tracer` of google-adk's `gcp.vertex.agent` scope, `trace_tool_call`, `trace_merged_tool_calls`, `trace_send_data`, `trace_call_llm`, `use_inference_span`, `trace_inference_result` and the rest, the same span names and attributes as google-adk's under its schema 2 and 1), `TelemetryConfig` / `ContentCapturingMode`, `setup` (`OTelHooks`, `maybe_set_otel_providers`), `node_tracing` (`start_as_current_node_span`), `SqliteSpanExporter` (google-adk's table); not built: google-adk's GenAI log records and the messages its experimental conventions put on the inference span; refused when called: `google_cloud`'s exporters (no Google Cloud client)",
    "tools": "here: function, agent, long-running, memory, artifact and Gemini's built-in tools, MCP toolsets, `OpenAPIToolset`/`RestApiTool` (API key, bearer and basic auth; OAuth2 and OpenID Connect by client credentials, an authorization code or a refresh token; a user's login through `adk_request_credential` with google-adk's `ToolAuthHandler` refresh and 401 recovery; the OpenID helpers, `OAuth2CredentialExchanger` and `AutoAuthCredentialExchanger`; a service account's access or ID token through `ServiceAccountCredentialExchanger`, with google-auth); model consult (`ModelConsultTool`, its context config, `ForceEscalationPlugin` and observability plugin), `LoadMcpResourceTool`, `ExecuteBashTool` with `BashToolPolicy` (its command gets an empty stdin, where google-adk's reads the server's: see its docstring), `request_input`, `skill_toolset` (see `skills`), the deprecated `langchain_tool` / `crewai_tool` paths (see `integrations`), computer use (`ComputerUseToolset` over a user's `BaseComputer`), `BaseAuthenticatedTool` / `AuthenticatedFunctionTool`, `AgentToolConfig`, the OpenAPI parser's `OperationParser` and `common` names, the environment simulator (`environment_simulation`: injected errors, responses and latency, and results a model makes up from a tool's declaration, as a plugin or a `before_tool_callback`; its prompts in our own words) and its deprecated `agent_simulator` paths (issue 52); Gemini's Vertex AI Search (`VertexAiSearchTool`: the `retrieval.vertex_ai_search` entry, Vertex AI only; a subclass may build the settings per request) and the retrieval tools (`tools.retrieval`: `BaseRetrievalTool`, `LlamaIndexRetrieval` over any retriever, `VertexAiRagRetrieval` as Gemini's `retrieval.vertex_rag_store` entry (on another model refused: no Vertex AI RAG client), `FilesRetrieval` on llama-index, an ImportError naming it without) (issue 56); refused when made: `DiscoveryEngineSearchTool` (Google Cloud's Discovery Engine client; `SearchResultMode` is here); MCP progress callbacks (`ProgressFnT`, `ProgressCallbackFactory`; in process, and on a host relayed from the toolset's actor to the run worker) and google-adk's SDK session helpers `MCPSessionManager`, `SessionContext`, `create_mcp_http_client`, `CheckableMcpHttpClientFactory` (on the `mcp` SDK's `Client`, for code that opens a session itself; no `httpx_client_factory` field or idle sweep; our toolsets keep their own connections) (issue 52); not built: `RemoteMcpServer` (google-adk's Managed Agents API); not built yet (issue 56): Google Cloud tools",
    "utils": "here (issue 52): `instructions_utils.inject_session_state` (the compiler's one template rule, for a user's own instruction provider; async providers are awaited before the request is compiled), the content, model-name, YAML, environment and feature-decorator helpers, and the internals user code imports: `agent_info`, `context_utils.find_context_parameter`, `output_schema_utils.can_use_output_schema_with_tools`, `streaming_utils.StreamingResponseAggregator` (google-genai chunks into our `LlmResponse`, google-adk's progressive mode), `cache_performance_analyzer.CachePerformanceAnalyzer`, `variant_utils`, `vertex_ai_utils.get_express_mode_api_key`",
    "workflow": "graph workflows are `adk_actors.workflow` (issue 55), `RequestInput` at `adk_actors.events`, with `node`, `Node`, parallel workers and `ctx.run_node`; every public name is here",
}


@dataclass(frozen=True)
class Row:
    module: str  # google-adk's module
    name: str
    here: bool  # adk_actors.<same path> has it

    @property
    def area(self) -> str:
        parts = self.module.split(".")
        return parts[2] if len(parts) > 2 else "(root)"


def _public_names(module: object, module_name: str) -> list[str]:
    """A module's ``__all__``, else the classes and functions it defines itself."""
    declared = getattr(module, "__all__", None)
    if declared is not None:
        return sorted({str(n) for n in declared})
    return sorted(name for name, value in vars(module).items()
                  if not name.startswith("_") and (inspect.isclass(value) or inspect.isfunction(value))
                  and getattr(value, "__module__", None) == module_name)


def _has(module_name: str, name: str) -> bool:
    try:
        return hasattr(importlib.import_module(module_name), name)
    except Exception:
        return False


def google_adk_version() -> str:
    from importlib.metadata import version

    return version("google-adk")


#: google-adk's side of the table: each importable public module with its public
#: names, in walk order; and the public modules that do not import.
GoogleNames = tuple[list[tuple[str, list[str]]], list[str]]


def google_names() -> GoogleNames:
    """google-adk's public modules (no ``_``-prefixed part below ``google.adk``), each
    imported in turn: those that import, with their public names; those that raise, by
    name. Depends only on what is installed (see :func:`google_key`)."""
    import google.adk

    modules: list[tuple[str, list[str]]] = []
    unimported: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for info in pkgutil.walk_packages(google.adk.__path__, "google.adk."):
            if any(part.startswith("_") for part in info.name.split(".")[2:]):
                continue
            try:
                module = importlib.import_module(info.name)
            except Exception:
                unimported.append(info.name)
                continue
            modules.append((info.name, _public_names(module, info.name)))
    return modules, sorted(unimported)


def google_key() -> str:
    """What :func:`google_names` depends on, hashed: google-adk's version and its
    installed files' RECORD (each file's hash), every installed distribution's name and
    version (a module imports or not with them), the Python version, and the code of
    :func:`google_names` and :func:`_public_names`.

    The RECORD's lines for files outside site-packages (``../../../bin/adk``: the
    console script, whose first line names the Python of the environment it was
    installed in) are left out: no module imports them, and with them every new
    environment (CI makes one per run) had a key of its own, so the names were never
    found kept there."""
    from importlib.metadata import distribution, distributions

    adk = distribution("google-adk")
    installed = sorted(f"{d.metadata['Name']}=={d.version}" for d in distributions())
    record = [line for line in (adk.read_text("RECORD") or "").splitlines() if not line.startswith("../")]
    code = inspect.getsource(google_names) + inspect.getsource(_public_names)
    text = json.dumps([adk.version, record, installed, sys.version, code])
    return hashlib.sha256(text.encode()).hexdigest()


def cached_google_names(folder: Path) -> tuple[GoogleNames, bool]:
    """:func:`google_names`, kept in ``folder`` under :func:`google_key` (importing every
    module of google-adk takes ~30 s; what it finds changes only with what is
    installed). In order: the file for today's key is read if it is there and whole;
    otherwise the names are found again and written (to a temporary file renamed into
    place, so a reader never sees half of one; a folder that cannot be written keeps
    nothing). Also says whether the file was used."""
    path = folder / f"google-adk-names-{google_key()}.json"
    try:
        found = json.loads(path.read_text())
        return ([(str(m), [str(n) for n in names]) for m, names in found["modules"]],
                [str(m) for m in found["unimported"]]), True
    except (OSError, ValueError, KeyError, TypeError):
        pass
    modules, unimported = google_names()
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        partial.write_text(json.dumps({"modules": modules, "unimported": unimported}))
        partial.replace(path)
    except OSError:  # not kept (a read-only or full folder): found again next time
        partial.unlink(missing_ok=True)
    return (modules, unimported), False


def name_rows(google: GoogleNames | None = None) -> tuple[list[Row], list[str]]:
    """Every public name of google-adk's importable public modules (``google``, else
    found now by :func:`google_names`), each with whether it resolves here (always
    looked up now); and the public modules that do not import with the dev dependencies."""
    modules, unimported = google if google is not None else google_names()
    rows: list[Row] = []
    for module_name, names in modules:
        ours = "adk_actors" + module_name[len("google.adk"):]
        rows.extend(Row(module_name, name, _has(ours, name)) for name in names)
    return rows, unimported


def page(rows: list[Row], unimported: list[str]) -> str:
    """docs/google-adk.md's text."""
    areas = sorted({row.area for row in rows})
    lines = ["# google-adk's public names here", "",
             "Generated by `python tests/google_adk_name_table.py` (checked current by",
             f"`tests/test_google_adk_name_table.py`): every public name of google-adk {google_adk_version()}'s",
             "public modules, and whether `adk_actors` has it at the same path (`google.adk`",
             "replaced by `adk_actors`). A name here at another path counts as missing.", "",
             f"{sum(r.here for r in rows)} of {len(rows)} names resolve at the same path.", "",
             "| area | here | of | why the rest is missing |", "|---|---|---|---|"]
    for area in areas:
        mine = [r for r in rows if r.area == area]
        lines.append(f"| `{area}` | {sum(r.here for r in mine)} | {len(mine)} | "
                     f"{AREA_REASONS.get(area, 'not built yet (issue 52)')} |")
    lines += ["", "## Name by name", ""]
    for area in areas:
        lines += [f"### `{area}`", "", "| module | name | here |", "|---|---|---|"]
        lines += [f"| `{r.module}` | `{r.name}` | {'yes' if r.here else 'no'} |" for r in rows if r.area == area]
        lines.append("")
    lines += ["## Modules that do not import here", "",
              "They need packages that are not dev dependencies (Google Cloud SDKs, LangGraph, ...):", ""]
    lines += [f"- `{name}`" for name in unimported]
    return "\n".join(lines) + "\n"


def main() -> int:
    """Write the page; with ``--json``, print the rows and the modules that did not
    import instead (the test reads them from a process of their own: importing every
    module of google-adk has effects on the process that imports them). With
    ``--cache FOLDER``, google-adk's side comes from :func:`cached_google_names`;
    whether each name is here is looked up every time."""
    cached = False
    if "--cache" in sys.argv:
        google, cached = cached_google_names(Path(sys.argv[sys.argv.index("--cache") + 1]))
        rows, unimported = name_rows(google)
    else:
        rows, unimported = name_rows()
    if "--json" in sys.argv:
        print(json.dumps({"version": google_adk_version(), "unimported": unimported, "cached": cached,
                          "rows": [[r.module, r.name, r.here] for r in rows]}))
        return 0
    PAGE.write_text(page(rows, unimported))
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
